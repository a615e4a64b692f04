"""Pointwise metrics of a binary error flag (SPEC §4 "Pointwise metrics").

Positive class = "the note contains an error". From the confusion counts TP, FP, TN, FN:

    sensitivity (recall)  = TP / (TP + FN)
    specificity           = TN / (TN + FP)
    precision             = TP / (TP + FP)
    F1                    = 2·TP / (2·TP + FP + FN)
    balanced accuracy     = (sensitivity + specificity) / 2
    MCC                   = (TP·TN − FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))
    flag rate             = (TP + FP) / (TP + FP + TN + FN)   (fraction of notes flagged)

A metric whose denominator is 0 is undefined and returned as ``None`` (never silently 0). Notes
without a parsed prediction (``None``) are left out of every count: the caller reports them as
parse failures (SPEC §4). Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from clinjudge.metrics.intervals import bootstrap_ci, wilson_interval

BiasCategory = Literal["yes-bias", "no-bias", "neutral"]


@dataclass(frozen=True)
class Confusion:
    """Confusion counts of a binary error flag (positive = error)."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0

    @classmethod
    def from_labels(cls, truth: Sequence[bool], predicted: Sequence[bool | None]) -> Confusion:
        """Count (truth, prediction) pairs; a ``None`` prediction (unparsed) is skipped."""
        if len(truth) != len(predicted):
            raise ValueError(f"{len(truth)} labels for {len(predicted)} predictions")
        tp = fp = tn = fn = 0
        for t, p in zip(truth, predicted, strict=True):
            if p is None:
                continue
            if t and p:
                tp += 1
            elif t:
                fn += 1
            elif p:
                fp += 1
            else:
                tn += 1
        return cls(tp, fp, tn, fn)

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def positives(self) -> int:
        """Notes that truly contain an error."""
        return self.tp + self.fn

    @property
    def negatives(self) -> int:
        return self.tn + self.fp

    @property
    def flagged(self) -> int:
        return self.tp + self.fp


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def sensitivity(c: Confusion) -> float | None:
    """TP / (TP + FN) — recall on erroneous notes."""
    return _ratio(c.tp, c.positives)


def specificity(c: Confusion) -> float | None:
    """TN / (TN + FP) — correctly cleared clean notes."""
    return _ratio(c.tn, c.negatives)


def precision(c: Confusion) -> float | None:
    """TP / (TP + FP)."""
    return _ratio(c.tp, c.flagged)


def f1(c: Confusion) -> float | None:
    """2·TP / (2·TP + FP + FN), the harmonic mean of precision and recall."""
    return _ratio(2 * c.tp, 2 * c.tp + c.fp + c.fn)


def balanced_accuracy(c: Confusion) -> float | None:
    """(sensitivity + specificity) / 2; undefined unless both classes are present."""
    sens, spec = sensitivity(c), specificity(c)
    return None if sens is None or spec is None else (sens + spec) / 2


def mcc(c: Confusion) -> float | None:
    """Matthews correlation (TP·TN − FP·FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN)).

    Undefined (``None``) when any marginal is empty — e.g. a predictor that flags every note —
    rather than the 0 some libraries substitute."""
    den = math.sqrt(c.flagged * c.positives * c.negatives * (c.tn + c.fn))
    return _ratio(c.tp * c.tn - c.fp * c.fn, den)


def flag_rate(c: Confusion) -> float | None:
    """(TP + FP) / n — fraction of notes flagged as erroneous."""
    return _ratio(c.flagged, c.n)


def bias_category(
    rate: float | None,
    parity: float = 0.5,
    *,
    margin: float = 0.0,
    ci95: tuple[float, float] | None = None,
) -> BiasCategory | None:
    """SPEC §4: on a balanced set, a flag rate above parity is yes-bias, below it no-bias.

    ``parity`` is the error prevalence of the evaluated set (0.5 when balanced); rates within
    ``margin`` of parity are ``"neutral"``. With ``ci95`` (the flag rate's interval) the call is
    made only when the whole interval lies on one side of parity, else ``"neutral"`` — a fair
    coin flagging 50.8% of notes is not biased."""
    if ci95 is not None:
        low, high = ci95
        return "yes-bias" if low > parity else "no-bias" if high < parity else "neutral"
    if rate is None:
        return None
    if rate > parity + margin:
        return "yes-bias"
    if rate < parity - margin:
        return "no-bias"
    return "neutral"


