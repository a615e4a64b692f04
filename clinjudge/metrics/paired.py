"""Paired evaluation of an error detector: Both-Correct Rate and its baselines (SPEC §4).

A pair is an erroneous note and its correct twin; the detector judged each note on its own.

    BCR                 = #pairs (error note flagged AND twin cleared) / #pairs
    expected BCR        = sensitivity × specificity        (conditional independence)
    independence ratio  = BCR / (sensitivity × specificity)
    upper bound         : BCR ≤ min(sensitivity, specificity)
    random baseline     = q·(1 − q) for a coin that flags with probability q; q = 0.5 on balanced
                          pairs gives 25%; with reused clean notes q = prevalence π of erroneous
                          notes among the distinct notes (prevalence-calibrated baseline)

Here sensitivity and specificity are the marginals *of the pairs used for BCR* (the erroneous
members flagged, the clean members cleared), so the bound holds exactly. Parse failures: a pair
with either member unparsed is excluded (``skip``, the reported value); ``impute`` replaces each
missing prediction with a seeded coin flip, as a robustness check. Pure functions; no I/O.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from clinjudge.metrics.classification import Estimate, wilson_estimate
from clinjudge.metrics.intervals import bootstrap_ci

ParsePolicy = Literal["skip", "impute"]


@dataclass(frozen=True)
class PairPrediction:
    """The flags a detector gave the two members of one pair (``None`` = unparsed)."""

    error_flag: bool | None
    clean_flag: bool | None

    @property
    def parsed(self) -> bool:
        return self.error_flag is not None and self.clean_flag is not None

    @property
    def both_correct(self) -> bool | None:
        """Erroneous note flagged AND its twin cleared; ``None`` when a member is unparsed."""
        if not self.parsed:
            return None
        return bool(self.error_flag) and not self.clean_flag


def impute_random(
    pairs: Sequence[PairPrediction], *, seed: int = 0, p_flag: float = 0.5
) -> list[PairPrediction]:
    """Each missing prediction replaced by a seeded coin that flags with ``p_flag``."""
    rng = random.Random(seed)

    def fill(flag: bool | None) -> bool:
        return (rng.random() < p_flag) if flag is None else flag

    return [PairPrediction(fill(p.error_flag), fill(p.clean_flag)) for p in pairs]


def usable(pairs: Iterable[PairPrediction], policy: ParsePolicy = "skip", *, seed: int = 0):
    """The pairs BCR is computed on: parsed pairs (``skip``) or all pairs after imputation."""
    pairs = list(pairs)
    if policy == "impute":
        return impute_random(pairs, seed=seed)
    if policy != "skip":
        raise ValueError(f"parse-failure policy must be skip or impute, got {policy!r}")
    return [p for p in pairs if p.parsed]


def bcr(
    pairs: Sequence[PairPrediction], *, policy: ParsePolicy = "skip", seed: int = 0
) -> Estimate:
    """Both-Correct Rate with its Wilson interval over the pairs used."""
    used = usable(pairs, policy, seed=seed)
    return wilson_estimate(sum(bool(p.both_correct) for p in used), len(used))


def pair_marginals(pairs: Sequence[PairPrediction]) -> tuple[float | None, float | None]:
    """(sensitivity, specificity) over parsed pairs: flagged error members / pairs, cleared
    clean members / pairs."""
    used = [p for p in pairs if p.parsed]
    if not used:
        return None, None
    sens = sum(bool(p.error_flag) for p in used) / len(used)
    spec = sum(not p.clean_flag for p in used) / len(used)
    return sens, spec


def expected_bcr(sens: float | None, spec: float | None) -> float | None:
    """sensitivity × specificity: the BCR of a detector judging the two notes independently."""
    return None if sens is None or spec is None else sens * spec


def independence_ratio(
    bcr_value: float | None, sens: float | None, spec: float | None
) -> float | None:
    """BCR / (sensitivity × specificity); < 1 when errors on the two members go together.
    Undefined when the product is 0 (e.g. an always-error detector)."""
    expected = expected_bcr(sens, spec)
    if bcr_value is None or not expected:
        return None
    return bcr_value / expected


def bcr_upper_bound(sens: float | None, spec: float | None) -> float | None:
    """min(sensitivity, specificity): both-correct pairs are a subset of either marginal."""
    return None if sens is None or spec is None else min(sens, spec)


def random_bcr_baseline(n_error_notes: int, n_clean_notes: int) -> float:
    """Prevalence-calibrated random baseline π(1 − π), π = erroneous / all distinct notes.

    1:1 pairs give 0.25; 190 error notes sharing 105 clean notes give about 0.229."""
    total = n_error_notes + n_clean_notes
    if total <= 0:
        raise ValueError("need at least one note")
    prevalence = n_error_notes / total
    return prevalence * (1 - prevalence)


def mean_independence_ratio(ratios: Iterable[float | None]) -> float | None:
    """Average of per-model (or per-run) independence ratios — not the ratio of mean BCR to
    mean expected BCR (SPEC §4). Undefined ratios are left out."""
    values = [r for r in ratios if r is not None and math.isfinite(r)]
    return sum(values) / len(values) if values else None


def across_configurations(values: Mapping[str, float | None]) -> dict[str, float | int | None]:
    """Mean and sample standard deviation (n − 1) of one metric over prompt × decoding
    configurations (SPEC §4 "prompt matrix"); ``None`` values are left out."""
    xs = [v for v in values.values() if v is not None and math.isfinite(v)]
    mean = float(np.mean(xs)) if xs else None
    sd = float(np.std(xs, ddof=1)) if len(xs) > 1 else None
    return {"mean": mean, "sd": sd, "n_runs": len(xs)}


# --------------------------------------------------------------------------- with intervals


#: One float per pair for the bootstrap: 2·error_flag + clean_flag (NaN = excluded).
def _codes(pairs: Sequence[PairPrediction]) -> np.ndarray:
    return np.array(
        [
            2 * int(bool(p.error_flag)) + int(bool(p.clean_flag)) if p.parsed else math.nan
            for p in pairs
        ],
        dtype=float,
    )


def _from_codes(codes: np.ndarray) -> tuple[float, float, float]:
    """(BCR, sensitivity, specificity) of a sample of pair codes."""
    counts = np.bincount(codes.astype(int), minlength=4) / max(len(codes), 1)
    # code 2 = error flagged, clean cleared; 3 = both flagged; 0 = neither; 1 = only clean flagged
    return float(counts[2]), float(counts[2] + counts[3]), float(counts[0] + counts[2])


def _nan(x: float | None) -> float:
    return math.nan if x is None else x


def paired_metrics(
    pairs: Sequence[PairPrediction],
    *,
    n_error_notes: int | None = None,
    n_clean_notes: int | None = None,
    clusters: Sequence[object] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, object]:
    """BCR (skip, Wilson) and its random-imputation variant, expected BCR and independence ratio
    (percentile bootstrap over pairs, or over ``clusters`` of pairs), the upper bound and the
    random baseline (prevalence-calibrated when distinct note counts are given, else 0.25)."""
    skipped = bcr(pairs, policy="skip")
    imputed = bcr(pairs, policy="impute", seed=seed)
    sens, spec = pair_marginals(pairs)
    codes = _codes(pairs)

    def boot(stat) -> tuple[float, float]:
        return bootstrap_ci(codes, stat, n_resamples=n_resamples, seed=seed, clusters=clusters)

    def expected_stat(sample: np.ndarray) -> float:
        _, s, c = _from_codes(sample)
        return s * c

    def ratio_stat(sample: np.ndarray) -> float:
        b, s, c = _from_codes(sample)
        return _nan(independence_ratio(b, s, c))

    n_err = n_error_notes if n_error_notes is not None else len(pairs)
    n_clean = n_clean_notes if n_clean_notes is not None else len(pairs)
    expected = expected_bcr(sens, spec)
    ratio = independence_ratio(skipped.value, sens, spec)
    return {
        "bcr": skipped,
        "bcr_imputed": imputed,
        "bcr_expected": Estimate(expected, boot(expected_stat), "bootstrap"),
        "independence_ratio": Estimate(
            ratio, boot(ratio_stat) if ratio is not None else None, "bootstrap"
        ),
        "bcr_upper_bound": bcr_upper_bound(sens, spec),
        "pair_sensitivity": sens,
        "pair_specificity": spec,
        "random_baseline": random_bcr_baseline(n_err, n_clean) if n_err + n_clean else None,
        "n_pairs": len(pairs),
        "n_pairs_used": skipped.n,
        "pairs_excluded": len(pairs) - (skipped.n or 0),
    }
