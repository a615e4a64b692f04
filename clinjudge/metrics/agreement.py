"""Agreement of automatic scores with human labels, with bootstrap intervals (SPEC §8: validate
any automated metric against clinician labels before trusting it).

- Spearman ρ: Pearson correlation of the ranks (average ranks for ties) — ``scipy.stats.spearmanr``;
- Kendall τ-b = (C − D) / sqrt((C + D + T_x)(C + D + T_y)), ties corrected —
  ``scipy.stats.kendalltau`` (its default variant is τ-b);
- Cohen's κ = (p_o − p_e) / (1 − p_e), observed vs chance agreement of two labelings —
  ``sklearn.metrics.cohen_kappa_score`` (``weights="linear"|"quadratic"`` for ordinal labels).

Each comes with a percentile bootstrap interval resampling items, or whole ``clusters`` (e.g.
the dialogue several summaries came from). Items with a missing value on either side are dropped.
A statistic that is undefined (constant input) is ``None``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from clinjudge.metrics.classification import Estimate
from clinjudge.metrics.intervals import bootstrap_ci

PairStatistic = Callable[[np.ndarray, np.ndarray], float]


def _quiet(fn: Callable[[], float]) -> float:
    """Run a scipy/sklearn statistic; undefined results (constant input) become NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = float(fn())
        except ValueError:
            return math.nan
    return value


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    return _quiet(lambda: stats.spearmanr(x, y).statistic)


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    return _quiet(lambda: stats.kendalltau(x, y, variant="b").statistic)


def cohen_kappa(
    x: np.ndarray, y: np.ndarray, weights: Literal["linear", "quadratic"] | None = None
) -> float:
    return _quiet(lambda: cohen_kappa_score(x, y, weights=weights))


def _clean(
    a: Sequence[object], b: Sequence[object], clusters: Sequence[object] | None
) -> tuple[np.ndarray, np.ndarray, list[object] | None]:
    if len(a) != len(b):
        raise ValueError(f"{len(a)} values against {len(b)} labels")
    if clusters is not None and len(clusters) != len(a):
        raise ValueError(f"{len(clusters)} cluster labels for {len(a)} items")

    def missing(v: object) -> bool:
        return v is None or (isinstance(v, float) and math.isnan(v))

    keep = [i for i in range(len(a)) if not (missing(a[i]) or missing(b[i]))]
    kept_clusters = None if clusters is None else [clusters[i] for i in keep]
    return np.array([a[i] for i in keep]), np.array([b[i] for i in keep]), kept_clusters


def agreement(
    statistic: PairStatistic,
    a: Sequence[object],
    b: Sequence[object],
    *,
    clusters: Sequence[object] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """``statistic(a, b)`` with a percentile-bootstrap interval over items (or clusters).

    The bootstrap resamples item *indices* so that the two sides stay paired."""
    x, y, kept_clusters = _clean(a, b, clusters)
    if x.size < 2:
        return Estimate(None, None, "bootstrap", n=int(x.size))
    value = statistic(x, y)

    def on_indices(index: np.ndarray) -> float:
        idx = index.astype(int)
        return statistic(x[idx], y[idx])

    low, high = bootstrap_ci(
        np.arange(x.size, dtype=float),
        on_indices,
        n_resamples=n_resamples,
        seed=seed,
        clusters=kept_clusters,
    )
    value_out = None if math.isnan(value) else value
    return Estimate(value_out, (low, high), "bootstrap", n=int(x.size))


def agreement_report(
    scores: Sequence[float | None],
    human: Sequence[float | None],
    *,
    clusters: Sequence[object] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Estimate]:
    """Spearman ρ and Kendall τ-b of continuous scores against human scores."""
    options = {"clusters": clusters, "n_resamples": n_resamples, "seed": seed}
    return {
        "spearman": agreement(spearman, scores, human, **options),
        "kendall_tau_b": agreement(kendall_tau_b, scores, human, **options),
    }
