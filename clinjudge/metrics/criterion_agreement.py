"""A rubric grader's criterion verdicts against a human's (issue 39 item 6; SPEC §8: validate an
automated judge against clinician labels before trusting it).

**Met / not met** (``met`` rubrics), over the n (item, criterion) pairs both sides graded, with
*met* as the positive class and TP, FP, TN, FN counted with the human as the truth:

    agreement    = (TP + TN) / n
    F1(met)      = 2·TP / (2·TP + FP + FN)
    F1(not met)  = 2·TN / (2·TN + FN + FP)
    macro F1     = the mean of F1(met) and F1(not met)   (HealthBench: grader vs physicians)
    κ            = (p_o − p_e) / (1 − p_e)   (Cohen's; metrics.agreement.cohen_kappa)

A class absent from both sides has no F1 (0/0): it is left out of the mean, so a grader that
agrees on every pair of a one-class set scores 1, not the 0.5 that ``zero_division=0`` would
give. κ is undefined (``None``) when both sides use one class only (p_e = 1).

**Levels** (``scale`` rubrics, levels 1..N):

    exact        = pairs with the same level / n
    within one   = pairs with |grader − human| ≤ 1 / n
    κ_w          = quadratic-weighted Cohen's κ = 1 − Σ w_ij O_ij / Σ w_ij E_ij,  w_ij = (i − j)²

**Intervals**: percentile bootstrap, 95%, resampling whole clusters (the items, or the
encounters several notes of a visit share) with :func:`clinjudge.metrics.agreement.agreement`
(seeded: the same inputs give the same interval); none, and "n too small" in reports, below
:data:`~clinjudge.metrics.intervals.MIN_BOOTSTRAP_UNITS` clusters. Per criterion: the agreement
share with its Wilson interval. Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from clinjudge.metrics.agreement import agreement, cohen_kappa
from clinjudge.metrics.classification import Confusion, Estimate, f1, wilson_estimate
from clinjudge.metrics.intervals import enough_for_bootstrap


def _confusion(truth: np.ndarray, graded: np.ndarray) -> Confusion:
    return Confusion.from_labels([bool(t) for t in truth], [bool(g) for g in graded])


def class_f1(truth: np.ndarray, graded: np.ndarray) -> tuple[float | None, float | None]:
    """``(F1(met), F1(not met))``; ``None`` for a class absent from both sides."""
    c = _confusion(truth, graded)
    flipped = Confusion(tp=c.tn, fp=c.fn, tn=c.tp, fn=c.fp)
    return f1(c), f1(flipped)


def macro_f1(truth: np.ndarray, graded: np.ndarray) -> float:
    """The mean of the defined class F1s (module docstring); NaN when neither is."""
    defined = [v for v in class_f1(truth, graded) if v is not None]
    return sum(defined) / len(defined) if defined else math.nan


def share_equal(truth: np.ndarray, graded: np.ndarray) -> float:
    return float(np.mean(truth == graded)) if truth.size else math.nan


def share_within_one(truth: np.ndarray, graded: np.ndarray) -> float:
    return float(np.mean(np.abs(truth - graded) <= 1)) if truth.size else math.nan


def quadratic_kappa(truth: np.ndarray, graded: np.ndarray) -> float:
    return cohen_kappa(truth, graded, weights="quadratic")


def _estimate(
    statistic,  # noqa: ANN001 - a PairStatistic
    truth: Sequence[object],
    graded: Sequence[object],
    clusters: Sequence[object],
    resamples: int,
    seed: int,
) -> Estimate:
    found = agreement(
        statistic, truth, graded, clusters=list(clusters), n_resamples=resamples, seed=seed
    )
    ci = found.ci95
    if ci is not None and (not enough_for_bootstrap(clusters) or math.isnan(ci[0])):
        ci = None
    return Estimate(found.value, ci, found.method, n=len(truth))


def met_agreement(
    truth: Sequence[bool],
    graded: Sequence[bool],
    clusters: Sequence[object],
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, object]:
    """Agreement, macro F1, κ (with intervals) and each class's F1 of paired met verdicts."""
    x = [int(t) for t in truth]
    y = [int(g) for g in graded]
    met_f1, not_met_f1 = class_f1(np.array(x), np.array(y)) if x else (None, None)
    options = {"clusters": clusters, "resamples": resamples, "seed": seed}
    kappa = _estimate(cohen_kappa, x, y, **options)
    one_class = bool(x) and len(set(x) | set(y)) == 1
    return {
        "n": len(x),
        "clusters": len(set(clusters)),
        "human_met": sum(x),
        "grader_met": sum(y),
        "agreement": _estimate(share_equal, x, y, **options).as_json(),
        "macro_f1": _estimate(macro_f1, x, y, **options).as_json(),
        "f1_met": met_f1,
        "f1_not_met": not_met_f1,
        "kappa": kappa.as_json()
        | ({"undefined": "every verdict on both sides is one class"} if one_class else {}),
    }


def level_agreement(
    truth: Sequence[int],
    graded: Sequence[int],
    clusters: Sequence[object],
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, object]:
    """Exact and within-one agreement and quadratic-weighted κ (with intervals) of levels."""
    options = {"clusters": clusters, "resamples": resamples, "seed": seed}
    x, y = [int(t) for t in truth], [int(g) for g in graded]
    return {
        "n": len(x),
        "clusters": len(set(clusters)),
        "human_mean_level": sum(x) / len(x) if x else None,
        "grader_mean_level": sum(y) / len(y) if y else None,
        "exact": _estimate(share_equal, x, y, **options).as_json(),
        "within_one": _estimate(share_within_one, x, y, **options).as_json(),
        "kappa_quadratic": _estimate(quadratic_kappa, x, y, **options).as_json(),
    }


def per_criterion(
    pairs: Sequence[tuple[str, object, object]],
) -> dict[str, dict[str, object]]:
    """Per criterion id, over its ``(criterion, human, grader)`` pairs: n, pairs agreeing with
    a Wilson interval, and how often each side said met (or its mean level)."""
    found: dict[str, list[tuple[object, object]]] = {}
    for cid, human, grader in pairs:
        found.setdefault(cid, []).append((human, grader))
    out = {}
    for cid, got in found.items():
        same = sum(1 for h, g in got if h == g)
        entry: dict[str, object] = {
            "n": len(got),
            "agreement": wilson_estimate(same, len(got)).as_json(),
        }
        humans = [float(h) for h, _ in got]  # type: ignore[arg-type]
        graders = [float(g) for _, g in got]  # type: ignore[arg-type]
        if all(isinstance(h, bool) for h, _ in got):
            entry |= {"human_met": int(sum(humans)), "grader_met": int(sum(graders))}
        else:
            entry |= {"human_mean_level": sum(humans) / len(got)}
            entry |= {"grader_mean_level": sum(graders) / len(got)}
        out[cid] = entry
    return out
