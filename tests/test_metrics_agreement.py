"""Agreement with human labels: Spearman, Kendall τ-b, Cohen's κ with bootstrap intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from clinjudge.metrics.agreement import (
    agreement,
    agreement_report,
    cohen_kappa,
    kendall_tau_b,
    spearman,
)

X = [1, 2, 3, 4, 5]
Y = [5, 6, 7, 8, 7]


def test_spearman_hand_computed_with_a_tie() -> None:
    # ranks of Y: [1, 2, 3.5, 5, 3.5]; Pearson of ranks = 8 / sqrt(10 · 9.5)
    assert spearman(np.array(X), np.array(Y)) == pytest.approx(8 / math.sqrt(95))


def test_kendall_tau_b_hand_computed_with_a_tie() -> None:
    # 8 concordant, 1 discordant, 1 pair tied in Y only: (8 − 1) / sqrt(9 · 10)
    assert kendall_tau_b(np.array(X), np.array(Y)) == pytest.approx(7 / math.sqrt(90))


def test_cohen_kappa_hand_computed() -> None:
    a = np.array([1, 1, 0, 0, 1, 0])
    b = np.array([1, 0, 0, 0, 1, 1])
    # p_o = 4/6, p_e = 0.5·0.5 + 0.5·0.5 = 0.5 -> κ = (2/3 − 1/2) / (1/2) = 1/3
    assert cohen_kappa(a, b) == pytest.approx(1 / 3)
    assert cohen_kappa(a, a) == pytest.approx(1.0)


def test_bootstrap_interval_keeps_items_paired_and_drops_missing() -> None:
    rng = np.random.default_rng(0)
    human = rng.normal(size=60)
    scores = human + rng.normal(scale=0.5, size=60)
    report = agreement_report(list(scores) + [None], list(human) + [1.0], n_resamples=300)
    for name in ("spearman", "kendall_tau_b"):
        est = report[name]
        assert est.n == 60
        assert 0.5 < est.ci95[0] <= est.value <= est.ci95[1] <= 1.0
    shuffled = agreement(spearman, list(scores), list(rng.permutation(human)), n_resamples=300)
    assert shuffled.ci95[0] < 0.3  # no association -> interval reaches down near 0


def test_kappa_with_clusters_and_constant_input() -> None:
    a = [1, 0, 1, 1, 0, 0, 1, 0]
    b = [1, 0, 1, 0, 0, 0, 1, 1]
    est = agreement(cohen_kappa, a, b, clusters=[1, 1, 2, 2, 3, 3, 4, 4], n_resamples=200)
    assert est.value == pytest.approx(0.5)
    assert agreement(spearman, [1, 1, 1], [1, 2, 3], n_resamples=50).value is None
    assert agreement(spearman, [1], [2]).value is None
