"""The Bradley–Terry fit of pairwise matches (SPEC §6, issue 25): an order-free companion to
Elo.

Model: P(i beats j) = p_i / (p_i + p_j), strengths p > 0. A draw counts as half a win to each
side. With W_i the wins of i (draws halved) and n_ij the matches between i and j, the
maximum-likelihood strengths are the fixed point of the minorisation–maximisation update
(Hunter 2004, *Annals of Statistics* 32:384)::

    p_i ← W_i / Σ_{j≠i} n_ij / (p_i + p_j)

iterated until no strength moves by more than ``tol`` (relative), each sweep rescaled to a
geometric mean of 1. Reported on the Elo scale, ``rating_i = initial + 400·log10(p_i)``, so
a 400-point gap is 10:1 odds as in Elo.

A player who never lost (or never won) has no finite maximum-likelihood strength, and the
iteration would run away. So every pair of players gets ``prior`` virtual draws (default 1):
W_i gains prior·(n−1)/2 and n_ij gains prior. This is a weak pull toward equal strengths
that keeps every rating finite and connects every player to every other; with many matches it
moves ratings little. ``prior=0`` fits the plain likelihood, and then a player with no win and
no draw gets ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from clinjudge.metrics.pairwise import INITIAL_RATING, SCALE, Match


def win_counts(matches: Sequence[Match], players: Sequence[str]) -> np.ndarray:
    """``W[i, j]``: wins of player i over player j, a draw counting ½ to each."""
    index = {p: n for n, p in enumerate(players)}
    wins = np.zeros((len(players), len(players)))
    for m in matches:
        a, b = index[m.a], index[m.b]
        wins[a, b] += m.score_a
        wins[b, a] += 1.0 - m.score_a
    return wins


def bradley_terry(
    matches: Sequence[Match],
    *,
    initial: float = INITIAL_RATING,
    prior: float = 1.0,
    tol: float = 1e-7,
    max_iter: int = 10_000,
) -> dict[str, float | None]:
    """Each player's Bradley–Terry rating on the Elo scale (module docstring)."""
    players = sorted({p for m in matches for p in (m.a, m.b)})
    if not players:
        return {}
    wins = win_counts(matches, players) + prior / 2 * (1 - np.eye(len(players)))
    games = wins + wins.T
    total_wins = wins.sum(axis=1)
    alive = total_wins > 0
    strength = alive.astype(float)
    for _ in range(max_iter):
        pair_sum = strength[:, None] + strength[None, :]
        pair_sum[pair_sum == 0] = np.inf  # two players without a win: no term
        new = total_wins / np.maximum((games / pair_sum).sum(axis=1), 1e-300)
        new /= math.exp(np.log(new[alive]).mean())
        moved = np.abs(new[alive] - strength[alive]).max() / strength[alive].min()
        strength = new
        if moved < tol:
            break
    return {
        p: (initial + SCALE * math.log10(s)) if s > 0 else None
        for p, s in zip(players, strength, strict=True)
    }
