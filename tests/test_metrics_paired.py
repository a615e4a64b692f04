"""Both-Correct Rate and its companions (SPEC §4), with the identities of the SPEC."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clinjudge.metrics.classification import Confusion, f1, sensitivity, specificity
from clinjudge.metrics.paired import (
    PairPrediction,
    across_configurations,
    bcr,
    bcr_upper_bound,
    expected_bcr,
    impute_random,
    independence_ratio,
    mean_independence_ratio,
    pair_marginals,
    paired_metrics,
    random_bcr_baseline,
)

P = PairPrediction


def test_always_error_on_balanced_pairs_identity() -> None:
    # SPEC §4 / seed appendix B: sens 1, spec 0, BCR 0, F1 2/3.
    pairs = [P(True, True)] * 100
    truth = [True, False] * 100
    flags = [True, True] * 100
    c = Confusion.from_labels(truth, flags)
    assert sensitivity(c) == 1 and specificity(c) == 0
    assert f1(c) == pytest.approx(2 / 3)
    assert bcr(pairs).value == 0
    assert pair_marginals(pairs) == (1.0, 0.0)
    assert bcr_upper_bound(1.0, 0.0) == 0.0
    assert independence_ratio(0.0, 1.0, 0.0) is None


def test_hand_computed_bcr_expected_and_ratio() -> None:
    pairs = [P(True, False), P(True, True), P(False, False), P(True, False)]
    estimate = bcr(pairs)
    assert (estimate.value, estimate.k, estimate.n) == (0.5, 2, 4)
    sens, spec = pair_marginals(pairs)
    assert (sens, spec) == (0.75, 0.75)
    assert expected_bcr(sens, spec) == pytest.approx(0.5625)
    assert independence_ratio(0.5, sens, spec) == pytest.approx(0.5 / 0.5625)
    assert bcr_upper_bound(sens, spec) == 0.75


def test_parse_failures_skip_and_seeded_imputation() -> None:
    pairs = [P(True, False), P(None, False), P(True, None), P(False, True)]
    assert bcr(pairs).n == 2  # two pairs with an unparsed member are skipped
    assert bcr(pairs).value == 0.5
    imputed = impute_random(pairs, seed=7)
    assert all(p.parsed for p in imputed)
    assert imputed[0] == pairs[0] and imputed[3] == pairs[3]  # parsed flags are kept
    assert imputed == impute_random(pairs, seed=7)
    assert bcr(pairs, policy="impute", seed=7).n == 4
    with pytest.raises(ValueError, match="skip or impute"):
        bcr(pairs, policy="guess")  # type: ignore[arg-type]


def test_random_baselines_balanced_and_prevalence_calibrated() -> None:
    assert random_bcr_baseline(319, 319) == 0.25
    # MedRECT-JA in the seed: 190 error notes sharing 105 clean notes -> about 22.9%
    assert random_bcr_baseline(190, 105) == pytest.approx(0.229, abs=5e-4)


def test_mean_of_ratios_is_not_ratio_of_means() -> None:
    runs = [(0.1, 0.2), (0.4, 0.4)]  # (BCR, expected BCR) of two models
    ratios = [b / e for b, e in runs]
    assert mean_independence_ratio(ratios) == pytest.approx(0.75)
    assert mean_independence_ratio([*ratios, None]) == pytest.approx(0.75)
    ratio_of_means = sum(b for b, _ in runs) / sum(e for _, e in runs)
    assert ratio_of_means == pytest.approx(0.8333, abs=1e-4)


def test_across_configurations_mean_and_sample_sd() -> None:
    summary = across_configurations({"neutral-greedy": 0.1, "neutral-sampling": 0.2, "c-g": 0.3})
    assert summary["mean"] == pytest.approx(0.2)
    assert summary["sd"] == pytest.approx(0.1)  # n − 1 denominator
    assert across_configurations({"only": 0.4}) == {"mean": 0.4, "sd": None, "n_runs": 1}


def test_paired_metrics_report_block() -> None:
    pairs = [P(True, False)] * 30 + [P(True, True)] * 20 + [P(False, False)] * 10 + [P(None, True)]
    out = paired_metrics(pairs, n_resamples=300)
    assert out["bcr"].value == pytest.approx(0.5)
    assert (out["n_pairs"], out["n_pairs_used"], out["pairs_excluded"]) == (61, 60, 1)
    assert out["pair_sensitivity"] == pytest.approx(50 / 60)
    assert out["pair_specificity"] == pytest.approx(40 / 60)
    assert out["bcr_expected"].value == pytest.approx(50 / 60 * 40 / 60)
    low, high = out["independence_ratio"].ci95
    assert low <= out["independence_ratio"].value <= high
    assert out["random_baseline"] == 0.25


flags = st.one_of(st.none(), st.booleans())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(flags, flags), min_size=1, max_size=60))
def test_bcr_never_exceeds_min_of_sensitivity_and_specificity(raw) -> None:
    pairs = [P(e, c) for e, c in raw]
    estimate = bcr(pairs)
    sens, spec = pair_marginals(pairs)
    if estimate.n == 0:
        assert sens is None and spec is None
        return
    assert estimate.value <= min(sens, spec) + 1e-12
    # the same bound with pointwise sensitivity/specificity of the paired notes
    used = [p for p in pairs if p.parsed]
    c = Confusion.from_labels(
        [True, False] * len(used), [f for p in used for f in (p.error_flag, p.clean_flag)]
    )
    assert estimate.value <= min(sensitivity(c), specificity(c)) + 1e-12
