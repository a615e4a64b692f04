"""Confidence intervals: Wilson score interval for rates (SPEC §8) and percentile bootstrap
intervals, item-level or cluster-level, including the paired difference of two judges (SPEC §4).

Pure functions on plain numbers (numpy only); no I/O, no LangGraph.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

Statistic = Callable[[np.ndarray], float]


def wilson_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for ``k`` events in ``n`` trials (SPEC §8).

    With p = k/n::

        centre = (p + z²/2n) / (1 + z²/n)
        half   = z · sqrt(p(1−p)/n + z²/4n²) / (1 + z²/n)

    returns ``(centre − half, centre + half)`` clamped to [0, 1] and to contain p (rounding
    would otherwise put 0/n above its lower bound by 1e-17: a negative error bar); ``n = 0``
    gives ``(0, 1)``.
    Zero events in n: the upper bound is z²/(n + z²), ≤ 1% from n = 381 on (SPEC §8).
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    return _wilson_at(k / n, n, z)


class ClusteredRate(NamedTuple):
    """A rate pooled over clusters, with its design effect and a Wilson interval at the
    effective sample size."""

    value: float
    ci95: tuple[float, float]
    design_effect: float
    effective_n: float
    clusters: int


def clustered_wilson(
    events: Sequence[int], units: Sequence[int], z: float = 1.96
) -> ClusteredRate | None:
    """Wilson interval of a rate pooled over clusters (claims of a note are not independent),
    by Kish's design effect on the ratio estimator (SPEC §8).

    With p = Σk / Σn over C clusters (k_i events in n_i units), the cluster-robust variance
    of p is ``C/(C−1) · Σ(k_i − p·n_i)² / (Σn)²``; the design effect is that over the binomial
    ``p(1−p)/Σn`` (at least 1: clustering never buys precision here); the interval is
    Wilson's at the effective size ``Σn / deff`` with ``p`` as its rate. ``None`` below two
    clusters with units. When p is 0 or 1 the variance is 0 and deff is 1: the plain
    interval (the floor of the effective size is then the number of clusters, never more
    units than were seen)."""
    pairs = [(k, n) for k, n in zip(events, units, strict=True) if n > 0]
    if len(pairs) < 2:
        return None
    total_k = sum(k for k, _ in pairs)
    total_n = sum(n for _, n in pairs)
    p = total_k / total_n
    c = len(pairs)
    robust = c / (c - 1) * sum((k - p * n) ** 2 for k, n in pairs) / total_n**2
    binomial = p * (1 - p) / total_n
    deff = max(1.0, robust / binomial) if binomial > 0 else 1.0
    n_eff = total_n / deff
    lo, hi = _wilson_at(p, n_eff, z)
    return ClusteredRate(p, (lo, hi), deff, n_eff, c)


def _wilson_at(p: float, n: float, z: float) -> tuple[float, float]:
    """:func:`wilson_interval` for a rate ``p`` at a (possibly fractional) size ``n``."""
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


#: Fewest independent units (items, or clusters) a bootstrap interval is reported for: with
#: one to four, resamples repeat the same few values and the percentile interval collapses
#: (meta-eval printed "AUROC 0.833 [0.83, 0.83]" at n = 3); reports say "n too small" instead.
MIN_BOOTSTRAP_UNITS = 5
TOO_FEW = "n too small"


def enough_for_bootstrap(clusters: Sequence[object]) -> bool:
    """Whether ``clusters`` (one label per unit) hold :data:`MIN_BOOTSTRAP_UNITS` distinct units."""
    return len(set(clusters)) >= MIN_BOOTSTRAP_UNITS


def bootstrap_interval(values: Sequence[float]) -> list[float] | None:
    """The percentile bootstrap 95% interval of the mean of ``values`` as a list, or ``None``
    with fewer than :data:`MIN_BOOTSTRAP_UNITS` values (reports say :data:`TOO_FEW`)."""
    if len(values) < MIN_BOOTSTRAP_UNITS:
        return None
    return list(bootstrap_ci(values))


def bootstrap_ci(
    values: Sequence[float | None] | np.ndarray,
    statistic: Statistic = np.mean,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    clusters: Sequence[object] | None = None,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(values)`` (SPEC §4, question-level bootstrap).

    Each of ``n_resamples`` replicates draws, with replacement, as many units as there are: items,
    or whole clusters when ``clusters`` gives a group label per value (e.g. the note each claim
    came from — claims of one note are not independent). The interval is the
    ((1 − level)/2, (1 + level)/2) quantiles of the replicate statistics. ``None``/NaN values are
    dropped with their labels; no values left gives ``(nan, nan)``. A replicate whose statistic
    is undefined (NaN: e.g. a rank correlation of a resample with one distinct value) is left
    out of the quantiles; when more than half are undefined the interval is ``(nan, nan)``.
    Seeded: same inputs, same interval.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    data = np.array([np.nan if v is None else v for v in values], dtype=float)
    labels = np.arange(len(data)) if clusters is None else np.asarray(clusters, dtype=object)
    if len(labels) != len(data):
        raise ValueError(f"{len(labels)} cluster labels for {len(data)} values")
    keep = ~np.isnan(data)
    data, labels = data[keep], labels[keep]
    if data.size == 0:
        return math.nan, math.nan
    grouped, starts, sizes = _group_by_cluster(data, labels)
    rng = np.random.default_rng(seed)
    replicates = np.empty(n_resamples)
    for r in range(n_resamples):
        drawn = rng.integers(0, len(sizes), size=len(sizes))
        replicates[r] = statistic(grouped[_positions(starts[drawn], sizes[drawn])])
    defined = replicates[~np.isnan(replicates)]
    if defined.size * 2 < n_resamples:
        return math.nan, math.nan
    tail = (1 - level) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    return float(low), float(high)


class PairedDifference(NamedTuple):
    """Mean of a − b over the items scored on both sides, its bootstrap interval, items used."""

    mean: float
    ci: tuple[float, float]
    n: int


def paired_bootstrap_diff(
    a: Sequence[float | None],
    b: Sequence[float | None],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> PairedDifference:
    """Paired difference of two judges' per-item scores (SPEC §4): d_i = a_i − b_i.

    Items where either side is ``None`` (or NaN) are dropped; the result is
    ``(mean(d), percentile-bootstrap interval of mean(d) resampling items, n items used)``.
    No usable pair gives ``(nan, (nan, nan), 0)``.
    """
    if len(a) != len(b):
        raise ValueError(f"paired inputs differ in length: {len(a)} vs {len(b)}")
    pairs = [
        (x, y)
        for x, y in zip(a, b, strict=True)
        if x is not None and y is not None and not (math.isnan(x) or math.isnan(y))
    ]
    if not pairs:
        return PairedDifference(math.nan, (math.nan, math.nan), 0)
    diffs = np.array([x - y for x, y in pairs], dtype=float)
    ci = bootstrap_ci(diffs, np.mean, n_resamples=n_resamples, seed=seed, level=level)
    return PairedDifference(float(diffs.mean()), ci, len(diffs))


def _group_by_cluster(
    data: np.ndarray, labels: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``data`` reordered so each cluster is contiguous, with each cluster's start and size
    (clusters in order of first appearance)."""
    members: dict[object, list[int]] = {}
    for index, label in enumerate(labels.tolist()):
        members.setdefault(label, []).append(index)
    sizes = np.array([len(m) for m in members.values()], dtype=int)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    order = np.concatenate([np.array(m, dtype=int) for m in members.values()])
    return data[order], starts, sizes


def _positions(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Concatenation of ``range(start, start + size)`` for each drawn cluster, vectorised."""
    ends = np.cumsum(sizes)
    return np.arange(ends[-1]) - np.repeat(ends - sizes - starts, sizes)
