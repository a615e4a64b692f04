"""Length bias of a rubric grader (issue 39 item 6): does it score a longer note higher than a
human would at the same labels?

Over the n items with a grader score g_i, a human score h_i (the same rubric score computed from
the human's labels of the same criteria) and the note's length L_i in words, the least-squares
fit

    g_i = β_0 + β_h · h_i + β_L · L_i / 100 + ε_i

gives **β_L**: the change in the grader's score per 100 more words of note, at an equal human
score. β_L = 0: no length bias; β_L > 0: the grader rewards length beyond what the labels
support (scores on [0, 1], so β_L = 0.05 is five points per 100 words). Its 95% interval is a
percentile bootstrap resampling whole clusters (items, or encounters; seeded); ``None`` with
fewer than 4 items or when length is collinear with the human score (the fit has rank < 3).

Beside it, a rank reading that assumes no straight line: **ρ**, Spearman's correlation of the
length with the grader's excess over the human, g_i − h_i (``None`` when either is constant).
Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from clinjudge.metrics.agreement import agreement, spearman
from clinjudge.metrics.intervals import bootstrap_ci, enough_for_bootstrap

#: Fewest items the fit is made on (three coefficients and one degree of freedom).
MIN_ITEMS = 4
#: β_L is per this many words.
PER_WORDS = 100


def length_slope(grader: np.ndarray, human: np.ndarray, words: np.ndarray) -> float:
    """β_L of the module docstring; NaN when the fit is undefined."""
    if grader.size < MIN_ITEMS:
        return math.nan
    design = np.column_stack([np.ones_like(human), human, words / PER_WORDS])
    if np.linalg.matrix_rank(design) < 3:
        return math.nan
    coefficients, *_ = np.linalg.lstsq(design, grader, rcond=None)
    return float(coefficients[2])


def length_bias(
    grader: Sequence[float],
    human: Sequence[float],
    words: Sequence[int],
    clusters: Sequence[object],
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, object]:
    """β_L per 100 words with its interval, ρ(length, g − h) with its interval, and n."""
    g = np.asarray(grader, dtype=float)
    h = np.asarray(human, dtype=float)
    w = np.asarray(words, dtype=float)
    if not (g.size == h.size == w.size == len(clusters)):
        raise ValueError("grader, human, words and clusters differ in length")
    value = length_slope(g, h, w)

    def on_indices(index: np.ndarray) -> float:
        idx = index.astype(int)
        return length_slope(g[idx], h[idx], w[idx])

    enough = enough_for_bootstrap(clusters) and not math.isnan(value)
    ci = None
    if enough:
        low, high = bootstrap_ci(
            np.arange(g.size, dtype=float),
            on_indices,
            n_resamples=resamples,
            seed=seed,
            clusters=list(clusters),
        )
        ci = None if math.isnan(low) else [low, high]
    rho = agreement(
        spearman, list(w), list(g - h), clusters=list(clusters), n_resamples=resamples, seed=seed
    )
    rho_ci = rho.ci95 if enough_for_bootstrap(clusters) and rho.value is not None else None
    return {
        "n": int(g.size),
        "clusters": len(set(clusters)),
        "slope_per_100_words": {
            "value": None if math.isnan(value) else value,
            "ci95": ci,
            "method": "bootstrap",
        },
        "spearman_excess": {
            "value": rho.value,
            "ci95": None if rho_ci is None or math.isnan(rho_ci[0]) else list(rho_ci),
            "method": "bootstrap",
        },
        "words": {"min": int(w.min()), "max": int(w.max())} if w.size else None,
    }
