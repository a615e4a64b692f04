"""Doctor–patient transcripts: speaker turns and sentences with offsets into the raw text.

Three formats, detected automatically (SPEC §1, "Facts" — evidence spans point into the raw
transcript, so nothing here edits the text):

* ``aci`` — ACI-Bench / PriMock57: ``[doctor] ...``, ``[patient] ...``; any other bracket tag
  (``[patient_guest]``, ``[nurse]``) is speaker ``"other"``.
* ``mts`` — MTS-Dialog: ``Doctor: ...``, ``Patient: ...``; ``Guest_family:``,
  ``Guest_clinician:`` and their misspellings are ``"other"``.
* ``plain`` — no tags: one turn per paragraph when blank lines separate paragraphs, else one
  turn per line; speaker ``"unknown"``.

In tagged formats a line without a tag continues the previous turn. PriMock57 markup
(``<UNSURE>x</UNSURE>``, ``<UNIN/>``) stays in the text;
:func:`clinjudge.text.normalize.word_tokens` skips it.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from clinjudge.text.sentences import split_sentences, trim_span
from clinjudge.types import Speaker, Transcript, Turn

# Each tag pattern starts where a run of blanks starts (a lookbehind), so a search through a
# long run of blanks tries the run once, not once per character.
_ACI_TAG_RE = re.compile(r"(?<![ \t])[ \t]*\[([A-Za-z][\w -]{0,30})\][ \t]*:?[ \t]*")
_MTS_SPEAKERS = r"(?:doctor|dr|physician|clinician|nurse|patient|guest|gest)\w{0,20}(?:[ \t]?\d)?"
_MTS_TAG_RE = re.compile(rf"(?<![ \t])[ \t]*({_MTS_SPEAKERS})[ \t]*:[ \t]*", re.IGNORECASE)
_LINE_RE = re.compile(r"[^\n]+")
_LINE_BREAK_RE = re.compile(r"\n")
_PARAGRAPH_BREAK_RE = re.compile(r"\n[ \t]*\n")


class TranscriptSentence(BaseModel):
    """One sentence of one turn; ``start``/``end`` index the raw transcript text."""

    turn_index: int
    speaker: Speaker
    start: int
    end: int
    text: str


def speaker_of(tag: str) -> Speaker:
    """``"doctor"``/``"dr"``/``"physician"`` → doctor, ``"patient"``/``"pt"`` → patient, any other
    tag (guest, family, nurse, clinician) → other."""
    t = tag.strip().lower().replace(" ", "_")
    if t in ("doctor", "dr", "physician"):
        return "doctor"
    if t in ("patient", "pt"):
        return "patient"
    return "other"


def _lines(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _LINE_RE.finditer(text)]


def detect_format(text: str) -> str:
    """``"aci"``, ``"mts"`` or ``"plain"``: the tag style of most tagged lines; a format needs
    two tagged lines, or one on the first non-empty line."""
    lines = [text[s:e] for s, e in _lines(text) if text[s:e].strip()]
    if not lines:
        return "plain"
    n_aci = sum(1 for line in lines if _ACI_TAG_RE.match(line))
    n_mts = sum(1 for line in lines if _MTS_TAG_RE.match(line))
    first_aci, first_mts = bool(_ACI_TAG_RE.match(lines[0])), bool(_MTS_TAG_RE.match(lines[0]))
    if n_aci and n_aci >= n_mts and (n_aci >= 2 or first_aci):
        return "aci"
    if n_mts and (n_mts >= 2 or first_mts):
        return "mts"
    return "plain"


def _tagged_turns(text: str, tag_re: re.Pattern[str]) -> list[Turn]:
    turns: list[list] = []  # [speaker, start, end]
    for s, e in _lines(text):
        line = text[s:e]
        if not line.strip():
            continue
        m = tag_re.match(line)
        content_start = s + (m.end() if m else len(line) - len(line.lstrip()))
        content_end = s + len(line.rstrip())
        if m:
            turns.append([speaker_of(m.group(1)), content_start, max(content_start, content_end)])
        elif turns:
            if turns[-1][1] == turns[-1][2]:  # tag alone on its line: the utterance starts here
                turns[-1][1] = content_start
            turns[-1][2] = content_end
        else:
            turns.append(["unknown", content_start, content_end])
    kept = [t for t in turns if t[2] > t[1]]
    return [
        Turn(index=i, speaker=sp, start=a, end=b, text=text[a:b])
        for i, (sp, a, b) in enumerate(kept)
    ]


def _plain_turns(text: str) -> list[Turn]:
    sep = _PARAGRAPH_BREAK_RE if _PARAGRAPH_BREAK_RE.search(text.strip()) else _LINE_BREAK_RE
    spans, pos = [], 0
    for m in sep.finditer(text):
        spans.append(trim_span(text, pos, m.start()))
        pos = m.end()
    spans.append(trim_span(text, pos, len(text)))
    spans = [(a, b) for a, b in spans if b > a]
    return [
        Turn(index=i, speaker="unknown", start=a, end=b, text=text[a:b])
        for i, (a, b) in enumerate(spans)
    ]


def turn_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each turn of a transcript, in order: turn N, counted from 1, is the
    N-th (the numbering of ``claims.csv``'s ``evidence_turns`` and of the labelling page)."""
    return [(t.start, t.end) for t in parse_transcript(text).turns]


def parse_transcript(text: str) -> Transcript:
    """Turns of a transcript in any of the three formats (module docstring);
    ``text[t.start:t.end] == t.text`` for every turn."""
    fmt = detect_format(text)
    if fmt == "aci":
        turns = _tagged_turns(text, _ACI_TAG_RE)
    elif fmt == "mts":
        turns = _tagged_turns(text, _MTS_TAG_RE)
    else:
        turns = _plain_turns(text)
    return Transcript(text=text, turns=turns, format=fmt)


def transcript_sentences(tr: Transcript) -> list[TranscriptSentence]:
    """Every turn cut into sentences (:func:`clinjudge.text.sentences.split_sentences`), with
    offsets into ``tr.text``; markup tags may stay inside a sentence."""
    return [
        TranscriptSentence(
            turn_index=t.index, speaker=t.speaker, start=s.start, end=s.end, text=s.text
        )
        for t in tr.turns
        for s in split_sentences(tr.text, t.start, t.end)
    ]
