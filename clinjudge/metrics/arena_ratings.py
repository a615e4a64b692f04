"""Arena ratings with intervals over items (SPEC §6, issue 25).

**Elo** (the update rule of :mod:`clinjudge.metrics.pairwise`: every player starts at
``initial``, E_A = 1/(1 + 10^((R_B − R_A)/400)), R_A ← R_A + K·(S_A − E_A), R_B the mirror
image). Elo depends on the order of the matches, so the point rating is the **mean over
``n_orders`` random orders** of all matches; the rating in the data's own order is reported
beside it (``fixed_order``).

**Bradley–Terry** (:mod:`clinjudge.metrics.bradley_terry`) on all matches: order-free.

**Intervals: bootstrap over items.** Matches of one item (an encounter: all its pairs of
systems) share a source and are not independent, so each of ``n_replicates`` replicates draws
*items* with replacement, keeps every match of each drawn item, shuffles the match order, and
rates them (Elo and Bradley–Terry). The 95% interval is the 2.5th–97.5th percentile of a
player's replicate ratings; a replicate in which a player has no match, or (Bradley–Terry) no
finite rating, does not count for that player. With fewer than
:data:`~clinjudge.metrics.intervals.MIN_BOOTSTRAP_UNITS` items no replicate is drawn: the
intervals are ``None`` and ``ci_note`` says "n too small" (a bootstrap over two encounters
gives a zero-width interval that reads as certainty). All randomness comes from one seeded
``numpy.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from clinjudge.metrics.bradley_terry import bradley_terry
from clinjudge.metrics.intervals import MIN_BOOTSTRAP_UNITS, TOO_FEW
from clinjudge.metrics.pairwise import INITIAL_RATING, Match, elo_ratings


def arena_ratings(
    matches_by_item: Mapping[str, Sequence[Match]],
    *,
    initial: float = INITIAL_RATING,
    k: float = 4.0,
    n_orders: int = 100,
    n_replicates: int = 1000,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Per player: ``elo`` (mean over shuffled orders), ``elo_ci95``, ``elo_fixed_order``,
    ``bt`` and ``bt_ci95``, ``ci_note`` and ``n_matches`` (module docstring)."""
    items = list(matches_by_item)
    everything = [m for item in items for m in matches_by_item[item]]
    players = sorted({p for m in everything for p in (m.a, m.b)})
    rng = np.random.default_rng(seed)
    orders = [_shuffled(everything, rng) for _ in range(n_orders)]
    shuffled = [elo_ratings(o, initial=initial, k=k) for o in orders]
    elo_draws: dict[str, list[float]] = {p: [] for p in players}
    bt_draws: dict[str, list[float]] = {p: [] for p in players}
    too_few = len(items) < MIN_BOOTSTRAP_UNITS
    for _ in range(0 if too_few else n_replicates):
        drawn = rng.integers(0, len(items), size=len(items))
        sample = [m for i in drawn for m in matches_by_item[items[i]]]
        sample = _shuffled(sample, rng)
        for p, r in elo_ratings(sample, initial=initial, k=k).items():
            elo_draws[p].append(r)
        for p, r in bradley_terry(sample, initial=initial).items():
            if r is not None:
                bt_draws[p].append(r)
    fixed = elo_ratings(everything, initial=initial, k=k)
    bt = bradley_terry(everything, initial=initial)
    return {
        p: {
            "elo": float(np.mean([s[p] for s in shuffled])) if shuffled else fixed[p],
            "elo_ci95": _percentiles(elo_draws[p]),
            "elo_fixed_order": fixed[p],
            "bt": bt[p],
            "bt_ci95": _percentiles(bt_draws[p]),
            "ci_note": TOO_FEW if too_few else None,
            "n_matches": sum(1 for m in everything if p in (m.a, m.b)),
        }
        for p in players
    }


def _shuffled(matches: list[Match], rng: np.random.Generator) -> list[Match]:
    return [matches[i] for i in rng.permutation(len(matches))]


def _percentiles(draws: list[float]) -> list[float] | None:
    if not draws:
        return None
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return [float(lo), float(hi)]
