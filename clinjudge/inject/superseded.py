"""What the visit corrected (issue 36, item 6): an error that keeps the statement the visit
later took back, and its legitimate counterpart that restates the corrected fact.

Three readings of a correction, each from the transcript's order and speaker tags:

* **a denial taken back** — a patient's turn answers no and then, after a cue of correction
  (:func:`clinjudge.grounding.visit_reading.corrects`: "no . well , actually , i do feel a
  little strain"), affirms a finding; or a later patient turn with such a cue affirms a finding
  the patient denied before. The later statement wins: the finding is present.
* **a value corrected** — in one turn a value, a cue of correction, then a different value of
  the same kind ("the five hundred milligrams once a day no actually … twice a day"); or a
  clinician's question states a value and the patient's answer opens with a different one
  ("like 12 hours ago now ?" — "eighteen hours ."). The later value wins.
* **a habit given up** — the patient says a habit stopped ("i quit about 30 years ago", "i
  used to smoke"): the habit is past.

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
from dataclasses import dataclass

from clinjudge.grounding.transcript_facts import FINDING_KINDS
from clinjudge.grounding.visit_reading import corrects
from clinjudge.inject.material import NoteMaterial
from clinjudge.inject.time_shift import respelled_number
from clinjudge.inject.types import Edit, Perturber, match_case
from clinjudge.text.negation import answer_polarity, is_negated
from clinjudge.text.normalize import content_tokens
from clinjudge.text.quantities import Quantity, extract_quantities, quantities_agree
from clinjudge.text.transcript import parse_transcript

#: Pieces of a turn between punctuation: a correction cue is looked for piece by piece.
_PIECE = re.compile(r"[^,.;?!]+[,.;?!]*")
#: A note's report of a finding, and the words the rewrite and the error put in its place.
_REPORT = re.compile(r"\b(?P<v>reports|endorses|complains of|notes)\s+(?:(?:a|an|some)\s+)?", re.I)
_REWORD = {
    "reports": "endorses",
    "endorses": "reports",
    "complains of": "reports",
    "notes": "reports",
}
#: A habit the patient may give up, as the patient says it and as a note writes it.
_HABIT_SAID = re.compile(
    r"\b(?:quit|stopped|gave up|used to)\b[^.?!]{0,40}?\b(?:smok\w*|cigarettes?|tobacco)\b"
    r"|\b(?:smok\w*|cigarettes?|tobacco)\b[^.?!]{0,60}?\b(?:quit|stopped|gave (?:it )?up)\b",
    re.I,
)
_HABIT_NOTE = re.compile(
    r"\b(?P<v>quit|stopped)\s+smoking\b[^.;,\n]*|\b(?P<f>former)\s+(?:cigarette\s+)?smoker\b", re.I
)
#: The habit goes on or came back: trying to quit, smoking again.
_HABIT_GOES_ON = re.compile(
    r"\b(?:start\w* (?:smoking )?(?:again|back)|(?:trying|ready|want\w*|wan na|going) to quit"
    r"|still smok\w*|currently smok\w*|i smoke|i(?:'m| am) smoking|relaps\w*|quit date)\b",
    re.I,
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
#: A value at the opening of an answer (the first words of the patient's turn).
_OPENING_CHARS = 40


@dataclass(frozen=True)
class Correction:
    """A value the visit states and later corrects: ``earlier`` then ``later`` (transcript
    quantities), with the content words of where it is said (to find the note sentence)."""

    earlier: Quantity
    later: Quantity
    words: frozenset[str]


def _pieces(text: str) -> Iterator[tuple[int, str]]:
    for m in _PIECE.finditer(text):
        yield m.start(), m.group()


def _cue_at(text: str) -> int | None:
    """Where the first piece of ``text`` that carries a correction cue starts."""
    return next((start for start, piece in _pieces(text) if corrects(piece)), None)


def taken_back_denials(src: NoteMaterial) -> set[str]:
    """Canonical ids of findings the patient denied and later, after a cue of correction,
    affirmed (module docstring)."""
    turns = parse_transcript(src.transcript).turns
    denied: set[str] = set()
    out: set[str] = set()
    for i, turn in enumerate(turns):
        if turn.speaker != "patient":
            continue
        no = answer_polarity(turn.text) == "negative"
        asked = turns[i - 1].text if i and turns[i - 1].speaker == "doctor" else ""
        if no:
            for m in src.kb.concepts_in(asked):
                denied.update(m.canonical)
        cue = _cue_at(turn.text)
        if cue is None or (not no and not denied):
            continue
        later = turn.text[cue:]
        for m in src.kb.concepts_in(later):
            finding = set(m.kinds) & FINDING_KINDS and not is_negated(later, m.start, m.end)
            if finding and (no or denied & set(m.canonical)):
                out.update(m.canonical)
    return out


def _differs(a: Quantity, b: Quantity) -> bool:
    return a.kind == b.kind and quantities_agree(a, b) is False


def value_corrections(src: NoteMaterial) -> list[Correction]:
    """Values the visit states and then corrects (module docstring)."""
    turns = parse_transcript(src.transcript).turns
    out = []
    for i, turn in enumerate(turns):
        words = frozenset(content_tokens(turn.text))
        cue = _cue_at(turn.text)
        if cue is not None:
            before = extract_quantities(turn.text[:cue])
            after = extract_quantities(turn.text[cue:])
            out += [Correction(e, x, words) for e in before for x in after if _differs(e, x)]
        if turn.speaker == "patient" and i and turns[i - 1].speaker == "doctor":
            asked = turns[i - 1].text
            if "?" not in asked:
                continue
            opening = [q for q in extract_quantities(turn.text) if q.start < _OPENING_CHARS]
            stated = extract_quantities(asked)
            both = words | frozenset(content_tokens(asked))
            out += [Correction(e, x, both) for e in stated for x in opening if _differs(e, x)]
    return out


def gave_up_habit(src: NoteMaterial) -> bool:
    """Whether a patient's turn says smoking was given up, and no turn says it goes on."""
    turns = parse_transcript(src.transcript).turns
    if any(_HABIT_GOES_ON.search(t.text) for t in turns):
        return False
    return any(t.speaker == "patient" and _HABIT_SAID.search(t.text) for t in turns)


def _subjective(src: NoteMaterial):
    for s in src.sentences:
        section = src.section_at(s.start)
        if section is not None and section.soap == "subjective":
            yield s


def _denial_sites(src: NoteMaterial) -> Iterator[tuple[int, int, str, str]]:
    """``(start, end, cue, finding)`` of note reports of a finding the patient denied and then
    affirmed; offsets into the note."""
    taken_back = taken_back_denials(src)
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
    corrections = value_corrections(src)
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
    if not gave_up_habit(src):
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
