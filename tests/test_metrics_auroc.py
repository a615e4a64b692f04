"""Paired AUROC of matched scores with ties as 0.5 (SPEC §4)."""

from __future__ import annotations

import pytest

from clinjudge.metrics.auroc import pair_outcomes, paired_auroc


def test_identical_scores_give_exactly_one_half() -> None:
    scores = [0.3, 0.9, 0.5, 0.5, 0.1]
    result = paired_auroc(scores, scores, n_resamples=200)
    assert result.auroc == 0.5
    assert (result.win, result.tie, result.loss) == (0.0, 1.0, 0.0)
    assert result.ci95 == (0.5, 0.5)


def test_hand_computed_wins_ties_losses() -> None:
    correct = [3, 2, 1, 5]
    error = [1, 2, 2, 4]
    assert pair_outcomes(correct, error) == [1.0, 0.5, 0.0, 1.0]
    result = paired_auroc(correct, error, n_resamples=200)
    assert result.auroc == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert (result.win, result.tie, result.loss, result.n) == (0.5, 0.25, 0.25, 4)


def test_missing_scores_dropped_and_cluster_bootstrap() -> None:
    correct = [5, 4, None, 3, 2, 9]
    error = [1, 4, 3, 5, 1, 2]
    result = paired_auroc(correct, error, clusters=["q1", "q1", "q2", "q2", "q3", "q3"])
    assert result.n == 5
    assert result.auroc == pytest.approx((1 + 0.5 + 0 + 1 + 1) / 5)
    low, high = result.ci95
    assert 0 <= low <= result.auroc <= high <= 1
    assert paired_auroc([None], [1.0]).auroc is None
    with pytest.raises(ValueError):
        paired_auroc([1.0], [1.0, 2.0])
