"""Agreement of two reviewers' sentence labels on the units both labelled (SPEC §9), the yardstick
a judge's agreement is read against.

Over the n units labelled by a first reviewer A and a second reviewer B:

    agreement = units where A and B agree on supported vs not / n
    κ (binary) = Cohen's κ of supported vs not      κ (3 labels) = Cohen's κ of the three labels
    severity agreement = units both call an error with the same severity / units both call an error

and "the same measures" a judge gets (:func:`clinjudge.metrics.unit_labels.agreement_summary`,
with encounter-bootstrap intervals): B read as a judge that flags the units it labels
unsupported or contradicted, A as the reference — precision, recall, F1, κ, major recall,
per-system shares and the per-note Spearman correlation. Pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from clinjudge.metrics.agreement import cohen_kappa
from clinjudge.metrics.unit_agreement import all_supported_accuracy, encounter_bootstrap
from clinjudge.metrics.unit_labels import LabelledUnit, UnitResult, agreement_summary

ReviewerPair = tuple[LabelledUnit, LabelledUnit]


def as_judge(pairs: Sequence[ReviewerPair]) -> list[UnitResult]:
    """A's units with B's label as the call: flagged when B labels the unit an error."""
    return [UnitResult(a, "flagged" if b.positive else "cleared") for a, b in pairs]


def _kappa(x: list[object], y: list[object]) -> float | None:
    if not x:
        return None
    if len(set(x)) == 1 and len(set(y)) == 1:  # both constant: κ undefined unless equal
        return 1.0 if x[0] == y[0] else None
    value = cohen_kappa(np.array(x), np.array(y))
    return None if np.isnan(value) else float(value)


def reviewer_agreement(
    pairs: Sequence[ReviewerPair], *, resamples: int = 1000
) -> dict[str, object]:
    """Raw agreement, κ binary and 3-label, severity agreement, and B's
    :func:`agreement_summary` against A with ``ci95`` (module docstring)."""
    a_bin = [a.positive for a, _ in pairs]
    b_bin = [b.positive for _, b in pairs]
    both = [(a, b) for a, b in pairs if a.positive and b.positive]
    results = as_judge(pairs)
    summary = agreement_summary(results)
    summary["ci95"] = encounter_bootstrap(results, n=resamples)
    summary["all_supported_accuracy"] = all_supported_accuracy(summary)
    return {
        "units": len(pairs),
        "encounters": len({a.encounter for a, _ in pairs}),
        "agreement": sum(x == y for x, y in zip(a_bin, b_bin, strict=True)) / len(pairs)
        if pairs
        else None,
        "kappa_binary": _kappa(list(a_bin), list(b_bin)),
        "kappa_3": _kappa([a.label for a, _ in pairs], [b.label for _, b in pairs]),
        "errors_first": sum(a_bin),
        "errors_second": sum(b_bin),
        "severity_agreement": sum(a.severity == b.severity for a, b in both) / len(both)
        if both
        else None,
        "as_judge": summary,
    }
