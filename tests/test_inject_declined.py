"""What was not chosen, on demand (issue 36, item 6): the declined plan gives an option the
visit turned down as what will be done; its rewrite says a plan item in other words. An option
the visit takes up later, or never turns down, gives no edit."""

from __future__ import annotations

import pytest
from inject_helpers import within_limits

from clinjudge.inject.injectors import INJECTORS
from clinjudge.knowledge.base import KnowledgeBase

VISIT = """[patient] my lower back has been hurting for a week .
[doctor] i do n't think you need an x-ray at this stage . let's start with physical therapy .
[doctor] we will refer you to physical therapy for your lower back .
"""

NOTE = """HISTORY OF PRESENT ILLNESS
Lower back pain for a week.

PLAN
We will refer him to physical therapy for his lower back.
"""


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def test_an_option_the_clinician_turned_down_is_given_as_the_plan(kb):
    found = INJECTORS["declined_plan"].candidates(NOTE, VISIT, kb=kb)
    assert [p.after for p in found] == [" We will order an x-ray."]
    assert found[0].note.endswith(
        "We will refer him to physical therapy for his lower back. We will order an x-ray.\n"
    )
    assert found[0].kind == "error"
    within_limits("declined_plan", found)


def test_an_option_taken_up_later_is_no_declined_plan(kb):
    visit = VISIT + "[doctor] actually , let's go ahead and order an x-ray of your back too .\n"
    assert INJECTORS["declined_plan"].candidates(NOTE, visit, kb=kb) == []


def test_an_option_never_turned_down_is_no_declined_plan(kb):
    visit = VISIT.replace("i do n't think you need an x-ray at this stage . ", "")
    assert INJECTORS["declined_plan"].candidates(NOTE, visit, kb=kb) == []


def test_a_plan_item_in_other_words(kb):
    found = INJECTORS["plan_rewording"].candidates(NOTE, VISIT, kb=kb)
    assert [p.note.split("PLAN\n")[1].strip() for p in found] == [
        "We are going to refer him to physical therapy for his lower back."
    ]
    assert found[0].kind == "rewrite"
    within_limits("plan_rewording", found)


def test_a_plan_the_visit_never_spoke_of_is_not_reworded(kb):
    note = NOTE.replace("refer him to physical therapy", "order a colonoscopy and labs")
    assert INJECTORS["plan_rewording"].candidates(note, VISIT, kb=kb) == []
