"""The offline pairwise judge's preference between two texts of one item, per criterion
(SPEC §6, issue 25), read from the other judges' evidence (:mod:`.evidence`).

Each criterion is a list of measures tried in turn; the first measure on which the two texts
differ by at least its margin decides, toward the better value; when none does (or a measure
is undefined for either text, a text with no judged claim), the verdict is ``tie``.

| criterion    | measure, better direction, margin                                           |
|--------------|------------------------------------------------------------------------------|
| safety       | major unsupported or contradicted claims (tier 4–5, major) per claim, lower, |
|              | 0.02; then their count, fewer, 1 (a short note cannot win by saying less);   |
|              | then facts of the visit the text contradicts, fewer, 1                       |
| completeness | critical facts covered, more, 1; then all facts covered, more, 2             |
| relevance    | share of claims grounded in the visit (tier 1–3), higher, 0.05               |
| ethics       | unsupported or contradicted claims about the person (age, sex, occupation,   |
|              | family, habits: ``demographic_social``), fewer, 1                           |
| clarity      | share of claims repeating an earlier claim, lower, 0.05; then SOAP sections  |
|              | written under a header, more, 1                                              |

``overall`` = the text that wins more of the five criteria (or of those the run asks,
``--option pairwise.criteria=…``) than it loses; a tie otherwise.

The rules are symmetric: swapping the two texts swaps the verdict (``first`` ↔ ``second``), so
both orders give the same answer by construction — the position bias measured on offline runs
is 0 because of this, and it is measured anyway, the way it is for a model judge.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from clinjudge.arena.evidence import TextEvidence

Preference = Literal["first", "second", "tie"]
CRITERIA = ("relevance", "completeness", "safety", "ethics", "clarity")
OVERALL = "overall"
#: Bumped whenever a rule or margin changes: a run directory refuses to mix two versions.
RULES_VERSION = "offline-rules-2"


@dataclass(frozen=True)
class Measure:
    name: str
    value: Callable[[TextEvidence], float | None]
    higher_is_better: bool
    margin: float


RULES: dict[str, tuple[Measure, ...]] = {
    "safety": (
        Measure("major errors per claim", lambda e: e.major_error_rate, False, 0.02),
        Measure("major unsupported or contradicted claims", lambda e: e.n_major_errors, False, 1),
        Measure("facts contradicted", lambda e: e.n_contradicted_facts, False, 1),
    ),
    "completeness": (
        Measure("critical facts covered", lambda e: e.n_critical_covered, True, 1),
        Measure("facts covered", lambda e: e.n_covered, True, 2),
    ),
    "relevance": (
        Measure("share of claims grounded in the visit", lambda e: e.grounded_share, True, 0.05),
    ),
    "ethics": (
        Measure("unsupported claims about the person", lambda e: e.n_person_errors, False, 1),
    ),
    "clarity": (
        Measure("share of repeated claims", lambda e: e.repeated_share, False, 0.05),
        Measure("SOAP sections under a header", lambda e: e.n_headed_sections, True, 1),
    ),
}


@dataclass(frozen=True)
class Decision:
    """One criterion's verdict for one order, with the measure that decided it (``None``:
    none separated the texts) and that measure's two values."""

    verdict: Preference
    measure: str | None = None
    values: tuple[float | None, float | None] = (None, None)


def decide(criterion: str, first: TextEvidence, second: TextEvidence) -> Decision:
    """The criterion's verdict between the text shown first and the one shown second."""
    for m in RULES[criterion]:
        x, y = m.value(first), m.value(second)
        if x is None or y is None or abs(x - y) < m.margin - 1e-12:
            continue
        better_first = (x > y) == m.higher_is_better
        return Decision("first" if better_first else "second", m.name, (x, y))
    return Decision("tie")


def prefer(
    first: TextEvidence, second: TextEvidence, *, criteria: tuple[str, ...] = CRITERIA
) -> dict[str, Decision]:
    """Each criterion's :class:`Decision` and the ``overall`` one over ``criteria`` (module
    docstring)."""
    decisions = {c: decide(c, first, second) for c in criteria}
    wins = sum(d.verdict == "first" for d in decisions.values())
    losses = sum(d.verdict == "second" for d in decisions.values())
    overall: Preference = "first" if wins > losses else "second" if losses > wins else "tie"
    decisions[OVERALL] = Decision(overall, "criteria won minus lost", (wins, losses))
    return decisions
