"""A flag's reason is about the claim's own entity (issue 24, item 1): a value is compared with
values of the same drug or the same thing, a follow-up interval is not a drug's duration, a
denial inside a clinician's fragment question is read from the answer, and the harm category
comes from the flagged part of the claim."""

from __future__ import annotations

import pytest
from judge_helpers import one_verdict

from clinjudge.api import make_setup
from clinjudge.judges.harm import harm_category, subject_of
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.clauses import clause_around
from clinjudge.text.negation import is_negated

DIABETES_VISIT = (
    "[doctor] so the glimepiride , the new prescription will be for four milligrams twice a day .\n"
    "[patient] okay .\n"
    "[doctor] also , continue the metformin , okay ?\n"
    "[patient] sure .\n"
    "[doctor] i had to wait for a month to get healed after the eye surgery , you said ?\n"
    "[patient] yes .\n"
    "[doctor] we'll get the labs today and we'll see you back here in four months .\n"
    "[patient] sounds good .\n"
)


@pytest.fixture(scope="module")
def setup():
    return make_setup("inference-aware", "offline")


def verdict(setup, sentence: str, transcript: str, section: str = "ASSESSMENT AND PLAN"):
    return one_verdict(setup, transcript, sentence, section)


def test_clause_around_stops_at_a_new_statement():
    text = "She takes metoprolol 50 mg twice daily, and she drinks club soda."
    at = text.index("twice")
    start, end = clause_around(text, at, at + 5)
    assert text[start:end] == "She takes metoprolol 50 mg twice daily"
    at = text.index("club")
    assert text[slice(*clause_around(text, at, at + 4))].strip() == "and she drinks club soda"


def test_a_follow_up_interval_is_not_the_duration_of_a_drug(setup):
    v = verdict(
        setup,
        "She is advised to continue her medications, and the physician will recheck blood "
        "pressure and cholesterol levels in four months.",
        DIABETES_VISIT,
    )
    assert "four months" not in v.rationale, v


def test_another_drugs_dose_does_not_contradict(setup):
    v = verdict(setup, "Continue metformin 1000 mg twice daily.", DIABETES_VISIT)
    assert v.tier != 5, v  # four milligrams is glimepiride's dose
    assert "four milligram" not in v.rationale, v


def test_a_drugs_own_dose_still_contradicts(setup):
    v = verdict(setup, "Increase glimepiride to 4 mg once daily.", DIABETES_VISIT)
    assert v.tier == 5, v
    assert "twice a day" in v.rationale, v


def test_an_interval_said_of_another_event_does_not_contradict(setup):
    v = verdict(setup, "Repeat the lipid panel in 6 months.", DIABETES_VISIT)
    assert v.tier != 5, v  # "for a month" is the eye surgery's healing


def test_a_trailing_no_and_a_negation_before_its_place_deny():
    s = "uh , i thought i had a slight fever , but no ."
    assert is_negated(s, s.index("fever"), s.index("fever") + 5)
    s = "Carotid bruits were not appreciated during neck examination."
    assert is_negated(s, s.index("bruits"), s.index("bruits") + 6)
    s = "i had a fever but no chills ."
    assert not is_negated(s, s.index("fever"), s.index("fever") + 5)


@pytest.mark.parametrize(
    ("turns", "contradicted"),
    [
        ("[doctor] weight loss . anything like that ?\n[patient] no .\n", False),
        ("[doctor] blood in your stool .\n[patient] no .\n", False),
        ("[doctor] weight loss . anything like that ?\n[patient] yes , about ten pounds .\n", True),
    ],
)
def test_a_fragment_question_is_answered_by_the_reply(setup, turns, contradicted):
    transcript = "[doctor] any chest pain ?\n[patient] no .\n" + turns
    finding = "weight loss" if "weight" in turns else "blood in stool"
    v = verdict(setup, f"Denies {finding}.", transcript, section="REVIEW OF SYSTEMS")
    assert (v.tier == 5) is contradicted, v


def test_the_harm_category_is_that_of_the_flagged_clause():
    kb = KnowledgeBase.default()
    claim = (
        "She is advised to continue her medications, and the physician will recheck blood "
        "pressure and cholesterol levels in four months."
    )
    subject = subject_of(claim, "the visit never gives this duration: 'four months'")
    assert "medications" not in subject and "four months" in subject
    assert harm_category(subject, "assessment", kb) == "plan_follow_up"
    assert subject_of(claim, "nothing in the visit supports this") == claim
    assert harm_category("O2 saturation 98% on room air.", "objective", kb) == "test_result"
    assert harm_category("Repeat A1C in 3 months.", "plan", kb) == "plan_follow_up"
    assert harm_category("Metformin 500 mg twice daily.", "plan", kb) == "dose_frequency"


