"""Spans taken so far in a text, kept in order and never overlapping (issue 35): whether a new
span is free is read from its one neighbour by bisection, so marking every match of a long text
costs ``n log n`` where a scan of all taken spans per match cost ``n²``."""

from __future__ import annotations

from bisect import bisect_left


class TakenSpans:
    """Non-overlapping ``[start, end)`` spans in text order."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def free(self, s: int, e: int) -> bool:
        """No taken span overlaps ``[s, e)``: only the last one starting before ``e`` can."""
        k = bisect_left(self.starts, e) - 1
        return k < 0 or self.ends[k] <= s

    def add(self, s: int, e: int) -> None:
        """Take ``[s, e)`` (which must be :meth:`free`)."""
        k = bisect_left(self.starts, s)
        self.starts.insert(k, s)
        self.ends.insert(k, e)
