"""Small text formatters shared by the Markdown report and the CLI tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from clinjudge.metrics.intervals import MIN_BOOTSTRAP_UNITS, TOO_FEW


def truncate(text: str, width: int) -> str:
    """Whitespace collapsed, cut to ``width`` characters with a trailing ellipsis when longer."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)].rstrip() + "…"


def percent(value: float | None, digits: int = 1) -> str:
    """``0.1234`` → ``"12.3%"``; ``None``/NaN → ``"n/a"``."""
    if not is_number(value):
        return "n/a"
    return f"{100 * value:.{digits}f}%"


def percent_interval(interval: Sequence[float | None] | None, digits: int = 1) -> str:
    """``[0.1, 0.2]`` → ``"[10.0%, 20.0%]"``; missing or non-numeric bounds → ``"n/a"``."""
    if not interval or len(interval) != 2 or not all(is_number(v) for v in interval):
        return "n/a"
    low, high = interval
    return f"[{percent(low, digits)}, {percent(high, digits)}]"


def signed_points(value: float | None) -> str:
    """A rate difference in percentage points: ``0.052`` → ``"+5.2 pp"``."""
    if not is_number(value):
        return "n/a"
    return f"{100 * value:+.1f} pp"


def is_number(value: Any) -> bool:
    """A finite int or float (``bool`` excluded)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table; cells stringified, ``|`` escaped, newlines flattened."""
    lines = [_row(headers), "|" + "|".join("---" for _ in headers) + "|"]
    lines += [_row(row) for row in rows]
    return "\n".join(lines)


def _row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _cell(value: Any) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")


def no_interval(headline: dict[str, Any]) -> str:
    """What a score without an interval shows: "n too small" when it has a value over fewer
    than :data:`~clinjudge.metrics.intervals.MIN_BOOTSTRAP_UNITS` items (no bootstrap interval
    is computed there), else "n/a"."""
    n = headline.get("n")
    small = is_number(n) and 0 < n < MIN_BOOTSTRAP_UNITS and is_number(headline.get("value"))
    return TOO_FEW if small else "n/a"


#: Per judge kind: what its headline numbers are over, and their intervals.
WHAT_N_IS = {
    "cef": "CEF: items whose score is defined; scores 0–100, higher is better, bootstrap CI "
    "over items.",
    "factcheck": "Fact-checking: rated relevant claims; rates pooled over claims, Wilson CI.",
    "numeric": "Numeric: answers judged (a failed judge call is excluded); accuracy = correct "
    "within 5% of the truth (continuous) or exactly (integer, date), Wilson CI.",
    "omission": "Omission: facts the visits state (critical facts for the critical rate), "
    "pooled over notes, Wilson CI; lower is better.",
    "rubric": "Rubric: items scored; points met / positive points in 0–1, bootstrap CI.",
}
