"""What a visit says and later takes back: the later statement wins (issue 36, item 2).

Read from the transcript's order and speaker tags alone, three kinds of correction:

* **a value corrected** — in one turn a value, a cue of correction
  (:func:`clinjudge.grounding.visit_reading.corrects`: "actually", "i mean", "sorry"), then a
  different value of the same kind ("five hundred milligrams once a day, no, actually twice a
  day"); or a clinician's question that presumes a value and the patient's answer that opens
  with a different one ("you had the cataract surgery about three months ago ?" — "that was
  about four and a half months ago"). A vital sign is not corrected this way: the patient's
  reading at home and the clinic's are two occasions, not one fact said twice.
* **a denial taken back** — a patient answers no and then, after a cue of correction, affirms
  a finding ("no . well , actually , i do feel a little strain"); or a later patient turn with
  such a cue affirms a finding the patient denied before.
* **a habit given up** — the patient says smoking stopped ("i quit cold turkey", "i used to
  smoke") and no turn says it goes on.

The judge (:mod:`clinjudge.judges.corrections`) flags a claim that keeps the earlier
statement; the injector (:mod:`clinjudge.inject.superseded`) writes such claims on purpose.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from clinjudge.grounding.visit_reading import corrects
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.knowledge.concept import FINDING_KINDS
from clinjudge.text.negation import answer_polarity, is_negated
from clinjudge.text.normalize import content_tokens
from clinjudge.text.quantities import Quantity, extract_quantities, quantities_agree
from clinjudge.types import Transcript

#: Pieces of a turn between punctuation: a correction cue is looked for piece by piece.
_PIECE = re.compile(r"[^,.;?!]+[,.;?!]*")
#: A value at the opening of an answer (the first characters of the patient's turn).
OPENING_CHARS = 40
#: Smoking given up, as the patient says it.
HABIT_SAID = re.compile(
    r"\b(?:quit|stopped|gave up|used to)\b[^.?!]{0,40}?\b(?:smok\w*|cigarettes?|tobacco)\b"
    r"|\b(?:smok\w*|cigarettes?|tobacco)\b[^?!\n]{0,60}?\b(?:quit|stopped|gave (?:it )?up)\b",
    re.I,
)
#: The habit goes on or came back: trying to quit, smoking again.
_HABIT_GOES_ON = re.compile(
    r"\b(?:start\w* (?:smoking )?(?:again|back)|(?:trying|ready|want\w*|wan na|going) to quit"
    r"|still smok\w*|currently smok\w*|i smoke|i(?:'m| am) smoking|relaps\w*|quit date)\b",
    re.I,
)


@dataclass(frozen=True)
class Correction:
    """A value the visit states and later corrects: ``earlier`` then ``later`` (quantities of
    the turns' texts), the content words of where it is said (to find the sentence of a note
    about the same thing) and the words that correct it, as said."""

    earlier: Quantity
    later: Quantity
    words: frozenset[str]
    said: str


@dataclass(frozen=True)
class VisitCorrections:
    """Every correction of one visit (module docstring)."""

    values: tuple[Correction, ...] = ()
    #: Canonical ids of findings the patient denied and then affirmed, with the words that did.
    taken_back: dict[str, str] = field(default_factory=dict)
    #: The patient's words giving up smoking, when no turn says it goes on.
    habit_given_up: str | None = None


def read_corrections(transcript: Transcript, kb: KnowledgeBase) -> VisitCorrections:
    return VisitCorrections(
        values=tuple(value_corrections(transcript)),
        taken_back=taken_back_denials(transcript, kb),
        habit_given_up=gave_up_habit(transcript),
    )


def _pieces(text: str) -> Iterator[tuple[int, str]]:
    for m in _PIECE.finditer(text):
        yield m.start(), m.group()


def cue_at(text: str) -> int | None:
    """Where the first piece of ``text`` that carries a correction cue starts."""
    return next((start for start, piece in _pieces(text) if corrects(piece)), None)


def _differs(a: Quantity, b: Quantity) -> bool:
    return a.kind == b.kind and quantities_agree(a, b) is False


def _quote(text: str, start: int, end: int, reach: int = 40) -> str:
    return " ".join(text[max(0, start - reach) : end].split())


def _sentence_around(text: str, position: int) -> str:
    """The sentence of ``text`` holding ``position``, as said (the words a rationale quotes)."""
    start = max(text.rfind(stop, 0, position) for stop in ".?!") + 1
    ends = [i for i in (text.find(stop, position) for stop in ".?!") if i >= 0]
    return " ".join(text[start : min(ends, default=len(text))].split())


def value_corrections(transcript: Transcript) -> list[Correction]:
    """Values the visit states and then corrects (module docstring)."""
    turns = transcript.turns
    out = []
    for i, turn in enumerate(turns):
        words = frozenset(content_tokens(turn.text))
        cue = cue_at(turn.text)
        if cue is not None:
            before = extract_quantities(turn.text[:cue])
            after = [
                Quantity(**{**q.model_dump(), "start": q.start + cue, "end": q.end + cue})
                for q in extract_quantities(turn.text[cue:])
            ]
            out += [
                Correction(e, x, words, _quote(turn.text, cue, x.end, 0))
                for e in before
                for x in after
                if _differs(e, x)
            ]
        if turn.speaker == "patient" and i and turns[i - 1].speaker == "doctor":
            asked = turns[i - 1].text
            if "?" not in asked:
                continue
            opening = [q for q in extract_quantities(turn.text) if q.start < OPENING_CHARS]
            stated = [q for q in extract_quantities(asked) if q.kind != "vital"]
            both = words | frozenset(content_tokens(asked))
            out += [
                Correction(e, x, both, _quote(turn.text, 0, x.end, 0))
                for e in stated
                for x in opening
                if _differs(e, x)
            ]
    return out


def taken_back_denials(transcript: Transcript, kb: KnowledgeBase) -> dict[str, str]:
    """Canonical ids of findings the patient denied and later, after a cue of correction,
    affirmed (module docstring), each with the words that affirmed it."""
    turns = transcript.turns
    denied: set[str] = set()
    out: dict[str, str] = {}
    for i, turn in enumerate(turns):
        if turn.speaker != "patient":
            continue
        no = answer_polarity(turn.text) == "negative"
        asked = turns[i - 1].text if i and turns[i - 1].speaker == "doctor" else ""
        if no:
            for m in kb.concepts_in(asked):
                denied.update(m.canonical)
        cue = cue_at(turn.text)
        if cue is None or (not no and not denied):
            continue
        later = turn.text[cue:]
        for m in kb.concepts_in(later):
            finding = set(m.kinds) & FINDING_KINDS and not is_negated(later, m.start, m.end)
            if finding and (no or denied & set(m.canonical)):
                for cid in m.canonical:
                    out.setdefault(cid, _quote(later, 0, m.end, 0))
    return out


def gave_up_habit(transcript: Transcript) -> str | None:
    """The patient's words saying smoking was given up, when no turn says it goes on."""
    turns = transcript.turns
    if any(_HABIT_GOES_ON.search(t.text) for t in turns):
        return None
    for t in turns:
        m = HABIT_SAID.search(t.text) if t.speaker == "patient" else None
        if m:
            return _sentence_around(t.text, m.end() - 1)
    return None
