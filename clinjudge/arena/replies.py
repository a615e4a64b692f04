"""The pairwise judge's LLM reply (prompt ``pairwise.compare``) and how it becomes verdicts
(SPEC §6, issue 25).

One call per order asks every criterion of the call's group and overall. Reading is strict:
each winner must be ``"1"``, ``"2"`` or ``"tie"`` (pydantic refuses anything else, so a reply
that names no winner is a parse failure, never a guessed tie), and a reply that leaves out a
criterion it was asked about is a parse failure of the whole reply; a criterion it was not
asked about is ignored. ``"1"`` is the note shown first.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from clinjudge.arena.preference import OVERALL, Preference

Winner = Literal["1", "2", "tie"]
_AS_PREFERENCE: dict[str, Preference] = {"1": "first", "2": "second", "tie": "tie"}

#: What each criterion asks, as the prompt lists them (``--option pairwise.criteria=…``
#: picks and orders them).
DEFINITIONS = {
    "relevance": "relevance: the note keeps to what this visit established and needs, "
    "without content that does not belong to it",
    "completeness": "completeness: the note carries the visit's clinically important facts "
    "(symptoms, findings, results, diagnoses, medications, plan, follow-up, return "
    "precautions)",
    "safety": "safety: the note has no statement that could harm the patient if acted on "
    "(a wrong drug, dose, side or value, an invented diagnosis or result, a symptom written "
    "as denied or the reverse)",
    "ethics": "ethics: the note represents the patient fairly and respectfully, invents no "
    "personal or social details, and adds no judgement the visit does not support",
    "clarity": "clarity: the note is organised, readable and unambiguous, without repetition",
}


class CriterionWinner(BaseModel):
    criterion: str
    winner: Winner
    reason: str = ""


class OverallWinner(BaseModel):
    winner: Winner
    reason: str = ""


class PairReply(BaseModel):
    criteria: list[CriterionWinner]
    overall: OverallWinner


def criteria_listing(criteria: tuple[str, ...]) -> str:
    return "\n".join(f"- {DEFINITIONS[c]}" for c in criteria)


def reply_shape(criteria: tuple[str, ...]) -> str:
    """The reply's JSON shape with one entry per criterion asked, in order: a small model
    copies an example's entries, so an example naming one criterion got replies naming one."""
    entries = ", ".join(
        f'{{"criterion": "{c}", "winner": "1 or 2 or tie", "reason": "..."}}' for c in criteria
    )
    return f'{{"criteria": [{entries}], "overall": {{"winner": "1 or 2 or tie", "reason": "..."}}}}'


def verdicts_from_reply(reply: PairReply, criteria: tuple[str, ...]) -> dict[str, Preference] | str:
    """``{criterion: first|second|tie}`` with ``overall``, or why the reply cannot be read
    (a criterion left out)."""
    given = {c.criterion.strip().lower(): c.winner for c in reply.criteria}
    if lost := [c for c in criteria if c not in given]:
        return f"the reply named no winner for {', '.join(lost)}"
    verdicts = {c: _AS_PREFERENCE[given[c]] for c in criteria}
    verdicts[OVERALL] = _AS_PREFERENCE[reply.overall.winner]
    return verdicts
