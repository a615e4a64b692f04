"""Paired AUROC of scores given to matched responses (SPEC §4 "Paired AUROC for scores").

For each matched pair i (a correct response and the same response with one injected error):

    u_i     = 1 if score_correct_i > score_error_i, 0.5 on a tie, 0 otherwise
    AUROC   = mean(u_i) = P(score_correct > score_error) + 0.5 · P(tie)
    win / tie / loss = fraction of pairs with u_i = 1 / 0.5 / 0

A scorer that cannot tell the two apart (identical scores) gets exactly 0.5. The 95% interval is
a percentile bootstrap over pairs or, with ``clusters`` (the question each pair came from), over
whole questions. Pairs with a missing score are dropped. Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from clinjudge.metrics.intervals import bootstrap_ci


class PairedAuroc(NamedTuple):
    auroc: float | None
    ci95: tuple[float, float] | None
    win: float | None
    tie: float | None
    loss: float | None
    n: int

    def as_json(self) -> dict:
        return {
            "value": self.auroc,
            "ci95": None if self.ci95 is None else list(self.ci95),
            "win": self.win,
            "tie": self.tie,
            "loss": self.loss,
            "n": self.n,
        }


def pair_outcomes(
    correct_scores: Sequence[float | None], error_scores: Sequence[float | None]
) -> list[float | None]:
    """u_i per pair: 1 win, 0.5 tie, 0 loss, ``None`` when either score is missing."""
    if len(correct_scores) != len(error_scores):
        raise ValueError(f"{len(correct_scores)} correct scores for {len(error_scores)} errors")
    out: list[float | None] = []
    for c, e in zip(correct_scores, error_scores, strict=True):
        if c is None or e is None or math.isnan(c) or math.isnan(e):
            out.append(None)
        else:
            out.append(1.0 if c > e else 0.5 if c == e else 0.0)
    return out


def paired_auroc(
    correct_scores: Sequence[float | None],
    error_scores: Sequence[float | None],
    *,
    clusters: Sequence[object] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> PairedAuroc:
    """Paired AUROC with ties as 0.5, its bootstrap interval, and win/tie/loss rates."""
    u = pair_outcomes(correct_scores, error_scores)
    kept = np.array([x for x in u if x is not None], dtype=float)
    if kept.size == 0:
        return PairedAuroc(None, None, None, None, None, 0)
    ci = bootstrap_ci(u, np.mean, n_resamples=n_resamples, seed=seed, clusters=clusters)
    n = int(kept.size)
    return PairedAuroc(
        auroc=float(kept.mean()),
        ci95=ci,
        win=float(np.sum(kept == 1.0) / n),
        tie=float(np.sum(kept == 0.5) / n),
        loss=float(np.sum(kept == 0.0) / n),
        n=n,
    )
