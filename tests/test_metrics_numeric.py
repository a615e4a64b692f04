"""Numeric answers (SPEC §7): 5% relative tolerance, an explicit rule for a zero truth."""

from __future__ import annotations

import pytest

from clinjudge.metrics.numeric import answer_correct, exact_match, within_tolerance


def test_five_percent_relative_tolerance() -> None:
    assert within_tolerance(104.9, 100)
    assert within_tolerance(95.0, 100)
    assert not within_tolerance(105.1, 100)
    assert within_tolerance(-96, -100)  # |truth| scales the tolerance
    assert within_tolerance("1,020", "1000")
    assert not within_tolerance("about 100", 100)


def test_zero_truth_uses_the_stated_absolute_tolerance() -> None:
    assert within_tolerance(0.04, 0)
    assert not within_tolerance(0.06, 0)
    assert within_tolerance(0, 0, zero_abs_tol=0.0)
    assert not within_tolerance(0.001, 0, zero_abs_tol=0.0)
    with pytest.raises(ValueError, match="truth"):
        within_tolerance(1, "n/a")


def test_discrete_targets_by_exact_match() -> None:
    assert exact_match("3", "3.0")
    assert exact_match(" Yes ", "yes")
    assert not exact_match("4", "3")
    assert answer_correct("12/03/2021", "12/03/2021", continuous=False)
    assert not answer_correct(3.1, 3, continuous=False)
    assert answer_correct(3.1, 3, continuous=True)
