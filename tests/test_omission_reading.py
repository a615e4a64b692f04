"""How the omission judge reads a visit (SPEC §9 "Omissions"): what a reply answers, which
medication a change is about, a need denied, values and names a note words otherwise.

Each case comes from a reviewer's label in ``bench/omission_labels/`` that the judge got
wrong, rewritten as a short visit."""

from __future__ import annotations

import pytest

from clinjudge.grounding.transcript_facts import build_transcript_facts
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.omissions.coverage import check_facts
from clinjudge.omissions.visit_facts import visit_facts
from clinjudge.text.transcript import parse_transcript


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def read(kb, visit: str, note: str | None = None):
    transcript = build_transcript_facts(parse_transcript(visit), kb, dense=False)
    found = visit_facts(transcript, kb)
    by_text = {f.text: f for f in found}
    if note is None:
        return by_text, {}
    return by_text, {c.fact.text: c for c in check_facts(found, note, transcript, kb)}


def test_a_reply_naming_one_finding_of_a_question_affirms_that_one_only(kb):
    visit = (
        "[doctor] okay . no shortness of breath or coughing ?\n"
        "[patient] i've been coughing here lately because i've been congested .\n"
        "[doctor] any nausea ?\n[patient] yes , a little .\n"
    )
    found, _ = read(kb, visit)
    assert not any("shortness of breath" in text for text in found), sorted(found)
    assert "nausea" in found  # a yes to a single finding still affirms it


def test_a_change_made_before_the_visit_or_to_another_drug_is_no_medication_change(kb):
    visit = (
        "[doctor] and i know the metformin , we started you on a lower dose , it's a new "
        "medication for you .\n"
        "[doctor] so we'll continue you on your metformin five hundred milligrams and you're on "
        "a tiny dose of the hydrochlorothiazide so i would like to increase it to twenty five "
        "milligrams .\n"
        "[patient] i stopped taking my lisinopril last week .\n"
        "[doctor] okay , i stopped the lisinopril then .\n"
    )
    found, _ = read(kb, visit)
    assert found["metformin"].importance == "routine", found["metformin"].why_critical
    assert found["hydrochlorothiazide"].why_critical == "medication change"


def test_a_need_denied_covers_every_item_of_its_list(kb):
    visit = (
        "[doctor] your herniated disc is doing really well , i do n't think that we need to "
        "refer you for any further steroid injection , or physical therapy at this time .\n"
    )
    found, _ = read(kb, visit)
    assert found["no physical therapy"].polarity == "denied"
    assert "physical therapy" not in found


def test_a_note_value_the_visit_never_gave_contradicts_it_another_reading_does_not(kb):
    visit = (
        "[patient] at home it's been around one thirty over seventy .\n"
        "[doctor] your blood pressure today is 144/72 .\n"
    )
    _, status = read(kb, visit, "VITALS: Blood pressure: 130/70 mmHg.")
    assert status["blood pressure 144/72"].status == "omitted"  # the home reading
    _, status = read(kb, visit, "VITALS: Blood pressure: 128/84 mmHg.")
    assert status["blood pressure 144/72"].status == "contradicted"
    assert "128/84" in status["blood pressure 144/72"].rationale


def test_a_lay_name_is_carried_by_the_words_of_its_clinical_name(kb):
    visit = "[doctor] so i recommend a steroid shot , the best chance that we have .\n"
    note = "PLAN: Spinal injection with a corticosteroid under fluoroscopy."
    _, status = read(kb, visit, note)
    assert status["steroid shot"].status == "covered"
    _, status = read(kb, visit, "PLAN: Ibuprofen as needed.")
    assert status["steroid shot"].status == "omitted"


def test_a_procedure_s_antiseptic_is_no_medication_unless_allergic_to_it(kb):
    visit = (
        "[patient] i just got my prescription from him . well , see , i had the iodine for my "
        "eyes .\n"
    )
    found, _ = read(kb, visit)
    assert not any("iodine" in text for text in found), sorted(found)
    found, _ = read(kb, visit + "[doctor] any allergies ?\n[patient] i'm allergic to iodine .\n")
    assert found["iodine"].category == "allergy"  # the allergy is still a fact
