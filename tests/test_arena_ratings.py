"""The arena's statistics (issue 25, SPEC §6): Bradley–Terry on matches with a known order,
the win/tie/loss matrix, the position-bias rate, Elo over shuffled orders with bootstrap
intervals over items, and which pairs are judged."""

from __future__ import annotations

import random

import pytest

from clinjudge.arena.pairing import arena_pairs
from clinjudge.datasets.items import Item
from clinjudge.metrics.arena_ratings import arena_ratings
from clinjudge.metrics.arena_tables import position_bias, win_matrix
from clinjudge.metrics.bradley_terry import bradley_terry
from clinjudge.metrics.pairwise import Match

#: Strengths of a known order: a > b > c > d (odds 2:1 between neighbours).
STRENGTH = {"a": 8.0, "b": 4.0, "c": 2.0, "d": 1.0}


def simulated(n_items: int, seed: int = 3) -> dict[str, list[Match]]:
    """Every pair once per item, the winner drawn from the Bradley–Terry probabilities."""
    rng = random.Random(seed)
    players = list(STRENGTH)
    out: dict[str, list[Match]] = {}
    for item in range(n_items):
        matches = []
        for i, x in enumerate(players):
            for y in players[i + 1 :]:
                p = STRENGTH[x] / (STRENGTH[x] + STRENGTH[y])
                matches.append(Match(x, y, "a" if rng.random() < p else "b"))
        out[f"e{item}"] = matches
    return out


def test_bradley_terry_recovers_a_known_order_and_its_odds():
    matches = [m for ms in simulated(400).values() for m in ms]
    fitted = bradley_terry(matches, prior=0)
    assert sorted(fitted, key=lambda p: -fitted[p]) == ["a", "b", "c", "d"]
    gap = fitted["a"] - fitted["d"]  # true: 400·log10(8) = 361
    assert gap == pytest.approx(361, abs=60)


def test_bradley_terry_of_equal_records_is_the_initial_rating_and_the_prior_keeps_it_finite():
    cycle = [Match("a", "b", "a"), Match("b", "c", "a"), Match("c", "a", "a")]
    assert bradley_terry(cycle) == pytest.approx({"a": 1000, "b": 1000, "c": 1000})
    unbeaten = [Match("a", "b", "a")] * 3 + [Match("b", "c", "a")] * 3
    with_prior = bradley_terry(unbeaten)
    assert with_prior["a"] > with_prior["b"] > with_prior["c"]
    assert all(abs(r - 1000) < 400 for r in with_prior.values())
    assert bradley_terry(unbeaten, prior=0)["c"] is None  # never won, never drew


def test_the_win_matrix_counts_each_match_from_both_sides():
    matches = [Match("a", "b", "a"), Match("b", "a", "a"), Match("a", "b", "draw")]
    table = win_matrix(matches, ["a", "b", "c"])
    assert table["a"]["b"] == {"win": 1, "tie": 1, "loss": 1}
    assert table["b"]["a"] == {"win": 1, "tie": 1, "loss": 1}
    assert table["a"]["c"] == {"win": 0, "tie": 0, "loss": 0}
    assert "a" not in table["a"]


def test_position_bias_counts_verdicts_that_follow_the_position():
    orders = [("first", "first"), ("first", "second"), ("second", "second"), ("tie", "first")]
    bias = position_bias(orders)
    assert (bias["follows_position"], bias["first_position"], bias["second_position"]) == (
        2,
        1,
        1,
    )
    assert bias["rate"] == 0.5 and bias["tie_in_one_order"] == 1
    assert bias["ci95"][0] < 0.5 < bias["ci95"][1]
    assert position_bias([])["rate"] is None


def test_elo_intervals_over_items_separate_the_strongest_from_the_weakest():
    ratings = arena_ratings(simulated(40), k=16, n_orders=20, n_replicates=200, seed=1)
    elo = {p: r["elo"] for p, r in ratings.items()}
    assert sorted(elo, key=lambda p: -elo[p]) == ["a", "b", "c", "d"]
    assert ratings["a"]["elo_ci95"][0] > ratings["d"]["elo_ci95"][1]
    assert ratings["a"]["bt_ci95"][0] > ratings["d"]["bt_ci95"][1]
    for r in ratings.values():
        assert r["elo_ci95"][0] <= r["elo"] <= r["elo_ci95"][1]
        assert r["n_matches"] == 40 * 3
    again = arena_ratings(simulated(40), k=16, n_orders=20, n_replicates=200, seed=1)
    assert again == ratings  # one seeded generator: the same numbers


def items_of(encounter: str, systems: list[str]) -> list[Item]:
    return [
        Item(
            id=f"{encounter}/{s}",
            transcript="t",
            note=s,
            meta={"encounter": encounter, "system": s},
        )
        for s in systems
    ]


def test_all_pairs_or_a_seeded_sample_of_pairs_per_encounter():
    items = items_of("e1", ["r", "x", "y", "z"]) + items_of("e2", ["r", "x"])
    every = arena_pairs(items, ["r", "x", "y", "z"])
    assert [p.id for p in every[:3]] == ["e1/r~x", "e1/r~y", "e1/r~z"]
    assert len(every) == 6 + 1  # e2 has two systems' notes only
    assert every[0].meta["a"] == "e1/r" and every[0].meta["b"] == "e1/x"
    some = arena_pairs(items, ["r", "x", "y", "z"], per_item=2, seed=5)
    assert len([p for p in some if p.meta["encounter"] == "e1"]) == 2
    alone = arena_pairs(items[:4], list("rxyz"), per_item=2, seed=5)  # e1 without e2
    assert [p.id for p in some] == [p.id for p in alone] + ["e2/r~x"]


def test_fewer_items_than_the_bootstrap_minimum_give_no_interval():
    ratings = arena_ratings(simulated(4), n_orders=5, n_replicates=50)
    assert all(r["elo_ci95"] is None and r["bt_ci95"] is None for r in ratings.values())
    assert {r["ci_note"] for r in ratings.values()} == {"n too small"}
    ratings = arena_ratings(simulated(5), n_orders=5, n_replicates=50)
    assert all(r["elo_ci95"] is not None and r["ci_note"] is None for r in ratings.values())
