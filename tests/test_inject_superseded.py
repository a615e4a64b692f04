"""What the visit corrected, on demand (issue 36, item 6): the superseded statement keeps what
the visit later took back (a value corrected, a denial taken back, a habit given up); its
rewrite says the corrected fact in other words. No correction in the visit, no edit."""

from __future__ import annotations

import pytest
from inject_helpers import changed_lines, within_limits

from clinjudge.inject.injectors import INJECTORS
from clinjudge.knowledge.base import KnowledgeBase

VISIT = """[doctor] are you still taking the metformin five hundred milligrams once a day ? \
no actually it looks like we increased your metformin to five hundred milligrams twice a day \
last visit .
[patient] yes , twice a day .
[doctor] any cough ?
[patient] no . well , actually , i do have a cough at night .
[doctor] do you smoke ?
[patient] i used to smoke , but i quit about thirty years ago .
"""

NOTE = """HISTORY OF PRESENT ILLNESS
He takes metformin 500 mg twice a day.
He reports a cough at night.

SOCIAL HISTORY
Former smoker. He quit smoking about 30 years ago.
"""


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def test_the_earlier_statement_replaces_the_correction(kb):
    found = INJECTORS["superseded_statement"].candidates(NOTE, VISIT, kb=kb)
    lines = changed_lines(found)
    assert "He takes metformin 500 mg once a day." in lines  # the value corrected
    assert "He denies a cough at night." in lines  # the denial taken back
    assert "Current smoker. He quit smoking about 30 years ago." in lines  # a habit given up
    assert "Former smoker. He continues to smoke." in lines
    assert all(p.kind == "error" for p in found)
    within_limits("superseded", found)


def test_no_correction_in_the_visit_no_superseded_edit(kb):
    plain = """[doctor] are you taking the metformin five hundred milligrams twice a day ?
[patient] yes , twice a day .
[doctor] any cough ?
[patient] yes , i have a cough at night .
[doctor] do you smoke ?
[patient] i'm trying to quit smoking , i still smoke a few a day .
"""
    assert INJECTORS["superseded_statement"].candidates(NOTE, plain, kb=kb) == []
    assert INJECTORS["correction_rewording"].candidates(NOTE, plain, kb=kb) == []


def test_the_corrected_fact_in_other_words(kb):
    found = INJECTORS["correction_rewording"].candidates(NOTE, VISIT, kb=kb)
    lines = changed_lines(found)
    assert "He takes metformin 500 mg twice daily." in lines
    assert "He endorses a cough at night." in lines
    assert "Former smoker. He stopped smoking about 30 years ago." in lines
    assert all(p.kind == "rewrite" for p in found)
    within_limits("correction_rewording", found)
