"""Checking numeric answers, MedCalc style (SPEC §7).

- Continuous targets: correct when |answer − truth| ≤ ``rel_tol`` · |truth| (5% by default).
- A zero truth makes any relative tolerance 0, so it gets an explicit absolute one instead:
  correct when |answer| ≤ ``zero_abs_tol`` (default 0.05, in the answer's own units — stated in
  every report that uses it).
- Discrete targets (scores, categories, dates): exact match after trimming and case-folding;
  numeric strings compare as numbers ("3" = "3.0").
"""

from __future__ import annotations

import math

REL_TOL = 0.05
ZERO_ABS_TOL = 0.05


def _number(value: float | int | str) -> float | None:
    try:
        x = float(str(value).strip().replace(",", ""))
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def within_tolerance(
    answer: float | int | str,
    truth: float | int | str,
    *,
    rel_tol: float = REL_TOL,
    zero_abs_tol: float = ZERO_ABS_TOL,
) -> bool:
    """Continuous check: relative error ≤ ``rel_tol``; for a zero truth, |answer| ≤
    ``zero_abs_tol``. An answer that is not a finite number is wrong.

    Raises:
        ValueError: the truth is not a finite number.
    """
    t = _number(truth)
    if t is None:
        raise ValueError(f"truth {truth!r} is not a finite number")
    a = _number(answer)
    if a is None:
        return False
    if t == 0:
        return abs(a) <= zero_abs_tol
    return abs(a - t) <= rel_tol * abs(t)


def exact_match(answer: object, truth: object) -> bool:
    """Discrete check: equal as numbers when both parse as numbers, else equal as trimmed,
    case-folded strings."""
    a, t = _number(str(answer)), _number(str(truth))
    if a is not None and t is not None:
        return a == t
    return str(answer).strip().casefold() == str(truth).strip().casefold()


def answer_correct(
    answer: object,
    truth: object,
    *,
    continuous: bool,
    rel_tol: float = REL_TOL,
    zero_abs_tol: float = ZERO_ABS_TOL,
) -> bool:
    """Dispatch: :func:`within_tolerance` for continuous targets, :func:`exact_match` else."""
    if continuous:
        return within_tolerance(
            answer,
            truth,
            rel_tol=rel_tol,
            zero_abs_tol=zero_abs_tol,  # type: ignore[arg-type]
        )
    return exact_match(answer, truth)
