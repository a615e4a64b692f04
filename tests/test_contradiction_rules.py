"""Tier 5 only where the visit says otherwise (SPEC §1; issue 24, item 1): the offline rules
that read what a transcript sentence states before calling a claim contradicted — spoken
numbers, values of a change, hedged and echoed mentions, denied histories, both sides of one
site, imaging named without a site."""

from __future__ import annotations

import pytest
from judge_helpers import one_verdict

from clinjudge.api import make_setup


@pytest.fixture(scope="module")
def setup():
    return make_setup("inference-aware", "offline")


def verdict(setup, transcript: str, sentence: str, section: str = "HISTORY OF PRESENT ILLNESS"):
    return one_verdict(setup, transcript, sentence, section)


GUAIFENESIN = (
    "[doctor] how long have you had the cough ?\n"
    "[patient] about a week , with a lot of phlegm .\n"
    "[doctor] we can prescribe guaifenesin six hundred six hundred milligrams twice a day to "
    "help cough up some of that phlegm .\n"
    "[patient] okay .\n"
)


def test_a_dose_said_twice_is_the_same_dose(setup):
    v = verdict(setup, GUAIFENESIN, "Guaifenesin 600 mg twice a day.", section="PLAN")
    assert v.tier != 5, v.rationale


def test_a_dose_of_another_time_contradicts_nothing(setup):
    visit = (
        "[doctor] are you taking the lisinopril ?\n"
        "[patient] yes , every morning .\n"
        "[doctor] your pressure is high , so i want to increase the lisinopril to 40 milligrams "
        "once a day .\n"
        "[patient] okay .\n"
    )
    current = verdict(setup, visit, "She is taking lisinopril 20 mg daily.")
    assert current.tier == 4, current.rationale  # never said, not contradicted
    other = verdict(setup, visit, "She is taking lisinopril 20 mg daily.".replace("20", "40"))
    assert other.tier != 5
    wrong = verdict(
        setup,
        visit.replace("once a day", "once a day . you take metoprolol once a day"),
        "Increase lisinopril to 40 mg twice daily.",
        section="PLAN",
    )
    assert wrong.tier == 5, wrong.rationale  # the change itself stated otherwise


def test_a_value_of_another_drug_is_not_this_drugs(setup):
    visit = (
        "[doctor] i want to increase your lisinopril to sixty milligrams twice a day and add "
        "twenty five milligrams per day of hydrochlorothiazide and i want you to check your "
        "blood pressure twice a day for the next two weeks .\n"
        "[patient] okay .\n"
    )
    v = verdict(
        setup, visit, "Prescription for 25 mg per day of hydrochlorothiazide.", section="PLAN"
    )
    assert v.tier in (1, 2, 3), v.rationale


ECHO = (
    "[doctor] how about like chest pain or shortness of breath are you experiencing any of "
    "that when you have these headaches ?\n"
    "[patient] chest pain or shortness of breath\n"
    "[doctor] okay . your lungs sound clear .\n"
)


def test_a_reply_that_repeats_the_question_affirms_nothing(setup):
    v = verdict(setup, ECHO, "She denies chest pain.")
    assert v.tier != 5, v.rationale


def test_a_hedged_mention_does_not_contradict_a_denial(setup):
    visit = (
        "[doctor] have you ever had a history of gout ?\n"
        "[patient] nobody has told me about that .\n"
        "[doctor] well it sounds like it could've been gout , with your kidney disease it's a "
        "possibility .\n"
    )
    v = verdict(setup, visit, "He denies a history of gout.")
    assert v.tier != 5, v.rationale
    said = visit.replace("nobody has told me about that", "yes , i had gout two years ago")
    said = said.replace("it sounds like it could've been gout", "this is your gout again")
    assert verdict(setup, said, "He denies a history of gout.").tier == 5


def test_todays_symptom_does_not_contradict_a_denied_history_of_it(setup):
    visit = (
        "[patient] i'm having some shoulder pain since i fell off a ladder .\n"
        "[doctor] have you had any shoulder pain before , or is this the first time ?\n"
        "[patient] first time .\n"
    )
    v = verdict(setup, visit, "She has no history of shoulder pain.")
    assert v.tier != 5, v.rationale
    assert verdict(setup, visit, "She denies shoulder pain.").tier == 5


def test_a_claim_naming_both_sides_of_a_site_is_not_a_laterality_clash(setup):
    visit = (
        "[doctor] and you still wear the splint only on the right wrist ?\n"
        "[patient] no , i also wear the left sometimes . the right is just worse .\n"
    )
    v = verdict(
        setup,
        visit,
        "He wears a splint on the right wrist all the time and on the left wrist only "
        "intermittently.",
    )
    assert v.tier != 5, v.rationale
    assert verdict(setup, visit, "He wears a splint on the left wrist.").tier == 5


