"""Counts of an arena (SPEC §6, issue 25): the win/tie/loss matrix and the position-bias rate.

**Win/tie/loss matrix.** For each ordered pair of players (a, b): the matches a won against b,
drew, and lost (each match counted once from each side).

**Position bias.** A pairwise judge is asked each pair in both orders. For one pair and one
criterion, the verdict *follows the position* when the same position wins in both orders
(``first`` both times, or ``second`` both times) — so a different text wins depending on
where it was shown. Position-bias rate = such order pairs / all order pairs (with a Wilson 95%
interval); reported with the counts for the first and the second position and the share of
order pairs where only one order saw a tie. The same computation serves a model judge and the
offline one (whose rules are symmetric, so it measures 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from clinjudge.metrics.intervals import wilson_interval
from clinjudge.metrics.pairwise import Match, Preference


def win_matrix(matches: Sequence[Match], players: Sequence[str]) -> dict[str, dict[str, dict]]:
    """``{a: {b: {"win": n, "tie": n, "loss": n}}}`` for every pair of distinct players."""
    table = {a: {b: {"win": 0, "tie": 0, "loss": 0} for b in players if b != a} for a in players}
    for m in matches:
        if m.outcome == "draw":
            table[m.a][m.b]["tie"] += 1
            table[m.b][m.a]["tie"] += 1
        else:
            winner, loser = (m.a, m.b) if m.outcome == "a" else (m.b, m.a)
            table[winner][loser]["win"] += 1
            table[loser][winner]["loss"] += 1
    return table


def position_bias(orders: Iterable[tuple[Preference, Preference]]) -> dict[str, Any]:
    """Position-bias rate of ``(verdict with A first, verdict with B first)`` pairs (module
    docstring)."""
    pairs = list(orders)
    first = sum(1 for x, y in pairs if x == y == "first")
    second = sum(1 for x, y in pairs if x == y == "second")
    one_tie = sum(1 for x, y in pairs if (x == "tie") != (y == "tie"))
    n = len(pairs)
    follows = first + second
    return {
        "n": n,
        "follows_position": follows,
        "first_position": first,
        "second_position": second,
        "tie_in_one_order": one_tie,
        "rate": follows / n if n else None,
        "ci95": list(wilson_interval(follows, n)) if n else None,
    }
