"""Agreement of a claim judge with sentence-level reference labels (SPEC §9 "Agreement").

Reference labels mark each text unit (sentence) of a note ``supported``, ``unsupported`` or
``contradicted``; positive = unsupported or contradicted. A judge *flags* a unit when any of its
tier 4–5 claims overlaps the unit's character span ``[start, end)``; it *clears* it when some
judged claim overlaps it and none is tier 4–5, or when no claim overlaps it at all (nothing was
asserted there to flag). A unit whose overlapping claims all failed (parse failure, call error)
is *unjudged*: left out of every count and reported as excluded.

Over the judged units, from the confusion counts TP, FP, TN, FN:

    precision = TP / (TP + FP)      recall = TP / (TP + FN)     F1 = 2·TP / (2·TP + FP + FN)
    accuracy  = (TP + TN) / n       Cohen's κ = (p_o − p_e) / (1 − p_e),
    p_o = accuracy, p_e = p_gold·p_judge + (1 − p_gold)(1 − p_judge)

plus the recall of ``major`` positives, the labelled and judged positive shares per system, and
the Spearman correlation of the two per-note shares. Pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from clinjudge.metrics.agreement import cohen_kappa, spearman
from clinjudge.metrics.classification import Confusion, f1, precision, sensitivity

Label = Literal["supported", "unsupported", "contradicted"]
UnitCall = Literal["flagged", "cleared", "unjudged"]


@dataclass(frozen=True)
class LabelledUnit:
    """One reference-labelled sentence of a note."""

    note_id: str
    encounter: str
    system: str
    unit: int
    start: int
    end: int
    text: str
    label: Label
    severity: str | None = None
    span: str | None = None
    reason: str = ""

    @property
    def positive(self) -> bool:
        return self.label != "supported"

    @property
    def major(self) -> bool:
        return self.positive and self.severity == "major"


@dataclass(frozen=True)
class ClaimCall:
    """What a judge said about one claim span: ``True`` tier 4–5, ``False`` tier 1–3,
    ``None`` no verdict (parse failure or call error)."""

    start: int
    end: int
    hallucinated: bool | None


def overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    return a_start < b_end and b_start < a_end


def unit_call(start: int, end: int, claims: Iterable[ClaimCall]) -> UnitCall:
    """Flagged when a tier 4–5 claim overlaps ``[start, end)``; unjudged when every
    overlapping claim failed; cleared otherwise (module docstring)."""
    touching = [c for c in claims if overlaps(start, end, c.start, c.end)]
    if any(c.hallucinated for c in touching):
        return "flagged"
    if touching and all(c.hallucinated is None for c in touching):
        return "unjudged"
    return "cleared"


@dataclass(frozen=True)
class UnitResult:
    """A labelled unit and the judge's call on it."""

    unit: LabelledUnit
    call: UnitCall

    @property
    def flagged(self) -> bool:
        return self.call == "flagged"


def _share(results: Sequence[UnitResult], gold: bool) -> float | None:
    if not results:
        return None
    hits = sum(r.unit.positive if gold else r.flagged for r in results)
    return hits / len(results)


def _kappa(results: Sequence[UnitResult]) -> float | None:
    gold = np.array([r.unit.positive for r in results], dtype=int)
    judged = np.array([r.flagged for r in results], dtype=int)
    if len(gold) == 0:
        return None
    if len(set(gold)) == 1 and len(set(judged)) == 1:  # both constant: κ undefined
        return 1.0 if gold[0] == judged[0] else None
    value = cohen_kappa(gold, judged)
    return None if np.isnan(value) else value


def agreement_summary(results: Sequence[UnitResult]) -> dict[str, object]:
    """Precision, recall, F1, accuracy, κ, recall of major errors, shares per system and
    the per-note Spearman correlation of labelled vs judged shares (module docstring)."""
    judged = [r for r in results if r.call != "unjudged"]
    confusion = Confusion.from_labels(
        [r.unit.positive for r in judged], [r.flagged for r in judged]
    )
    majors = [r for r in judged if r.unit.major]
    by_note: dict[str, list[UnitResult]] = {}
    by_system: dict[str, list[UnitResult]] = {}
    for r in judged:
        by_note.setdefault(r.unit.note_id, []).append(r)
        by_system.setdefault(r.unit.system, []).append(r)
    gold_share = [_share(rs, gold=True) for rs in by_note.values()]
    judged_share = [_share(rs, gold=False) for rs in by_note.values()]
    rho = spearman(np.array(gold_share, float), np.array(judged_share, float))
    systems = {
        name: {
            "units": len(rs),
            "gold_share": _share(rs, gold=True),
            "judged_share": _share(rs, gold=False),
        }
        for name, rs in sorted(by_system.items())
    }
    return {
        "units": len(judged),
        "excluded_units": len(results) - len(judged),
        "positives": confusion.positives,
        "flagged": confusion.flagged,
        "tp": confusion.tp,
        "fp": confusion.fp,
        "fn": confusion.fn,
        "tn": confusion.tn,
        "precision": precision(confusion),
        "recall": sensitivity(confusion),
        "f1": f1(confusion),
        "accuracy": (confusion.tp + confusion.tn) / confusion.n if confusion.n else None,
        "kappa": _kappa(judged),
        "major_recall": sum(r.flagged for r in majors) / len(majors) if majors else None,
        "majors": len(majors),
        "majors_flagged": sum(r.flagged for r in majors),
        "notes": len(by_note),
        "note_spearman": None if np.isnan(rho) else rho,
        "systems": systems,
        "system_rank_agrees": rank_agrees(systems),
    }


def rank_agrees(systems: dict[str, dict]) -> bool | None:
    """Whether the judged shares order the systems exactly as the labelled shares do."""
    named = [(s, v["gold_share"], v["judged_share"]) for s, v in systems.items()]
    named = [t for t in named if t[1] is not None and t[2] is not None]
    if len(named) < 2:
        return None
    by_gold = [s for s, _, _ in sorted(named, key=lambda t: t[1])]
    by_judge = [s for s, _, _ in sorted(named, key=lambda t: t[2])]
    return by_gold == by_judge
