"""A judge's claim verdicts scored against sentence labels, note by note (SPEC §9 "Agreement").

Builds on :mod:`clinjudge.metrics.unit_labels` (a unit is flagged when a tier 4–5 claim overlaps
its character span; precision, recall, F1, accuracy, κ, major recall, per-system shares, per-note
Spearman) and adds what a report of one judge against the labels needs:

* **intervals** — percentile 95% intervals of the summary statistics from 1,000 resamples of
  whole encounters (all notes of one visit share a transcript; seed 0);
* **all-supported accuracy** — 1 − positives / units, the accuracy of calling every unit
  supported (the floor a judge's accuracy is read against);
* **severity** — a flagged unit is called ``major`` when one of its flagging claims is; major
  recall = labelled-major flagged units called major / labelled-major flagged units; precision of
  ``major`` = those hits / flagged units called major (and / the called-major units that are
  errors);
* **tier-5 precision** — tier-5 claims overlapping a unit labelled ``contradicted`` / tier-5
  claims overlapping any labelled unit (a claim over several units takes the worst label:
  contradicted > unsupported > supported), with a Wilson interval.

Pure functions on plain values; no I/O.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from clinjudge.metrics.intervals import MIN_BOOTSTRAP_UNITS, wilson_interval
from clinjudge.metrics.unit_labels import (
    ClaimCall,
    LabelledUnit,
    UnitResult,
    agreement_summary,
    overlaps,
    unit_call,
)

#: Statistics given encounter-bootstrap intervals.
INTERVAL_KEYS = ("precision", "recall", "f1", "kappa", "note_spearman")


@dataclass(frozen=True)
class JudgedClaim(ClaimCall):
    """A claim's note span with the judge's verdict on it: ``tier`` (``None``: no verdict),
    ``severity`` (set on tier 4–5 verdicts by judges that rate it) and ``rationale``."""

    tier: int | None = None
    severity: str | None = None
    rationale: str = ""
    text: str = ""
    claim_id: str = ""


def unit_results(
    units: Mapping[str, Sequence[LabelledUnit]], claims: Mapping[str, Sequence[JudgedClaim]]
) -> list[UnitResult]:
    """The judge's call on every labelled unit, in the order of ``units`` (note by note)."""
    return [
        UnitResult(u, unit_call(u.start, u.end, claims.get(note_id, ())))
        for note_id, note_units in units.items()
        for u in note_units
    ]


def flagging_claims(
    result: UnitResult, claims: Mapping[str, Sequence[JudgedClaim]]
) -> list[JudgedClaim]:
    """The tier 4–5 claims (in claim order) that overlap the unit."""
    u = result.unit
    return [
        c
        for c in claims.get(u.note_id, ())
        if c.hallucinated and overlaps(u.start, u.end, c.start, c.end)
    ]


def encounter_bootstrap(
    results: Sequence[UnitResult], keys: Sequence[str] = INTERVAL_KEYS, n: int = 1000
) -> dict[str, tuple[float | None, float | None]]:
    """Percentile 95% intervals (2.5th, 97.5th) of :func:`agreement_summary` statistics over
    ``n`` resamples of whole encounters, drawn with replacement (``numpy`` generator, seed 0);
    a statistic undefined in a resample is left out of its quantiles, ``(None, None)`` when
    undefined in all, and for every statistic below :data:`MIN_BOOTSTRAP_UNITS` encounters."""
    by_encounter: dict[str, list[UnitResult]] = defaultdict(list)
    for r in results:
        by_encounter[r.unit.encounter].append(r)
    names = sorted(by_encounter)
    rng = np.random.default_rng(0)
    draws: dict[str, list[float]] = {k: [] for k in keys}
    for _ in range(n if len(names) >= MIN_BOOTSTRAP_UNITS else 0):
        picked = rng.choice(len(names), size=len(names), replace=True)
        summary = agreement_summary([r for i in picked for r in by_encounter[names[i]]])
        for k in keys:
            if summary[k] is not None:
                draws[k].append(float(summary[k]))  # type: ignore[arg-type]
    return {
        k: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) if v else (None, None)
        for k, v in draws.items()
    }


def severity_agreement(
    results: Sequence[UnitResult], claims: Mapping[str, Sequence[JudgedClaim]]
) -> dict[str, object] | None:
    """Severity of the flags against the labels' (module docstring); ``None`` when the judge
    rates no severity on any flagged unit."""
    flagged = [r for r in results if r.flagged]
    severities = {id(r): [c.severity for c in flagging_claims(r, claims)] for r in flagged}
    called = {key for key, found in severities.items() if "major" in found}
    if not called and not any(s for found in severities.values() for s in found):
        return None
    majors = [r for r in flagged if r.unit.major]
    hits = sum(1 for r in majors if id(r) in called)
    errors_called = sum(1 for r in flagged if id(r) in called and r.unit.positive)
    return {
        "flagged_majors": len(majors),
        "called_major": len(called),
        "called_major_errors": errors_called,
        "hits": hits,
        "major_recall": hits / len(majors) if majors else None,
        "major_precision": hits / len(called) if called else None,
        "major_precision_errors": hits / errors_called if errors_called else None,
    }


def tier5_precision(
    results: Sequence[UnitResult], claims: Mapping[str, Sequence[JudgedClaim]]
) -> dict[str, object] | None:
    """Tier-5 claims against the worst label of the units they overlap (module docstring);
    ``None`` when no tier-5 claim overlaps a labelled unit."""
    by_note: dict[str, list[UnitResult]] = defaultdict(list)
    for r in results:
        by_note[r.unit.note_id].append(r)
    counts = {"contradicted": 0, "unsupported": 0, "supported": 0}
    for note_id, note_results in by_note.items():
        for c in claims.get(note_id, ()):
            if c.tier != 5:
                continue
            labels = {
                r.unit.label
                for r in note_results
                if overlaps(r.unit.start, r.unit.end, c.start, c.end)
            }
            if labels:
                counts[next(k for k in counts if k in labels)] += 1
    n = sum(counts.values())
    if not n:
        return None
    return {
        "claims": n,
        **counts,
        "precision": counts["contradicted"] / n,
        "ci95": wilson_interval(counts["contradicted"], n),
    }


def all_supported_accuracy(summary: Mapping[str, object]) -> float | None:
    """1 − positives / units of an :func:`agreement_summary` (``None`` with no unit)."""
    units = int(summary["units"])  # type: ignore[call-overload]
    return 1 - int(summary["positives"]) / units if units else None  # type: ignore[call-overload]


def judge_agreement(
    results: Sequence[UnitResult],
    claims: Mapping[str, Sequence[JudgedClaim]],
    *,
    resamples: int = 1000,
) -> dict[str, object]:
    """Everything of one judge against the labels: :func:`agreement_summary` with ``ci95``
    (:func:`encounter_bootstrap`), ``tier5`` (:func:`tier5_precision`),
    ``all_supported_accuracy`` and ``severity`` (:func:`severity_agreement`)."""
    summary = agreement_summary(results)
    summary["ci95"] = encounter_bootstrap(results, n=resamples)
    summary["tier5"] = tier5_precision(results, claims)
    summary["all_supported_accuracy"] = all_supported_accuracy(summary)
    summary["severity"] = severity_agreement(results, claims)
    return summary
