"""A mechanical omission error (SPEC §5 taxonomy "omission of a critical item"; taxonomy type
``omission``): ``critical_omission`` deletes one sentence of the note that carries a critical
item the transcript states, and that no other sentence of the note carries.

Critical items (first match wins; a sentence is looked at whole):

* **drug allergy** — the sentence names an allergy ("allergic to", "allergy", "allergies:") and
  a drug or drug class, and denies none ("no known", "NKDA", "denies", "none"); the transcript
  talks about an allergy ("allerg…") and names that drug; no other note sentence mentions an
  allergy;
* **red-flag symptom** — a subjective-section sentence asserting (not negating) a symptom of
  :data:`~clinjudge.grounding.critical_items.RED_FLAGS` (chest pain, shortness of breath,
  syncope, blood in the stool, weight loss …) that the transcript asserts (some mention not
  negated); no other note sentence names the symptom (same knowledge-base class);
* **abnormal result** — an objective-section sentence with an abnormal-result cue
  (:data:`~clinjudge.grounding.critical_items.ABNORMAL`: "elevated", "abnormal", "positive
  for", "reveals … fracture" …) and a disease or finding of the knowledge base that is not
  negated there, that the transcript mentions and that no other note sentence names;
* **return precaution** — a plan sentence telling the patient when to come back or seek care:
  a contact word ("call", "return", "contact", "go to the emergency room"), a condition ("if",
  "should", "when", "until") and a clinical turn ("worsen", "persist", "fever", "bleeding",
  "new", "symptoms" …) — "call with any questions" is none — when a transcript line has all
  three too, and no other note sentence gives one.

The edit removes the sentence with the spaces after it (a sentence alone on its line: the whole
line with its bullet), so the rest of the note is byte-identical. A sentence that is the only one
of its section, a numbered-list line, or one longer than the type's DESTROY limit (250
characters) is left alone. The pair's edited span is the empty deletion point: a hallucination
judge has nothing to flag there, so omissions are measured by the paired AUROC of a judge's
score (CEF coverage falls when a source fact goes missing), not by span detection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinjudge.grounding.critical_items import (
    ABNORMAL,
    ALLERGY,
    NO_ALLERGY,
    RED_FLAGS,
    is_precaution,
)
from clinjudge.inject.material import NoteMaterial
from clinjudge.inject.types import Edit, Perturber
from clinjudge.knowledge.concept import Mention
from clinjudge.text.sentences import split_sentences

#: Longest deletion (the taxonomy's DESTROY limit of ``omission``).
MAX_REMOVED = 250
_BULLET = re.compile(r"[ \t]*(?:[•*\-–][ \t]*)?")
_NUMBERED = re.compile(r"[ \t]*\d+[.)]")
RESULT_KINDS = frozenset({"disease", "finding"})


@dataclass(frozen=True)
class _Sentence:
    start: int
    end: int
    text: str
    soap: str


def _sentences(src: NoteMaterial) -> list[tuple[_Sentence, int]]:
    """Every body sentence of the note with the number of sentences of its section."""
    out = []
    for section in src.sections:
        spans = split_sentences(src.note, section.start, section.end)
        for sp in spans:
            out.append(
                (_Sentence(sp.start, sp.end, src.note[sp.start : sp.end], section.soap), len(spans))
            )
    return out


def _deletion(note: str, s: _Sentence) -> tuple[int, int] | None:
    """The characters to remove with sentence ``s`` (module docstring), ``None`` when it sits on
    a numbered-list line."""
    line_start = note.rfind("\n", 0, s.start) + 1
    line_end = note.find("\n", s.end)
    line_end = len(note) if line_end < 0 else line_end
    head, tail = note[line_start : s.start], note[s.end : line_end]
    if _NUMBERED.match(head):
        return None
    if _BULLET.fullmatch(head) and not tail.strip():
        return line_start, min(line_end + 1, len(note))  # the whole line with its newline
    end = s.end
    while end < line_end and note[end] in " \t":
        end += 1
    if end == line_end and s.start > line_start:  # last sentence of the line: take the space before
        start = s.start
        while start > line_start and note[start - 1] in " \t":
            start -= 1
        return start, s.end
    return s.start, end


def _classes(mentions: list[Mention], kinds: frozenset[str]) -> set[str]:
    return {c for m in mentions if set(m.kinds) & kinds for c in m.canonical}


def _elsewhere(src: NoteMaterial, s: _Sentence, classes: set[str]) -> bool:
    """Whether a note mention outside sentence ``s`` has one of ``classes``."""
    return any(
        set(m.canonical) & classes
        for m in src.note_mentions
        if not (s.start <= m.start and m.end <= s.end)
    )


def _mentions_in(src: NoteMaterial, s: _Sentence) -> list[Mention]:
    return [m for m in src.note_mentions if s.start <= m.start and m.end <= s.end]


def _allergy(src: NoteMaterial, s: _Sentence, others: list[_Sentence]) -> str | None:
    if not ALLERGY.search(s.text) or NO_ALLERGY.search(s.text):
        return None
    if not ALLERGY.search(src.transcript) or any(ALLERGY.search(o.text) for o in others):
        return None
    drugs = _classes(_mentions_in(src, s), frozenset({"drug", "drug_class"}))
    if not drugs or not drugs & src.transcript_concepts:
        return None
    return "drug allergy"


def _red_flag(src: NoteMaterial, s: _Sentence) -> str | None:
    if s.soap != "subjective":
        return None
    for m in _mentions_in(src, s):
        if m.surface.lower() not in RED_FLAGS or src.negated_in_note(m.start, m.end):
            continue
        if False in src.facts.statuses(m.canonical) and not _elsewhere(src, s, set(m.canonical)):
            return f"red-flag symptom: {m.surface}"
    return None


def _abnormal_result(src: NoteMaterial, s: _Sentence) -> str | None:
    if s.soap != "objective" or not ABNORMAL.search(s.text):
        return None
    for m in _mentions_in(src, s):
        if not set(m.kinds) & RESULT_KINDS or src.negated_in_note(m.start, m.end):
            continue
        if src.facts.has_concept(m.canonical) and not _elsewhere(src, s, set(m.canonical)):
            return f"abnormal result: {m.surface}"
    return None


def _precaution(src: NoteMaterial, s: _Sentence, others: list[_Sentence]) -> str | None:
    if s.soap != "plan" or not is_precaution(s.text):
        return None
    said = any(is_precaution(line) for line in src.transcript.splitlines())
    given = any(is_precaution(o.text) for o in others)
    return "return precaution" if said and not given else None


def _find(src: NoteMaterial) -> list[Edit]:
    sentences = _sentences(src)
    edits = []
    for s, n_in_section in sentences:
        if n_in_section < 2:
            continue
        others = [o for o, _ in sentences if o is not s]
        item = (
            _allergy(src, s, others)
            or _red_flag(src, s)
            or _abnormal_result(src, s)
            or _precaution(src, s, others)
        )
        span = _deletion(src.note, s) if item else None
        if span is None or span[1] - span[0] > MAX_REMOVED:
            continue
        edits.append(Edit(span[0], span[1], "", f"omitted the {item}: {s.text!r}"))
    return edits


critical_omission = Perturber(
    type="critical_omission",
    kind="error",
    find=_find,
    description="delete the one sentence carrying a critical item the transcript states",
)
