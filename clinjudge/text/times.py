"""Times in a text — how long ago, for how long — read the same way by the judge and the
injector (issue 36: "a time moved": the onset given the time of the last worsening).

A time is a duration of :func:`clinjudge.text.quantities.extract_quantities` in days (a point
when "ago" follows: "3 days ago"), or a point a patient says without a number ("yesterday",
"last week", "a month ago"). A follow-up interval ("recheck in four months") is no time of
the history and is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinjudge.text.clauses import from_now
from clinjudge.text.quantities import extract_quantities

#: Days per time unit (a month and a year approximately: only ratios are compared).
_DAYS = {"minute": 1 / 1440, "hour": 1 / 24, "day": 1.0, "week": 7.0, "month": 30.0, "year": 365.0}
#: Points in time without a number, with their distance from today in days.
_ANCHORS = {
    "yesterday": 1.0,
    "last night": 1.0,
    "this morning": 0.25,
    "last week": 7.0,
    "last month": 30.0,
    "last year": 365.0,
}
_ANCHOR = re.compile(
    r"\b(?:yesterday|last night|this morning|last (?:week|month|year)"
    r"|(?P<a>an?) (?P<u>hour|day|week|month|year) ago)\b",
    re.I,
)
_AGO = re.compile(r"\s+(?:ago|prior)\b", re.I)  # used with .match(text, pos): no "^"
#: The preposition an indefinite duration is read with ("for the past couple of days").
_LEADING = re.compile(
    r"^(?:for|past|last|in|over|within|about|around|x)\s+(?:the\s+)?(?:past\s+|last\s+|next\s+)?",
    re.I,
)


@dataclass(frozen=True)
class Time:
    """A time in a text: ``text[start:end]`` is what an edit replaces (a point includes its
    "ago"); ``days`` its distance or length in days; ``point`` whether it says when."""

    start: int
    end: int
    text: str
    days: float
    point: bool
    ranged: bool


def read_times(text: str) -> list[Time]:
    """The times of ``text`` (module docstring), follow-up intervals left out."""
    times: list[Time] = []
    for q in extract_quantities(text):
        if q.kind != "duration" or q.unit not in _DAYS or from_now(text, q):
            continue
        start = q.start + (m.end() if (m := _LEADING.match(q.text)) else 0)
        core = text[start : q.end]
        if core.lower().startswith("couple"):
            continue  # "couple of days" without its article is not a phrase to move
        ago = _AGO.match(text, q.end)
        end = ago.end() if ago else q.end
        days = q.value * _DAYS[q.unit]
        times.append(Time(start, end, text[start:end], days, bool(ago), q.value2 is not None))
    for m in _ANCHOR.finditer(text):
        if any(t.start < m.end() and m.start() < t.end for t in times):
            continue
        key = m.group().lower()
        days = _DAYS[m.group("u").lower()] if m.group("u") else _ANCHORS[key]
        times.append(Time(m.start(), m.end(), m.group(), days, True, False))
    return sorted(times, key=lambda t: t.start)


#: Largest ratio between two times read as the same ("two weeks" and "ten days").
SAME_RATIO = 1.3


def same_time(a: Time, b: Time) -> bool:
    """Whether two times are one length or distance (within :data:`SAME_RATIO`)."""
    lo, hi = sorted((a.days, b.days))
    return lo > 0 and hi / lo < SAME_RATIO
