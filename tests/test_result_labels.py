"""A result line whose label names the test (issue 36, item 4: "section labels and exam-system
headers read as claims" was fixed by leaving a leading label out of a claim's words; a bare
result after it then left nothing to check, and "Urinalysis: Negative." passed as a
restatement of a visit that never had a urinalysis)."""

from __future__ import annotations

import pytest

from clinjudge.api import judge_note, make_setup
from clinjudge.judges.claim_reading import claim_tokens

ORDERED_NOTHING = """[doctor] how is the stomach pain ?
[patient] worse after meals , and i feel a bit sick .
[doctor] okay , your belly is tender on the right side up here .
"""
RESULT_GIVEN = ORDERED_NOTHING + "[doctor] and your urinalysis came back negative .\n"


@pytest.fixture(scope="module")
def setup():
    return make_setup("inference-aware", "offline")


def tier(setup, transcript: str, sentence: str) -> int:
    result = judge_note(transcript, f"RESULTS\n\n{sentence}\n", setup=setup)
    (verdict,) = result.report.verdicts
    return verdict.tier


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Urinalysis: Negative.", ["urinalysi"]),
        ("Pregnancy test: negative", ["pregnanc", "test"]),
        ("Neck: Supple.", ["suppl"]),  # a system header stays a header
        ("Medical Reasoning: The patient has reflux.", ["reflux"]),
    ],
)
def test_the_label_is_read_only_when_a_bare_result_follows_it(text, words):
    assert [t for t, _, _ in claim_tokens(text)] == words


def test_a_result_for_a_test_the_visit_never_had_is_not_a_restatement(setup):
    assert tier(setup, ORDERED_NOTHING, "Urinalysis: Negative.") >= 4


def test_a_result_the_visit_gave_stays_supported(setup):
    assert tier(setup, RESULT_GIVEN, "Urinalysis: Negative.") <= 2
