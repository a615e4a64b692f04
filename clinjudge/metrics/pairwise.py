"""Pairwise judging and Elo ratings (SPEC §6).

**Both orders.** The judge sees answers A and B twice, A first then B first. A wins only when it
is preferred in *both* presentations; likewise B; anything else (a tie, or a preference that
flips with the order — position bias) is a draw.

**Elo.** Ratings start at ``initial`` (1000). For each match in order, with
E_A = 1 / (1 + 10^((R_B − R_A)/400)) and S_A ∈ {1, 0.5, 0}:
R_A ← R_A + K·(S_A − E_A), R_B ← R_B + K·((1 − S_A) − (1 − E_A)). K is stated by the caller
(default 16; 4 gives slower, steadier ratings). Elo depends on match order, so intervals come
from a percentile bootstrap: each replicate draws matches with replacement, in random order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from clinjudge.metrics.intervals import bootstrap_ci

Preference = Literal["first", "second", "tie"]
MatchOutcome = Literal["a", "b", "draw"]
INITIAL_RATING = 1000.0
K_FACTOR = 16.0
SCALE = 400.0


def combine_orders(a_first: Preference, b_first: Preference) -> MatchOutcome:
    """Outcome of A vs B from the verdict with A shown first and the verdict with B shown first."""
    a_wins = a_first == "first" and b_first == "second"
    b_wins = a_first == "second" and b_first == "first"
    return "a" if a_wins else "b" if b_wins else "draw"


@dataclass(frozen=True)
class Match:
    a: str
    b: str
    outcome: MatchOutcome

    @property
    def score_a(self) -> float:
        return {"a": 1.0, "b": 0.0, "draw": 0.5}[self.outcome]


def expected_score(rating_a: float, rating_b: float, scale: float = SCALE) -> float:
    """E_A = 1 / (1 + 10^((R_B − R_A)/scale))."""
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / scale))


def elo_ratings(
    matches: Sequence[Match], *, initial: float = INITIAL_RATING, k: float = K_FACTOR
) -> dict[str, float]:
    """Sequential Elo over ``matches`` in the given order; every player starts at ``initial``."""
    ratings: dict[str, float] = {}
    for m in matches:
        ra, rb = ratings.setdefault(m.a, initial), ratings.setdefault(m.b, initial)
        delta = k * (m.score_a - expected_score(ra, rb))
        ratings[m.a], ratings[m.b] = ra + delta, rb - delta
    return ratings


def elo_intervals(
    matches: Sequence[Match],
    *,
    initial: float = INITIAL_RATING,
    k: float = K_FACTOR,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, dict[str, object]]:
    """Per player: the rating in the given match order, the median and 95% percentile interval
    of the bootstrap replicates (matches resampled with replacement, in random order). Each
    player's interval comes from the same seeded replicates (computed once). The fixed-order
    rating can fall outside the interval when the order matters — the reason to report both."""
    matches = list(matches)
    point = elo_ratings(matches, initial=initial, k=k)
    replicates: dict[bytes, dict[str, float]] = {}

    def rating_of(player: str):
        def statistic(index: np.ndarray) -> float:
            key = index.tobytes()
            if key not in replicates:
                drawn = [matches[i] for i in index.astype(int)]
                replicates[key] = elo_ratings(drawn, initial=initial, k=k)
            return replicates[key].get(player, initial)

        return statistic

    indices = np.arange(len(matches), dtype=float)
    out: dict[str, dict[str, object]] = {}
    for player in sorted(point):
        ci = bootstrap_ci(indices, rating_of(player), n_resamples=n_resamples, seed=seed)
        median = bootstrap_ci(  # a vanishing level puts both quantiles at the median
            indices, rating_of(player), n_resamples=n_resamples, seed=seed, level=1e-9
        )[0]
        out[player] = {
            "rating": point[player],
            "median": median,
            "ci95": list(ci),
            "initial": initial,
            "k": k,
        }
    return out
