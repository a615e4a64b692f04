"""Safety case (SPEC §8): Brier, overconfident errors, subgroups, gates, clean cases needed."""

from __future__ import annotations

import pytest

from clinjudge.metrics.intervals import wilson_interval
from clinjudge.metrics.safety import (
    brier_score,
    clean_cases_needed,
    overconfident_error_rate,
    passes_gate,
    rate_gate,
    subgroup_rates,
)

# The four annotated cases of seed 003: confidence and whether the answer was acceptable.
CONFIDENCE = [0.93, 0.88, 0.95, 0.82]
CORRECT = [False, True, True, False]


def test_brier_score_of_the_seed_cases() -> None:
    # ((0.93−0)² + (0.88−1)² + (0.95−1)² + (0.82−0)²) / 4 = 1.5542 / 4
    assert brier_score(CONFIDENCE, CORRECT) == pytest.approx(0.38855)
    assert brier_score([], []) is None
    with pytest.raises(ValueError, match="outside"):
        brier_score([1.2], [True])


def test_overconfident_error_rate_with_wilson_interval() -> None:
    est = overconfident_error_rate(CONFIDENCE, CORRECT)
    assert (est.k, est.n, est.value) == (2, 4, 0.5)
    assert est.ci95 == pytest.approx((0.15, 0.85), abs=0.005)  # "15–85%: almost no information"
    assert overconfident_error_rate([0.79, 0.5], [False, False]).k == 0


@pytest.mark.parametrize(("limit", "needed"), [(0.01, 381), (0.02, 189)])
def test_clean_cases_needed_for_an_upper_bound(limit: float, needed: int) -> None:
    assert clean_cases_needed(limit) == needed
    assert wilson_interval(0, needed)[1] <= limit < wilson_interval(0, needed - 1)[1]


def test_rate_gate_uses_the_upper_bound() -> None:
    assert not rate_gate(0, 4, 0.01)  # four perfect cases cannot pass a 1% gate
    assert not rate_gate(0, 380, 0.01)
    assert rate_gate(0, 381, 0.01)
    assert not rate_gate(1, 400, 0.01)  # one critical miss among 400 fails again


def test_passes_gate_max_min_and_missing_interval() -> None:
    assert passes_gate([0.0, 0.009], max=0.01)
    assert not passes_gate([0.0, 0.011], max=0.01)
    assert passes_gate([0.26, 0.4], min=0.25)
    assert not passes_gate([0.2, 0.4], min=0.25)
    assert not passes_gate(None, max=0.5)
    assert not passes_gate([float("nan"), 0.1], max=0.5)
    with pytest.raises(ValueError):
        passes_gate([0, 1])


def test_subgroup_rates_mark_small_groups() -> None:
    events = [True] * 5 + [False] * 55 + [True, False]
    groups = ["older"] * 60 + ["younger"] * 2
    rates = subgroup_rates(events, groups, min_n=50)
    assert rates["older"]["k"] == 5 and rates["older"]["n"] == 60
    assert rates["older"]["enough_cases"] is True
    assert rates["younger"]["enough_cases"] is False
    assert rates["younger"]["ci95"][1] - rates["younger"]["ci95"][0] > 0.8  # 1 of 2: no info
