"""A denial the visit's answers do not give (issue 36, item 4 "invented contradictions" and its
opposite): a denied list read item by item, the catch-all "denies any other symptoms" read as
"other than what the note reports", and a "right" that names a side read as no yes. Synthetic
visits, in ACI-Bench's spaced-punctuation style; each check also has its legitimate twin."""

from __future__ import annotations

import pytest

from clinjudge.api import judge_note, make_setup
from clinjudge.judges.denials import denied_items
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.negation import answer_polarity

VISIT = """[doctor] hi , how are you doing today ?
[patient] i'm okay , my stomach has been bothering me .
[doctor] and no history of thyroid problems , right ?
[patient] no , never .
[doctor] any trouble breathing ?
[patient] no .
[doctor] how are your bowels ?
[patient] honestly i think i was just constipated and that was causing the pain .
[doctor] okay . do you have any other symptoms at this time , chest pain , fever ?
[patient] uh , i have a little bit of nasal congestion , but that's from my allergies .
[doctor] and the back ?
[patient] i heard a pop when i moved and had to lie down an hour before the pain went away .
[doctor] and which arm was it , are you right handed ?
[patient] right handed .
"""


@pytest.fixture(scope="module")
def setups():
    return {m: make_setup(m, "offline") for m in ("lexical", "inference-aware")}


def verdicts(setups, sentences: str, mode: str = "inference-aware"):
    result = judge_note(VISIT, f"HISTORY OF PRESENT ILLNESS\n\n{sentences}\n", setup=setups[mode])
    return {v.claim_id: v for v in result.report.verdicts}, result.report


def only(setups, sentence: str, mode: str = "inference-aware"):
    found, report = verdicts(setups, sentence, mode)
    assert len(found) == 1, report
    return next(iter(found.values()))


def test_one_item_of_a_denied_list_the_patient_stated_contradicts_the_list(setups):
    # the list's words together match the thyroid and breathing questions (answered no); read
    # item by item, the patient's own "i was just constipated" contradicts the denial
    v = only(setups, "She denies thyroid problems, trouble breathing, or constipation.")
    assert v.tier == 5
    assert "constipated" in v.rationale


def test_a_denied_list_the_visit_denies_item_by_item_stays_supported(setups):
    v = only(setups, "She denies thyroid problems or trouble breathing.")
    assert v.tier < 4, v.rationale


def test_a_course_that_ends_in_resolved_is_no_denied_list(setups):
    v = only(setups, "She heard a pop and lay down for an hour before her pain resolved.")
    assert v.tier != 5, v.rationale


def test_an_item_denied_only_above_a_degree_is_not_read_on_its_own():
    kb = KnowledgeBase.default()
    items = denied_items("She denies chest pain, fever, or significant weight loss.", kb)
    assert [sorted(words) for words, _ in items] == [["chest", "pain"], ["fever"]]


def test_other_symptoms_denied_when_the_patient_named_one_the_note_leaves_out(setups):
    v = only(setups, "She denies chest pain, fever, or other symptoms.")
    assert v.tier == 5
    assert "nasal congestion" in v.rationale and "other symptoms" in v.rationale


def test_other_symptoms_means_other_than_what_the_note_reports(setups):
    found, _ = verdicts(
        setups, "She has some nasal congestion from allergies. She denies any other symptoms."
    )
    assert all(v.tier != 5 for v in found.values()), [v.rationale for v in found.values()]


def test_the_lexical_judge_does_not_read_other_as_other_than_the_note(setups):
    v = only(setups, "She denies chest pain, fever, or other symptoms.", mode="lexical")
    assert "nasal congestion" not in v.rationale


@pytest.mark.parametrize(
    ("reply", "polarity"),
    [
        ("right handed .", None),
        ("right-handed", None),
        ("right now it is fine", None),
        ("right , yes .", "positive"),
        ("right .", "positive"),
    ],
)
def test_a_right_that_names_a_side_or_a_moment_is_no_yes(reply, polarity):
    assert answer_polarity(reply) == polarity