class Estimate(NamedTuple):
    """A metric value with its 95% interval and how the interval was computed."""

    value: float | None
    ci95: tuple[float, float] | None
    method: str
    k: int | None = None
    n: int | None = None

    def as_json(self) -> dict:
        ci = None if self.ci95 is None else [_finite(self.ci95[0]), _finite(self.ci95[1])]
        out: dict = {"value": self.value, "ci95": ci, "method": self.method}
        if self.n is not None:
            out |= {"k": self.k, "n": self.n}
        return out


def wilson_estimate(k: int, n: int) -> Estimate:
    """k/n with its Wilson interval (SPEC §8); n = 0 gives value ``None``, interval [0, 1]."""
    return Estimate(k / n if n else None, wilson_interval(k, n), "wilson", k, n)


#: Codes of (truth, prediction) per note, so a bootstrap can resample notes as single floats.
_CODE = {(True, True): 0, (False, True): 1, (False, False): 2, (True, False): 3}


def encode(truth: Sequence[bool], predicted: Sequence[bool | None]) -> np.ndarray:
    """One float per note: 0 TP, 1 FP, 2 TN, 3 FN, NaN unparsed (dropped by the bootstrap)."""
    return np.array(
        [
            math.nan if p is None else _CODE[(bool(t), bool(p))]
            for t, p in zip(truth, predicted, strict=True)
        ],
        dtype=float,
    )


def confusion_of_codes(codes: np.ndarray) -> Confusion:
    counts = np.bincount(codes.astype(int), minlength=4)
    return Confusion(int(counts[0]), int(counts[1]), int(counts[2]), int(counts[3]))


def bootstrap_metric(
    metric: Callable[[Confusion], float | None],
    truth: Sequence[bool],
    predicted: Sequence[bool | None],
    *,
    clusters: Sequence[object] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """``metric`` with a percentile-bootstrap interval over notes, or over whole clusters (the
    pair each note belongs to: the two notes of a pair are not independent; SPEC §4)."""
    codes = encode(truth, predicted)
    value = metric(confusion_of_codes(codes[~np.isnan(codes)]))

    def statistic(sample: np.ndarray) -> float:
        result = metric(confusion_of_codes(sample))
        return math.nan if result is None else result

    low, high = bootstrap_ci(
        codes, statistic, n_resamples=n_resamples, seed=seed, clusters=clusters
    )
    return Estimate(value, (low, high), "bootstrap")


def pointwise_metrics(
    truth: Sequence[bool],
    predicted: Sequence[bool | None],
    *,
    clusters: Sequence[object] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Estimate]:
    """All pointwise metrics of SPEC §4 with 95% intervals: Wilson for the proportions
    (sensitivity, specificity, precision, flag rate), percentile bootstrap (clustered when
    ``clusters`` is given) for F1, balanced accuracy and MCC."""
    c = Confusion.from_labels(truth, predicted)
    boot = {"clusters": clusters, "n_resamples": n_resamples, "seed": seed}
    return {
        "sensitivity": wilson_estimate(c.tp, c.positives),
        "specificity": wilson_estimate(c.tn, c.negatives),
        "precision": wilson_estimate(c.tp, c.flagged),
        "f1": bootstrap_metric(f1, truth, predicted, **boot),
        "balanced_accuracy": bootstrap_metric(balanced_accuracy, truth, predicted, **boot),
        "mcc": bootstrap_metric(mcc, truth, predicted, **boot),
        "flag_rate": wilson_estimate(c.flagged, c.n),
    }


def _finite(x: float) -> float | None:
    return None if x is None or math.isnan(x) else x
