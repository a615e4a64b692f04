"""Fleiss' κ: how far several raters agree on categorical labels beyond chance (Fleiss 1971,
"Measuring nominal scale agreement among many raters"); issue 39 item 3 (a jury of graders),
the many-rater form of the κ of SPEC §9 (κ = (p_o − p_e) / (1 − p_e)).

Subjects i (an item's criterion) are each labelled by n_i raters; n_ij of them chose category j:

    P_i  = Σ_j n_ij (n_ij − 1) / (n_i (n_i − 1))      agreement among the pairs of raters of i
    P̄    = mean_i P_i                                  observed agreement
    p_j  = Σ_i n_ij / Σ_i n_i                          share of all labels in category j
    P̄_e  = Σ_j p_j²                                    agreement expected by chance
    κ    = (P̄ − P̄_e) / (1 − P̄_e)

With the same n raters for every subject this is Fleiss' formula as printed. A rater may miss a
subject (a juror whose reply could not be read): n_i then varies, and P̄ is the mean of the P_i
over the subjects with n_i ≥ 2 (a subject rated once has no pair) — the usual generalisation
(e.g. Fleiss, Levin & Paik 2003, §18.1). κ is undefined (``None``) when P̄_e = 1 (every label
in one category: chance already explains full agreement) or no subject has two ratings.
Pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class FleissKappa:
    """κ with its parts: observed ``P̄``, chance ``P̄_e``, and the subjects counted."""

    kappa: float | None
    observed: float | None
    expected: float | None
    n_subjects: int

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "kappa": self.kappa,
            "observed": self.observed,
            "expected": self.expected,
            "n": self.n_subjects,
        }


def fleiss_kappa(subjects: Iterable[Mapping[Hashable, int]]) -> FleissKappa:
    """Fleiss' κ (module docstring) of ``subjects``: per subject, category → raters choosing it.
    Subjects with fewer than two ratings are left out."""
    rated = [{k: n for k, n in s.items() if n > 0} for s in subjects]
    rated = [s for s in rated if sum(s.values()) >= 2]
    if not rated:
        return FleissKappa(None, None, None, 0)
    pair_agreement = []
    totals: dict[Hashable, int] = {}
    for s in rated:
        n = sum(s.values())
        pair_agreement.append(sum(c * (c - 1) for c in s.values()) / (n * (n - 1)))
        for category, c in s.items():
            totals[category] = totals.get(category, 0) + c
    observed = sum(pair_agreement) / len(pair_agreement)
    every = sum(totals.values())
    expected = sum((c / every) ** 2 for c in totals.values())
    kappa = None if expected >= 1.0 else (observed - expected) / (1.0 - expected)
    return FleissKappa(kappa, observed, expected, len(rated))


def label_counts(labels: Iterable[Hashable]) -> dict[Hashable, int]:
    """One subject's row of the table: how many raters gave each label."""
    out: dict[Hashable, int] = {}
    for label in labels:
        out[label] = out.get(label, 0) + 1
    return out