NEW_DOSE_VISIT = (
    "[doctor] are you still taking the glimepiride ?\n"
    "[patient] i'm still taking the two milligrams .\n"
    "[doctor] okay . and how is your knee ?\n"
    "[patient] it is fine .\n"
    "[doctor] good . and the walking , is that going well ?\n"
    "[patient] yes , every day .\n"
    "[doctor] so you can take two of them twice a day , of what you have . the new prescription"
    " will be for four milligrams twice a day .\n"
    "[patient] okay .\n"
    "[doctor] any chest pain ?\n"
    "[patient] no .\n"
    "[doctor] any trouble sleeping ?\n"
    "[patient] no .\n"
    "[doctor] you are on metoprolol , 50 milligrams once a day .\n"
    "[patient] right .\n"
)


def test_a_dose_said_of_no_drug_can_be_the_drugs_new_dose(setup):
    v = verdict(setup, "Increase glimepiride to 4 mg twice daily.", NEW_DOSE_VISIT)
    assert v.tier != 5, v  # "the new prescription will be for four milligrams"


def test_a_frequency_said_of_no_drug_does_not_excuse_another_drugs(setup):
    v = verdict(setup, "Metoprolol 50 mg twice daily.", NEW_DOSE_VISIT)
    assert v.tier == 5 and "once a day" in v.rationale, v


@pytest.mark.parametrize(
    ("claim", "transcript", "tiers"),
    [
        (  # a vital sign's unit names the measure: no shared words needed
            "BP 150/95.",
            "[doctor] your blood pressure today is 150 over 95 .\n[patient] okay .\n"
            "[doctor] so , um , your blood pressure today is 120 over 80 .\n",
            None,
        ),
        (
            "BP 150/95.",
            "[doctor] so , um , your blood pressure today is 120 over 80 .\n[patient] okay .\n",
            {5},
        ),
        (  # a decimal point is not a full stop: "twice daily" stays xanax's
            "Xanax 0.5 mg twice daily.",
            "[doctor] xanax 0.5 milligrams once a day .\n[patient] yes .\n"
            "[doctor] metoprolol 25 milligrams twice a day .\n[patient] yes .\n",
            {5},
        ),
        (  # the answer to "how often?" is the drug's, though it names no drug
            "Metformin 500 mg twice daily.",
            "[patient] i take metformin 500 milligrams .\n[doctor] how often ?\n"
            "[patient] just once a day .\n",
            {5},
        ),
        (  # another drug's dose said in a later turn is not metformin's
            "Metformin 20 mg daily.",
            "[patient] i take metformin 1000 milligrams daily .\n[doctor] and the lisinopril ?\n"
            "[patient] yes .\n[patient] 20 milligrams .\n",
            {4, 5},
        ),
        (  # spoken decimals of a value bound to no drug
            "Her oxygen saturation at rest was 97.5%.",
            "[doctor] your oxygen saturation is ninety seven . five percent .\n[patient] good .\n",
            {1, 2, 3},
        ),
    ],
)
def test_values_are_read_with_their_own_measure_and_drug(setup, claim, transcript, tiers):
    v = verdict(setup, claim, transcript, section="HISTORY OF PRESENT ILLNESS")
    if tiers is None:
        assert v.tier != 5, v
    else:
        assert v.tier in tiers, v


def test_only_a_closing_but_no_denies():
    s = "yeah i have a cough but no , no fever"
    assert not is_negated(s, s.index("cough"), s.index("cough") + 5)


def test_a_diagnosis_told_is_not_a_question(setup):
    transcript = "[doctor] okay , so , pneumonia .\n[patient] oh no . is that bad ?\n"
    v = verdict(setup, "She has pneumonia.", transcript, section="HISTORY OF PRESENT ILLNESS")
    assert v.tier != 5, v


def test_clauses_and_harm_words_are_read_narrowly():
    kb = KnowledgeBase.default()
    text = "She takes metformin and she reports nausea"
    at = text.index("nausea")
    assert text[slice(*clause_around(text, at, at + 6))] == "and she reports nausea"
    assert harm_category("Patient sat comfortably in a chair.", "objective", kb) != "test_result"
    assert harm_category("She lost 10 pounds in 3 months.", "subjective", kb) != "plan_follow_up"