def test_imaging_named_without_its_site_takes_the_sites_its_sentence_affirms(setup):
    knee = (
        "[patient] i fell on my knee playing basketball .\n"
        "[doctor] okay so your x-ray so there's no fracture appreciated so you have a knee "
        "contusion . and we'll get an x-ray of that right shoulder too .\n"
    )
    v = verdict(setup, knee, "X-ray of the right knee shows no fracture.", section="RESULTS")
    assert v.tier != 5, v.rationale
    ankle = (
        "[doctor] there is no apparent injury to the knee or the foot . i had the nurse do an "
        "x-ray on you and your right ankle x-ray shows no fracture .\n"
    )
    v = verdict(setup, ankle, "X-ray of the right foot shows no fracture.", section="RESULTS")
    assert v.tier == 5
    assert v.rationale.endswith("the visit's imaging is of the ankle")  # words, not stems


def test_a_relatives_finding_does_not_contradict_the_patients_denial(setup):
    visit = (
        "[doctor] and any heart problems in the family ?\n"
        "[patient] my mother has chest pain all the time .\n"
    )
    assert verdict(setup, visit, "She denies chest pain.").tier != 5
    mine = visit.replace("my mother has", "i have")
    assert verdict(setup, mine, "She denies chest pain.").tier == 5


def test_a_patients_hedged_report_is_still_a_report(setup):
    visit = (
        "[doctor] alright so have you had any other symptoms nausea vomiting anything like "
        "that\n"
        "[patient] no nausea no vomiting i had some i felt like it might have been like chills "
        "but no fevers nothing along those lines\n"
    )
    assert verdict(setup, visit, "He denies chills.").tier == 5


def test_a_negation_does_not_reach_past_as_you_know():
    from clinjudge.text.negation import is_negated

    said = "not like this you know as you know sometimes i get migraine"
    assert not is_negated(said, said.index("migraine"), len(said))
    listed = "Denies any other symptoms such as chest pain, shortness of breath, or malaise."
    assert is_negated(listed, listed.index("malaise"), listed.index("malaise") + 7)


def test_consenting_to_a_question_is_not_answering_it(setup):
    visit = (
        "[doctor] so for your knee pain , i'm concerned that it might be your lupus , and any "
        "lupus symptoms like joint pain or rash this year ?\n"
        "[patient] sure .\n"
        "[doctor] okay .\n"
    )
    claim = "He denies joint pain or rash."
    assert verdict(setup, visit, claim).tier != 5
    said = visit.replace("[patient] sure .", "[patient] yeah , some joint pain and a rash .")
    assert verdict(setup, said, claim).tier == 5


def test_an_abbreviation_said_in_lower_case_mentions_the_procedure(setup):
    visit = (
        "[doctor] how's the knee doing since the surgery ?\n"
        "[patient] better , i go twice a week .\n"
        "[doctor] good , keep doing your pt and we'll see you in a month .\n"
    )
    v = verdict(setup, visit, "She continues physical therapy twice a week.")
    assert v.supported and "physical therapy" not in v.rationale, v.rationale
    unsaid = visit.replace("keep doing your pt and ", "")
    v = verdict(setup, unsaid, "She continues physical therapy twice a week.")
    assert "'physical therapy' is not mentioned" in v.rationale, v.rationale


def test_a_reading_the_visit_gives_in_part_is_unsaid_not_contradicted(setup):
    visit = (
        "[doctor] and then you've got the high blood pressure .\n"
        "[patient] yeah . a couple of weeks ago , it was 116 on the dot .\n"
        "[doctor] blood pressure , when i rechecked it , i got 140 over 60 today .\n"
    )
    claim = "Her blood pressure was 116/60 mmHg a couple of weeks ago."
    v = verdict(setup, visit, claim)
    assert v.tier == 4, v.rationale
    assert "'116'" in v.rationale and "116/60" in v.rationale
    v = verdict(setup, visit, "Her blood pressure was 150/60 mmHg today.", section="VITALS")
    assert v.tier == 5, v.rationale  # no number of it is said: another value of the same sign


def test_a_value_said_of_another_body_site_is_another_entity(setup):
    visit = (
        "[doctor] what did you do for your skin this morning and last night ?\n"
        "[patient] i washed my face with the benzoyl peroxide , both times .\n"
        "[doctor] acne is well controlled on the face , with a mild flare on the back . "
        "recommend continuing the plan for the face and panoxyl 10 % foaming wash to the back "
        "in the shower daily .\n"
    )
    claim = "Continue benzoyl peroxide facial wash twice daily."
    v = verdict(setup, visit, claim, section="PLAN")
    assert v.tier != 5, v.rationale
    v = verdict(setup, visit, "Benzoyl peroxide wash to the back twice daily.", section="PLAN")
    assert v.tier == 5, v.rationale  # the back's wash is daily
