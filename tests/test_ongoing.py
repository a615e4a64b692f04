"""A finding the note keeps going that the visit says has stopped (issue 36, "the later
statement wins"): "continues to throw up" after "she hasn't had any more throwing up since".
The past ("was still vomiting when she came in") and a finding the visit never stopped stay
as they were. Synthetic visit, in ACI-Bench's spaced-punctuation style."""

from __future__ import annotations

import pytest

from clinjudge.api import judge_note, make_setup

VISIT = """[doctor] so tell me what happened .
[patient_guest] she was sick all weekend , and she was still throwing up on monday .
[doctor] okay , and her belly ?
[patient_guest] her stomach hurts a lot , it's worse after she eats .
[doctor] and since the medicine ?
[patient_guest] she has n't had any more throwing up since , but her stomach still hurts .
"""


@pytest.fixture(scope="module")
def setups():
    return {m: make_setup(m, "offline") for m in ("lexical", "inference-aware")}


def verdict(setups, sentence: str, mode: str = "inference-aware"):
    result = judge_note(VISIT, f"HISTORY OF PRESENT ILLNESS\n\n{sentence}\n", setup=setups[mode])
    (v,) = result.report.verdicts
    return v


def test_a_finding_kept_going_after_the_visit_said_it_stopped_is_contradicted(setups):
    v = verdict(setups, "She continues to throw up.")
    assert v.tier == 5
    assert "stopped" in v.rationale and "any more throwing up" in v.rationale


def test_what_was_true_then_stays_true(setups):
    v = verdict(setups, "She was still throwing up on Monday.")
    assert v.tier < 4, v.rationale


def test_a_finding_the_visit_never_stopped_may_go_on(setups):
    v = verdict(setups, "She continues to have stomach pain.")
    assert v.tier < 4, v.rationale


def test_the_lexical_judge_does_not_read_the_order_of_the_visit(setups):
    v = verdict(setups, "She continues to throw up.", mode="lexical")
    assert "stopped" not in v.rationale
