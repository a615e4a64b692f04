"""What the visit corrected (issue 36, item 6): an error that keeps the statement the visit
later took back, and its legitimate counterpart that restates the corrected fact.

The corrections are read from the transcript by :mod:`clinjudge.grounding.corrections` (a value
corrected, a denial taken back, a habit given up), the same reading the judge uses.

* ``superseded_statement`` (error) — the note sentence that carries the later fact is edited
  to carry the earlier one: a report of the finding becomes a denial ("She reports strain" →
  "She denies strain"), the note's value becomes the earlier value in the transcript's words,
  a given-up habit becomes current ("She quit smoking 30 years ago." → "She continues to
  smoke.", "former smoker" → "current smoker").
* ``correction_rewording`` (rewrite) — the same note sentence says the later fact in other
  words: "reports" ↔ "endorses", "twice a day" ↔ "twice daily", "2 months" ↔ "two months",
  "quit" ↔ "stopped".

A note with no such sentence, or a visit with no correction, gives no edit.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from clinjudge.grounding.corrections import Correction
from clinjudge.inject.material import NoteMaterial
from clinjudge.inject.time_shift import respelled_number
from clinjudge.inject.types import Edit, Perturber, match_case
from clinjudge.text.negation import is_negated
from clinjudge.text.normalize import content_tokens
from clinjudge.text.quantities import Quantity, extract_quantities, quantities_agree

#: A note's report of a finding, and the words the rewrite and the error put in its place.
_REPORT = re.compile(r"\b(?P<v>reports|endorses|complains of|notes)\s+(?:(?:a|an|some)\s+)?", re.I)
_REWORD = {
    "reports": "endorses",
    "endorses": "reports",
    "complains of": "reports",
    "notes": "reports",
}
_HABIT_NOTE = re.compile(
    r"\b(?P<v>quit|stopped)\s+smoking\b[^.;,\n]*|\b(?P<f>former)\s+(?:cigarette\s+)?smoker\b", re.I
)
#: Other words for a frequency, both ways.
_FREQUENCY_WORDS = {
    "once a day": "once daily",
    "once daily": "once a day",
    "twice a day": "twice daily",
    "twice daily": "twice a day",
    "three times a day": "three times daily",
    "three times daily": "three times a day",
}
_FREQUENCY_REWORDED = [
    (re.compile(rf"\b{old}\b", re.I), new) for old, new in _FREQUENCY_WORDS.items()
]


def _subjective(src: NoteMaterial):
    for s in src.sentences:
        section = src.section_at(s.start)
        if section is not None and section.soap == "subjective":
            yield s


def _denial_sites(src: NoteMaterial) -> Iterator[tuple[int, int, str, str]]:
    """``(start, end, cue, finding)`` of note reports of a finding the patient denied and then
    affirmed; offsets into the note."""
    taken_back = set(src.facts.corrections.taken_back)
    if not taken_back:
        return
    for s in _subjective(src):
        for cue in _REPORT.finditer(s.text):
            rest = s.text[cue.end() :]
            found = next(iter(src.kb.concepts_in(rest)), None)
            if found is None or found.start > 0 or not set(found.canonical) & taken_back:
                continue
            if is_negated(rest, found.start, found.end):
                continue
            yield s.start + cue.start("v"), s.start + cue.end("v"), cue.group("v"), found.surface


def _value_sites(src: NoteMaterial) -> Iterator[tuple[Quantity, Correction, int]]:
    """``(note quantity, correction, sentence start)``: a note value equal to a corrected
    value's later form, in a sentence that shares a word with where it was corrected."""
    corrections = src.facts.corrections.values
    if not corrections:
        return
    for s in src.sentences:
        words = set(content_tokens(s.text))
        for q in extract_quantities(s.text):
            for c in corrections:
                later = quantities_agree(q, c.later) and quantities_agree(q, c.earlier) is False
                if later and words & (c.words - set(content_tokens(q.text))):
                    yield q, c, s.start
                    break


def _habit_sites(src: NoteMaterial) -> Iterator[tuple[int, int, re.Match[str]]]:
    if src.facts.corrections.habit_given_up is None:
        return
    for s in _subjective(src):
        for m in _HABIT_NOTE.finditer(s.text):
            if not re.search(r"\b(?:and|for|but|until)\b", m.group(), re.I):
                yield s.start, s.end, m


def find_superseded(src: NoteMaterial) -> list[Edit]:
    edits = []
    for a, b, verb, finding in _denial_sites(src):
        why = f"'{verb} {finding}': the patient first denied it, then took the denial back"
        edits.append(Edit(a, b, match_case(verb, "denies"), why))
    for q, c, start in _value_sites(src):
        why = f"'{q.text}' is the corrected value; the visit said '{c.earlier.text}' first"
        edits.append(Edit(start + q.start, start + q.end, c.earlier.text, why))
    for start, _end, m in _habit_sites(src):
        why = "the patient gave up smoking; the note now says it goes on"
        if m.group("f"):
            word = match_case(m.group("f"), "current")
            edits.append(Edit(start + m.start("f"), start + m.end("f"), word, why))
        else:
            new = match_case(m.group(), "continues to smoke")
            edits.append(Edit(start + m.start(), start + m.end(), new, why))
    return edits


def _reworded_value(q: Quantity) -> tuple[int, int, str] | None:
    for rx, new in _FREQUENCY_REWORDED:
        m = rx.search(q.text)
        if m:
            return m.start(), m.end(), match_case(m.group(), new)
    if q.kind == "duration":
        return respelled_number(q.text)
    m = re.search(r"(?<=\d)\s*mg\b", q.text)
    if m:
        return m.start(), m.end(), " milligrams"
    return None


def find_correction_rewordings(src: NoteMaterial) -> list[Edit]:
    edits = []
    for a, b, verb, finding in _denial_sites(src):
        new = match_case(verb, _REWORD[verb.lower()])
        edits.append(Edit(a, b, new, f"'{verb} {finding}' said '{new}': the corrected fact"))
    for q, _c, start in _value_sites(src):
        found = _reworded_value(q)
        if found:
            x, y, new = found
            why = f"'{q.text}' written with '{new.strip()}': the corrected value"
            edits.append(Edit(start + q.start + x, start + q.start + y, new, why))
    for start, _end, m in _habit_sites(src):
        if m.group("v"):
            new = match_case(m.group("v"), "stopped" if m.group("v").lower() == "quit" else "quit")
            why = f"'{m.group('v')} smoking' said '{new} smoking': the habit stays given up"
            edits.append(Edit(start + m.start("v"), start + m.end("v"), new, why))
    return edits


superseded_statement = Perturber(
    "superseded_statement",
    "error",
    find_superseded,
    "the statement the visit later corrected kept in place of the correction",
)
correction_rewording = Perturber(
    "correction_rewording",
    "rewrite",
    find_correction_rewordings,
    "the corrected fact said in other words, keeping the later value",
)
