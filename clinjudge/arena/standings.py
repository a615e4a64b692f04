"""The arena's standings from its judged pairs (SPEC §6, issue 25): per criterion and overall,
Elo over shuffled orders and Bradley–Terry with bootstrap intervals over encounters
(:func:`clinjudge.metrics.arena_ratings.arena_ratings`), the win/tie/loss matrix, and the
position-bias rate (:mod:`clinjudge.metrics.arena_tables`).

A pair row's ``outcomes[criterion]`` is ``a``, ``b`` or ``draw`` between ``system_a`` and
``system_b``; rows without outcomes (failed pairs) are left out and counted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from clinjudge.arena.preference import CRITERIA, OVERALL
from clinjudge.metrics.arena_ratings import arena_ratings
from clinjudge.metrics.arena_tables import position_bias, win_matrix
from clinjudge.metrics.pairwise import INITIAL_RATING, Match


@dataclass(frozen=True)
class RatingSettings:
    """Elo's initial rating and K, the shuffled orders averaged for the point rating, the
    bootstrap replicates over encounters, and the seed of all of it."""

    initial: float = INITIAL_RATING
    k: float = 4.0
    n_orders: int = 100
    replicates: int = 1000
    seed: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def matches_by_encounter(rows: list[dict[str, Any]], criterion: str) -> dict[str, list[Match]]:
    """The matches of one criterion, grouped by encounter (the bootstrap's unit)."""
    grouped: dict[str, list[Match]] = {}
    for row in rows:
        if row.get("outcomes"):
            match = Match(row["system_a"], row["system_b"], row["outcomes"][criterion])
            grouped.setdefault(row["encounter"], []).append(match)
    return grouped


def standings(
    rows: list[dict[str, Any]],
    systems: list[str],
    settings: RatingSettings,
    *,
    criteria: tuple[str, ...] = (OVERALL, *CRITERIA),
) -> dict[str, Any]:
    """``{"criteria": {criterion: {"ratings", "win_matrix", "position_bias"}},
    "leaderboard": [...], "n_pairs", "n_failed"}``; the leaderboard orders the systems by
    overall Elo, with their Bradley–Terry rank beside."""
    judged = [r for r in rows if r.get("outcomes")]
    per: dict[str, Any] = {}
    for criterion in criteria:
        grouped = matches_by_encounter(judged, criterion)
        flat = [m for ms in grouped.values() for m in ms]
        present = [s for s in systems if any(s in (m.a, m.b) for m in flat)]
        per[criterion] = {
            "ratings": arena_ratings(
                grouped,
                initial=settings.initial,
                k=settings.k,
                n_orders=settings.n_orders,
                n_replicates=settings.replicates,
                seed=settings.seed,
            ),
            "win_matrix": win_matrix(flat, present),
            "position_bias": position_bias(
                (r["orders"]["ab"][criterion], r["orders"]["ba"][criterion]) for r in judged
            ),
        }
    overall = per[criteria[0]]["ratings"]
    ranked = sorted(overall, key=lambda s: -overall[s]["elo"])
    by_bt = sorted(overall, key=lambda s: -(overall[s]["bt"] or float("-inf")))
    leaderboard = [
        {"rank": n + 1, "system": s, **overall[s], "bt_rank": by_bt.index(s) + 1}
        for n, s in enumerate(ranked)
    ]
    return {
        "criteria": per,
        "leaderboard": leaderboard,
        "n_pairs": len(rows),
        "n_failed": len(rows) - len(judged),
        "n_encounters": len({r["encounter"] for r in judged}),
    }
