"""When it happened, on demand (issue 36, item 6): the time shift moves a time of the history
to the time the visit gives for another event of the same problem (the visit's own words,
nothing invented); its rewrite spells the same time the other way. Both leave alone what
they must."""

from __future__ import annotations

import pytest
from inject_helpers import changed_lines, within_limits

from clinjudge.inject.injectors import INJECTORS
from clinjudge.knowledge.base import KnowledgeBase

VISIT = """[doctor] how long have you had this foot ulcer ?
[patient] i first noticed the ulcer about six weeks ago after wearing tight shoes .
[doctor] okay . and the antibiotics ?
[patient] my doctor started me on antibiotics for the ulcer about six days ago .
[doctor] i'd like to see you back in two weeks .
"""

NOTE = """HISTORY OF PRESENT ILLNESS
He first noticed the ulcer 6 weeks ago after wearing tight shoes.
Antibiotics for the ulcer were started 6 days ago.

PLAN
Follow up in 2 weeks.
"""


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def test_the_onset_takes_the_time_of_another_event_in_the_visits_words(kb):
    found = INJECTORS["time_shift"].candidates(NOTE, VISIT, kb=kb)
    changed = changed_lines(found)
    assert "He first noticed the ulcer six days ago after wearing tight shoes." in changed
    assert "Antibiotics for the ulcer were started six weeks ago." in changed
    assert not any("Follow up" in c for c in changed)  # a follow-up interval is no history
    assert not any("two weeks" in c for c in changed)  # the plan's time is no event's
    assert all(p.kind == "error" and p.type == "time_shift" for p in found)
    within_limits("time_shift", found)


def test_no_other_time_in_the_visit_no_time_shift(kb):
    visit = "[doctor] how long ?\n[patient] i noticed the ulcer about six weeks ago .\n"
    assert INJECTORS["time_shift"].candidates(NOTE, visit, kb=kb) == []


def test_times_of_one_event_said_twice_are_not_swapped(kb):
    visit = (
        "[patient] i noticed the ulcer about two weeks ago .\n"
        "[doctor] so the ulcer started about ten days ago ?\n[patient] yes .\n"
    )
    note = "HISTORY OF PRESENT ILLNESS\nHe noticed the ulcer 2 weeks ago.\n"
    assert INJECTORS["time_shift"].candidates(note, visit, kb=kb) == []


def test_the_same_time_spelled_the_other_way(kb):
    found = INJECTORS["time_rewording"].candidates(NOTE, VISIT, kb=kb)
    changed = changed_lines(found)
    assert "He first noticed the ulcer six weeks ago after wearing tight shoes." in changed
    assert "Antibiotics for the ulcer were started six days ago." in changed
    assert not any("Follow up" in c for c in changed)
    assert all(p.kind == "rewrite" for p in found)
    within_limits("time_rewording", found)


def test_a_time_the_visit_does_not_state_is_not_reworded(kb):
    note = "HISTORY OF PRESENT ILLNESS\nHe noticed the ulcer 3 months ago.\n"
    assert INJECTORS["time_rewording"].candidates(note, VISIT, kb=kb) == []
