"""The safety case (SPEC §8): calibration, overconfident errors, subgroup rates and release gates.

- Brier score = mean((confidence − correct)²), confidence in [0, 1], correct ∈ {0, 1};
- overconfident-error rate = #(wrong AND confidence ≥ 0.8) / n, with a Wilson interval;
- subgroup rates: k/n per subgroup with Wilson intervals; a subgroup below ``min_n`` cases is
  marked too small — never compare subgroups on a handful of cases;
- release gate: passes only when the metric's UPPER 95% bound ≤ its limit (``max``), or, for a
  metric where higher is better, its LOWER bound ≥ the limit (``min``);
- clean cases needed: the smallest n with zero events whose Wilson upper bound is ≤ the limit
  (:func:`clean_cases_needed`), and, with k events in n already, the fewest clean cases to add
  (:func:`clean_cases_to_pass`).
  With zero events the upper bound is z²/(n + z²), so n = ⌈z²(1 − limit)/limit⌉: 381 for 1%,
  189 for 2%.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from clinjudge.metrics.classification import Estimate, wilson_estimate
from clinjudge.metrics.intervals import wilson_interval

OVERCONFIDENT = 0.8
MIN_SUBGROUP = 50


def brier_score(confidences: Sequence[float], correct: Sequence[bool]) -> float | None:
    """mean((confidence − correct)²); ``None`` for no cases."""
    if len(confidences) != len(correct):
        raise ValueError(f"{len(confidences)} confidences for {len(correct)} outcomes")
    for c in confidences:
        if not 0.0 <= c <= 1.0:
            raise ValueError(f"confidence {c} outside [0, 1]")
    if not confidences:
        return None
    return sum((c - float(ok)) ** 2 for c, ok in zip(confidences, correct, strict=True)) / len(
        confidences
    )


def overconfident_error_rate(
    confidences: Sequence[float], correct: Sequence[bool], *, threshold: float = OVERCONFIDENT
) -> Estimate:
    """Cases both wrong and stated with confidence ≥ ``threshold``, over all cases (Wilson)."""
    if len(confidences) != len(correct):
        raise ValueError(f"{len(confidences)} confidences for {len(correct)} outcomes")
    k = sum(1 for c, ok in zip(confidences, correct, strict=True) if not ok and c >= threshold)
    return wilson_estimate(k, len(confidences))


def subgroup_rates(
    events: Sequence[bool], groups: Sequence[str], *, min_n: int = MIN_SUBGROUP
) -> dict[str, dict[str, object]]:
    """Per subgroup: the event rate with its Wilson interval and whether n ≥ ``min_n``."""
    if len(events) != len(groups):
        raise ValueError(f"{len(events)} events for {len(groups)} group labels")
    out: dict[str, dict[str, object]] = {}
    for group in sorted(set(groups)):
        members = [bool(e) for e, g in zip(events, groups, strict=True) if g == group]
        estimate = wilson_estimate(sum(members), len(members))
        out[group] = {**estimate.as_json(), "enough_cases": len(members) >= min_n}
    return out


def passes_gate(
    ci95: Sequence[float] | None, *, max: float | None = None, min: float | None = None
) -> bool:
    """The release rule: upper bound ≤ ``max`` and/or lower bound ≥ ``min``. No interval (or a
    NaN bound) never passes."""
    if max is None and min is None:
        raise ValueError("a gate needs a max or a min limit")
    if ci95 is None or len(ci95) != 2 or any(b is None or math.isnan(b) for b in ci95):
        return False
    low, high = ci95
    return (max is None or high <= max) and (min is None or low >= min)


def rate_gate(k: int, n: int, limit: float, *, z: float = 1.96) -> bool:
    """A rate of k events in n passes a ``limit`` when its Wilson upper bound is ≤ the limit."""
    return passes_gate(wilson_interval(k, n, z), max=limit)


def clean_cases_needed(limit: float, *, z: float = 1.96) -> int:
    """Smallest n with zero events whose Wilson upper bound z²/(n + z²) is ≤ ``limit``."""
    if not 0 < limit < 1:
        raise ValueError(f"limit must be in (0, 1), got {limit}")
    n = max(1, math.ceil(z * z * (1 - limit) / limit))
    # guard against floating-point rounding on either side of the closed form
    while n > 1 and wilson_interval(0, n - 1, z)[1] <= limit:
        n -= 1
    while wilson_interval(0, n, z)[1] > limit:
        n += 1
    return n


def clean_cases_to_pass(events: int, n: int, limit: float, *, z: float = 1.96) -> int | None:
    """How many more cases with no event bring the Wilson upper bound of ``events`` in
    ``n + m`` cases to ≤ ``limit``: the smallest such m (0 when it already passes). ``None``
    when no number can (``limit`` ≤ 0 with events, or ≥ 1 needs none)."""
    if limit >= 1:
        return 0
    if limit <= 0:
        return None
    if wilson_interval(events, n, z)[1] <= limit:
        return 0
    lo, hi = 0, max(1, n)
    while wilson_interval(events, n + hi, z)[1] > limit:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # the upper bound falls as clean cases are added: bisect
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if wilson_interval(events, n + mid, z)[1] > limit else (lo, mid)
    return hi
