"""Pointwise metrics of the binary error flag (SPEC §4) against hand-computed values."""

from __future__ import annotations

import math

import pytest

from clinjudge.metrics.classification import (
    Confusion,
    balanced_accuracy,
    bias_category,
    bootstrap_metric,
    f1,
    flag_rate,
    mcc,
    pointwise_metrics,
    precision,
    sensitivity,
    specificity,
)


def labels(tp: int, fp: int, tn: int, fn: int) -> tuple[list[bool], list[bool | None]]:
    truth = [True] * tp + [False] * fp + [False] * tn + [True] * fn
    pred: list[bool | None] = [True] * tp + [True] * fp + [False] * tn + [False] * fn
    return truth, pred


def test_hand_computed_confusion_40_10_30_20() -> None:
    c = Confusion.from_labels(*labels(40, 10, 30, 20))
    assert (c.tp, c.fp, c.tn, c.fn, c.n) == (40, 10, 30, 20, 100)
    assert sensitivity(c) == pytest.approx(40 / 60)
    assert specificity(c) == pytest.approx(0.75)
    assert precision(c) == pytest.approx(0.8)
    assert f1(c) == pytest.approx(80 / 110)  # 2TP / (2TP + FP + FN) = 0.72727
    assert balanced_accuracy(c) == pytest.approx((40 / 60 + 0.75) / 2)
    # (40·30 − 10·20) / sqrt(50·60·40·50) = 1000 / 2449.49
    assert mcc(c) == pytest.approx(1000 / math.sqrt(50 * 60 * 40 * 50))
    assert mcc(c) == pytest.approx(0.408248, abs=1e-6)
    assert flag_rate(c) == 0.5


def test_always_error_on_balanced_set_has_f1_two_thirds_and_no_mcc() -> None:
    truth = [True] * 50 + [False] * 50
    c = Confusion.from_labels(truth, [True] * 100)
    assert sensitivity(c) == 1.0
    assert specificity(c) == 0.0
    assert precision(c) == 0.5
    assert f1(c) == pytest.approx(2 / 3)
    assert balanced_accuracy(c) == 0.5
    assert mcc(c) is None  # a constant predictor: undefined, not 0
    assert flag_rate(c) == 1.0


def test_unparsed_predictions_are_skipped_not_counted() -> None:
    c = Confusion.from_labels([True, True, False, False], [True, None, None, False])
    assert (c.tp, c.fp, c.tn, c.fn) == (1, 0, 1, 0)


def test_undefined_metrics_are_none() -> None:
    only_clean = Confusion(tn=3, fp=1)
    assert sensitivity(only_clean) is None
    assert balanced_accuracy(only_clean) is None
    assert precision(Confusion(tn=2, fn=2)) is None
    assert flag_rate(Confusion()) is None


def test_length_mismatch_raises() -> None:
    with pytest.raises(ValueError, match="labels"):
        Confusion.from_labels([True], [True, False])


def test_bias_category_point_rule_and_interval_rule() -> None:
    assert bias_category(0.7) == "yes-bias"
    assert bias_category(0.3) == "no-bias"
    assert bias_category(0.5) == "neutral"
    assert bias_category(0.52, margin=0.05) == "neutral"
    assert bias_category(0.6, parity=0.64) == "no-bias"  # unbalanced set: parity = prevalence
    assert bias_category(None) is None
    assert bias_category(0.508, ci95=(0.469, 0.546)) == "neutral"
    assert bias_category(0.9, ci95=(0.86, 0.93)) == "yes-bias"
    assert bias_category(0.1, ci95=(0.07, 0.14)) == "no-bias"


def test_pointwise_metrics_intervals() -> None:
    truth, pred = labels(40, 10, 30, 20)
    m = pointwise_metrics(truth, pred, n_resamples=300)
    assert m["sensitivity"].method == "wilson" and (m["sensitivity"].k, m["sensitivity"].n) == (
        40,
        60,
    )
    assert m["precision"].n == 50 and m["flag_rate"].n == 100
    for name in ("f1", "balanced_accuracy", "mcc"):
        low, high = m[name].ci95
        assert m[name].method == "bootstrap"
        assert low < m[name].value < high
    assert m["mcc"].as_json()["ci95"][0] < 0.408 < m["mcc"].as_json()["ci95"][1]


def test_bootstrap_is_seeded_and_cluster_aware() -> None:
    truth, pred = labels(40, 10, 30, 20)
    a = bootstrap_metric(f1, truth, pred, n_resamples=300, seed=3)
    b = bootstrap_metric(f1, truth, pred, n_resamples=300, seed=3)
    assert a == b
    # notes resampled in clusters of identical rows: the interval gets wider
    clusters = [i // 10 for i in range(100)]
    wide = bootstrap_metric(f1, truth, pred, n_resamples=300, seed=3, clusters=clusters)
    assert wide.ci95[1] - wide.ci95[0] > a.ci95[1] - a.ci95[0]
