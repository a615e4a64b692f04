"""Sentence spans that keep their offsets into the source text (SPEC §1, "Claims").

Rules, in order:

1. A line break always ends a sentence: notes are full of one-item-per-line lists
   (``"PMH: Asthma"`` / ``"DH: Inhalers"``) and headings without a full stop.
2. Inside a line, a line that has no sentence end followed by more text is one sentence
   (fast path: no segmenter call). Otherwise ``pysbd`` (rule-based, keeps abbreviations such as
   ``Dr.``, ``mg.``, ``b.i.d.``, ``e.g.`` and decimals ``2.5 mg`` / ``120/80`` intact) cuts it,
   and two of its cuts are undone: a cut inside a token (``"?UTI"``) and a cut after a title
   written ASR style (``"dr . smith"``).
3. Each span is trimmed of surrounding whitespace and of a leading bullet (``•``, ``-``, ``*``,
   ``1.``, ``2)``, ``(a)``); spans with no letter or digit are dropped.
4. Bounds (:mod:`clinjudge.text.bounds`): pysbd reads at most
   :data:`~clinjudge.text.bounds.MAX_SEGMENTER_ENDS` sentence ends of a line at a time (a longer
   line is cut first after a sentence end that follows a word of three letters or more — never
   after ``Dr.``, ``e.g.`` or ``No.`` — else at a blank), as its cost grows with the square of
   what it reads. A sentence longer than :data:`~clinjudge.text.bounds.MAX_SENTENCE_CHARS` (a
   line with no sentence end) is given as windows of at most that many characters cut at a
   blank. No line of the bundled sets is that long, so neither cut changes their sentences.

``text[span.start:span.end] == span.text`` always holds.
"""

from __future__ import annotations

import re

import pysbd

from clinjudge.text.bounds import (
    MAX_SEGMENTER_CHARS,
    MAX_SEGMENTER_ENDS,
    MAX_SENTENCE_CHARS,
    windows,
)
from clinjudge.types import Span

_SEGMENTER = pysbd.Segmenter(language="en", clean=False)

_LINE_RE = re.compile(r"[^\n]+")
# A sentence end followed by more text on the same line: only then is the segmenter needed.
_INNER_BOUNDARY_RE = re.compile(r"[.!?…][\"')\]]*\s+\S")
_BULLET_RE = re.compile(
    r"(?:[•·‣◦▪●■►➢✓\-–—*>]+|\(?\d{1,2}[.)]|\([a-zA-Z]\)|[a-z]\))(?=\s)\s*"
    r"|[•·‣◦▪●■►➢✓]\s*"
)
_TITLE_END_RE = re.compile(r"\b(?:dr|mr|mrs|ms|prof|st|vs)\s?\.$", re.IGNORECASE)
_HAS_CONTENT_RE = re.compile(r"[^\W_]")
#: Where a long line may be cut before pysbd reads it: after a sentence end that follows a word
#: of three letters or more, written or spoken (``"pain."``, ASR ``"pain ."``), and its blanks.
_SAFE_END_RE = re.compile(r"(?:(?<=[^\W\d_]{3}[.!?])|(?<=[^\W\d_]{3} [.!?]))[\"')\]]*\s+(?=\S)")


def _pysbd_sentences(line: str) -> list[str]:
    """pysbd's sentences of one line, from its processor directly.

    ``Segmenter.segment`` would also map each sentence back to the text with a regex built from
    it: that is done here by ``str.find``, and its one-off patterns flood ``re``'s cache, so
    pysbd's own patterns are compiled again and again (1.8x slower). ``segment`` also stores the
    text on the shared segmenter, so it is not thread-safe; a new processor per call is.
    """
    return _SEGMENTER.processor(line).process()


def _chunks(line: str) -> list[tuple[int, int]]:
    """``line`` in pieces of at most ``MAX_SEGMENTER_ENDS`` sentence ends and
    ``MAX_SEGMENTER_CHARS`` characters, each ending after the last safe sentence end inside it
    (rule 4), else at its last blank."""
    pieces: list[tuple[int, int]] = []
    start = 0
    while (limit := _chunk_limit(line, start)) < len(line):
        cut = None
        for m in _SAFE_END_RE.finditer(line, start + 1, limit):
            cut = m.end()
        if cut is None:
            cut = windows(line, start, limit + 1, limit - start)[0][1]
        pieces.append((start, cut))
        start = cut
    pieces.append((start, len(line)))
    return pieces


def _chunk_limit(line: str, start: int) -> int:
    """Where the longest piece of ``line`` from ``start`` that pysbd may read at once ends."""
    stop = min(len(line), start + MAX_SEGMENTER_CHARS)
    for n, m in enumerate(_INNER_BOUNDARY_RE.finditer(line, start, stop)):
        if n == MAX_SEGMENTER_ENDS:
            return m.start()
    return stop if stop < len(line) else len(line)


def _segment_line(line: str) -> list[tuple[int, int]]:
    """Sentence ``(start, end)`` offsets inside one line (no newline in ``line``)."""
    if not _INNER_BOUNDARY_RE.search(line):
        return [(0, len(line))]
    if _chunk_limit(line, 0) < len(line):
        return [(a + s, a + e) for a, b in _chunks(line) for s, e in _segment_line(line[a:b])]
    pieces: list[list[int]] = []
    cursor = 0
    for seg in _pysbd_sentences(line):
        core = seg.strip()
        if not core:
            continue
        i = line.find(core, cursor)
        if i < 0:  # the segmenter altered the text: keep the line whole
            return [(0, len(line))]
        end = i + len(core)
        if pieces and (
            not line[i - 1].isspace() or _TITLE_END_RE.search(line[pieces[-1][0] : pieces[-1][1]])
        ):
            pieces[-1][1] = end
        else:
            pieces.append([i, end])
        cursor = end
    return [(s, e) for s, e in pieces]


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` past surrounding whitespace and one leading bullet marker."""
    while start < end and text[start].isspace():
        start += 1
    m = _BULLET_RE.match(text, start, end)
    if m:
        start = m.end()
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _bounded(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``[(start, end)]``, or its windows without their blanks when it is longer than
    ``MAX_SENTENCE_CHARS`` (rule 4)."""
    if end - start <= MAX_SENTENCE_CHARS:
        return [(start, end)]
    out = []
    for a, b in windows(text, start, end):
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        out.append((a, b))
    return out


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """Sentences of ``text[start:end]`` as spans with offsets into ``text`` (module docstring)."""
    end = len(text) if end is None else end
    spans: list[Span] = []
    for line in _LINE_RE.finditer(text, start, end):
        base = line.start()
        for s, e in _segment_line(line.group()):
            s, e = trim_span(text, base + s, base + e)
            for a, b in _bounded(text, s, e):
                if b > a and _HAS_CONTENT_RE.search(text, a, b):
                    spans.append(Span(start=a, end=b, text=text[a:b]))
    return spans
