"""Length bounds of the text layer (issue 35): no pattern, scan or lookup reads more text than a
reading needs, so a note of one 1 MB line costs what its words cost, not the square of them.

* :data:`MAX_SENTENCE_CHARS` — a sentence longer than this (a line with no sentence end, a
  pasted blob) is read in windows of at most this many characters cut at a blank
  (:func:`windows`): :func:`clinjudge.text.sentences.split_sentences` gives each window as a
  sentence, and the negation scan reads a longer text handed to it directly the same way. The
  longest line of the bundled evaluation sets has 4,945 characters.
* :data:`MAX_SEGMENTER_ENDS`, :data:`MAX_SEGMENTER_CHARS` — pysbd reads at most this many
  sentence ends and characters of a line at a time (a longer line is cut first, after a
  sentence end): its cost grows with the square of what it reads (10 kB of ``"1. 2. "`` take
  7 s, 40 kB 112 s). A cut falls only after a sentence end that follows a word of three
  letters or more, where pysbd cuts too; no line of the bundled sets is cut (their longest has
  4,945 characters and few sentence ends).
* :data:`MAX_WORD_CHARS` — a run of letters longer than this is no word: the lexicon scanner
  looks it up in no key (:mod:`clinjudge.knowledge.lexicon`). English words stop near 45
  letters; the longest token of any lexicon entry (a chemical name) has 66.
"""

from __future__ import annotations

MAX_SENTENCE_CHARS = 10_000
MAX_SEGMENTER_ENDS = 100
MAX_SEGMENTER_CHARS = 10_000
MAX_WORD_CHARS = 100
_BLANKS = (" ", "\t", "\u00a0")


def windows(
    text: str, start: int = 0, end: int | None = None, size: int = MAX_SENTENCE_CHARS
) -> list[tuple[int, int]]:
    """``[start, end)`` of ``text`` as consecutive pieces of at most ``size`` characters; a
    piece that stops before ``end`` ends at its last blank (at ``size`` characters when it has
    none), so a word is cut only when it alone is longer than ``size``."""
    end = len(text) if end is None else end
    pieces: list[tuple[int, int]] = []
    while end - start > size:
        cut = max(text.rfind(blank, start + 1, start + size) for blank in _BLANKS)
        cut = cut if cut > start else start + size
        pieces.append((start, cut))
        start = cut
    pieces.append((start, end))
    return pieces
