"""Wilson intervals (SPEC §8) and percentile bootstraps, item- and cluster-level (SPEC §4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from clinjudge.metrics.intervals import bootstrap_ci, paired_bootstrap_diff, wilson_interval

# --- Wilson ------------------------------------------------------------------------------------


def test_wilson_5_of_10_matches_published_value():
    # Reference: Wilson (1927) score interval, 5/10, z = 1.96 -> [0.2366, 0.7634]
    # (also statsmodels proportion_confint(5, 10, method="wilson")).
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.236590, abs=1e-5)
    assert high == pytest.approx(0.763410, abs=1e-5)


def test_wilson_zero_events_381_is_first_n_under_one_percent():
    # SPEC §8: zero events need about 381 clean cases for the upper bound to reach 1%.
    assert wilson_interval(0, 381)[1] <= 0.01
    assert wilson_interval(0, 380)[1] > 0.01
    # ... and about 189 for 2%.
    assert wilson_interval(0, 189)[1] <= 0.02 < wilson_interval(0, 188)[1]
    # zero events: upper bound is z^2 / (n + z^2), lower bound exactly 0
    assert wilson_interval(0, 381) == (0.0, pytest.approx(1.96**2 / (381 + 1.96**2)))


def test_wilson_hand_computed_formula():
    k, n, z = 3, 40, 1.96
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert wilson_interval(k, n) == pytest.approx((centre - half, centre + half))


@pytest.mark.parametrize(("k", "n"), [(1, 7), (12, 50), (99, 100), (250, 1000)])
def test_wilson_agrees_with_scipy(k, n):
    z = stats.norm.ppf(0.975)
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson_interval(k, n, z=z) == pytest.approx((expected.low, expected.high), abs=1e-9)


def test_wilson_interval_always_contains_the_rate():
    """Rounding put 0/11's lower bound at 2.8e-17 and 6/6's upper one at 1 − 1e-16: the rate
    outside its own interval, and a negative error bar that stopped a compare run's plot."""
    for n in range(1, 1500):
        for k in {0, 1, n // 3, n - 1, n}:
            low, high = wilson_interval(k, n)
            assert 0.0 <= low <= k / n <= high <= 1.0, (k, n, low, high)
        assert wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0


def test_wilson_edges():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(10, 10)
    assert high == 1.0 and 0.69 < low < 0.73
    assert wilson_interval(3, 40, z=2.576)[1] > wilson_interval(3, 40)[1]  # wider at 99%
    with pytest.raises(ValueError):
        wilson_interval(5, 4)


# --- bootstrap ---------------------------------------------------------------------------------


def test_bootstrap_reproducible_and_covers_mean():
    values = np.random.default_rng(7).normal(0.3, 0.1, size=200)
    first = bootstrap_ci(values, seed=11)
    assert first == bootstrap_ci(values, seed=11)
    assert first != bootstrap_ci(values, seed=12)
    low, high = first
    assert low < values.mean() < high
    # standard error of the mean is 0.1 / sqrt(200) ~ 0.0071: a 95% interval is ~ +-0.014
    assert 0.02 < high - low < 0.036


def test_bootstrap_matches_scipy_percentile_bootstrap():
    values = np.random.default_rng(3).exponential(1.0, size=150)
    ours = bootstrap_ci(values, n_resamples=4000, seed=1)
    ref = stats.bootstrap(
        (values,), np.mean, n_resamples=4000, method="percentile", random_state=1
    ).confidence_interval
    assert ours == pytest.approx((ref.low, ref.high), abs=0.03)


def test_bootstrap_level_and_statistic():
    values = np.arange(100, dtype=float)
    narrow = bootstrap_ci(values, level=0.5)
    wide = bootstrap_ci(values, level=0.99)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    low, high = bootstrap_ci(values, np.median)
    assert low <= 49.5 <= high


def test_bootstrap_drops_missing_values_and_handles_empty():
    with_none = bootstrap_ci([0.1, None, 0.3, float("nan"), 0.5], seed=0)
    assert with_none == bootstrap_ci([0.1, 0.3, 0.5], seed=0)
    assert all(math.isnan(v) for v in bootstrap_ci([None, None]))
    assert bootstrap_ci([0.4]) == (0.4, 0.4)


def test_cluster_bootstrap_is_wider_on_clustered_data():
    # 20 notes x 10 claims; claims within a note share the note's level (strong clustering).
    rng = np.random.default_rng(0)
    note_level = rng.normal(0.0, 1.0, size=20)
    values = np.repeat(note_level, 10) + rng.normal(0.0, 0.05, size=200)
    notes = np.repeat(np.arange(20), 10)
    item_low, item_high = bootstrap_ci(values, seed=0)
    cluster_low, cluster_high = bootstrap_ci(values, seed=0, clusters=notes)
    assert (cluster_high - cluster_low) > 2 * (item_high - item_low)
    assert cluster_low < values.mean() < cluster_high


def test_cluster_labels_of_singletons_equal_item_bootstrap():
    values = np.random.default_rng(5).random(50)
    assert bootstrap_ci(values, seed=3, clusters=list(range(50))) == bootstrap_ci(values, seed=3)


def test_cluster_labels_length_mismatch():
    with pytest.raises(ValueError, match="cluster labels"):
        bootstrap_ci([1.0, 2.0], clusters=["a"])


# --- paired difference -------------------------------------------------------------------------


def test_paired_diff_drops_none_and_reports_count():
    a = [0.5, 0.4, None, 0.3, 0.6]
    b = [0.1, 0.1, 0.2, None, 0.2]
    result = paired_bootstrap_diff(a, b, seed=0)
    assert result.n == 3
    assert result.mean == pytest.approx((0.4 + 0.3 + 0.4) / 3)
    low, high = result.ci
    assert 0.3 - 1e-12 <= low <= result.mean <= high <= 0.4 + 1e-12
    mean, ci, n = result  # unpacks as a 3-tuple
    assert (mean, ci, n) == (result.mean, result.ci, 3)


def test_paired_diff_reproducible_and_sign():
    rng = np.random.default_rng(2)
    b = rng.random(40)
    a = b + 0.1 + rng.normal(0, 0.02, size=40)
    first = paired_bootstrap_diff(list(a), list(b), seed=4)
    assert first == paired_bootstrap_diff(list(a), list(b), seed=4)
    assert first.ci[0] > 0.08 and first.ci[1] < 0.12
    flipped = paired_bootstrap_diff(list(b), list(a), seed=4)
    assert flipped.mean == pytest.approx(-first.mean)


def test_paired_diff_without_pairs():
    result = paired_bootstrap_diff([None, 0.1], [0.2, None])
    assert result.n == 0 and math.isnan(result.mean) and all(math.isnan(v) for v in result.ci)
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstrap_diff([0.1], [0.1, 0.2])


def test_bootstrap_leaves_out_undefined_replicates():
    """A statistic that is undefined on some resamples (NaN) does not poison the interval;
    one undefined on most resamples gives no interval."""
    values = [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]

    def spread_or_nan(x):  # undefined unless two positive values were drawn
        return float(np.std(x)) if np.sum(x > 0) >= 2 else float("nan")

    low, high = bootstrap_ci(values, spread_or_nan, n_resamples=500, seed=1)
    assert 0 < low <= high
    rare = [0.0] * 30 + [1.0]
    low, high = bootstrap_ci(rare, spread_or_nan, n_resamples=500, seed=1)
    assert math.isnan(low) and math.isnan(high)


def test_clustered_wilson_widens_by_the_design_effect_of_clustered_events():
    from clinjudge.metrics.intervals import clustered_wilson

    even = clustered_wilson([2, 2, 2, 2], [20, 20, 20, 20])  # every note at 10%: no clustering
    assert even.design_effect == 1.0
    assert even.ci95 == pytest.approx(wilson_interval(8, 80))
    lumped = clustered_wilson([8, 0, 0, 0], [20, 20, 20, 20])  # every event in one note
    assert lumped.value == pytest.approx(0.1) and lumped.design_effect > 3
    assert lumped.ci95[0] < even.ci95[0] and lumped.ci95[1] > even.ci95[1]
    assert lumped.effective_n == pytest.approx(80 / lumped.design_effect)
    none = clustered_wilson([0, 0, 0], [10, 10, 10])
    assert none.ci95 == pytest.approx(wilson_interval(0, 30)) and none.design_effect == 1.0
    assert clustered_wilson([1], [10]) is None and clustered_wilson([1, 0], [10, 0]) is None
