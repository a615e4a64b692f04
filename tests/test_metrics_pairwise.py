"""Pairwise judging in both orders and Elo ratings (SPEC §6)."""

from __future__ import annotations

import pytest

from clinjudge.metrics.pairwise import (
    Match,
    combine_orders,
    elo_intervals,
    elo_ratings,
    expected_score,
)


def test_a_win_must_hold_in_both_orders() -> None:
    assert combine_orders("first", "second") == "a"  # A preferred when first and when second
    assert combine_orders("second", "first") == "b"
    assert combine_orders("first", "first") == "draw"  # position bias: whoever is first wins
    assert combine_orders("tie", "second") == "draw"
    assert combine_orders("tie", "tie") == "draw"


def test_elo_hand_computed_k16_initial_1000() -> None:
    ratings = elo_ratings([Match("A", "B", "a")], initial=1000, k=16)
    assert ratings == {"A": 1008.0, "B": 992.0}
    ratings = elo_ratings([Match("A", "B", "a"), Match("A", "B", "b")], initial=1000, k=16)
    e_a = 1 / (1 + 10 ** ((992 - 1008) / 400))  # 0.523015
    assert expected_score(1008, 992) == pytest.approx(e_a)
    assert ratings["A"] == pytest.approx(1008 - 16 * e_a)
    assert ratings["A"] == pytest.approx(999.6318, abs=1e-4)
    assert ratings["A"] + ratings["B"] == pytest.approx(2000)  # zero-sum
    assert elo_ratings([Match("A", "B", "draw")], k=4) == {"A": 1000.0, "B": 1000.0}


def test_elo_intervals_are_seeded_and_separate_a_dominant_player() -> None:
    matches = [Match("A", "B", "a")] * 15 + [Match("B", "C", "draw")] * 10
    out = elo_intervals(matches, k=16, n_resamples=200, seed=1)
    assert out == elo_intervals(matches, k=16, n_resamples=200, seed=1)
    assert out["A"]["initial"] == 1000 and out["A"]["k"] == 16
    assert out["A"]["ci95"][0] > 1000  # A won every match it played, in every replicate
    assert out["B"]["ci95"][1] < 1000
    low, high = out["C"]["ci95"]
    assert low <= out["C"]["median"] <= high <= 1000  # C only drew with the weakened B
    # Elo depends on order: A-B first then B-C gives C a rating below its bootstrap interval
    assert out["C"]["rating"] < low
