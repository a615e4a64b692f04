"""Rules of the offline CEF added for agreement with human judgement (issue 5 benchmark): which
dialogue turns are facts, concept lists cut into one fact per item, blanket negatives
("None.", "Noncontributory."), and word forms normalised before comparison ("anemic")."""

from __future__ import annotations

import asyncio

import pytest

from clinjudge.cef.blanket import all_negative, dialogue_denies_all, is_blanket, is_denial
from clinjudge.cef.questions import CLINICAL_KINDS, split_listed, text_facts
from clinjudge.cef.wording import normalise_wording
from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.knowledge.base import KnowledgeBase


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture(scope="module")
def cef(kb):
    return build_evaluator("cef", BuildOptions(backend="offline", knowledge=kb))


def run(cef, source: str, summary: str) -> dict:
    return asyncio.run(cef.evaluate(Item(id="t", transcript=source, note=summary)))


# -- which turns are facts ------------------------------------------------------------------
def test_courtesy_turns_are_not_facts_but_clinical_turns_and_replies_are(kb):
    dialogue = (
        "Doctor: Welcome to the office, Miss A. I am Doctor Luna.\n"
        "Patient: Thank you. It is nice to meet you.\n"
        "Doctor: Who lives with you?\n"
        "Patient: I have a roommate.\n"
        "Doctor: I'm so sorry to hear that.\n"
        "Patient: My dad has gout.\n"
    )
    eligible = {f.text for f in text_facts(dialogue, kb) if f.eligible}
    assert "Who lives with the patient: I have a roommate." in eligible  # a reply
    assert "My dad has gout." in eligible  # unprompted, but clinical
    assert not any("office" in t or "nice to meet" in t or "sorry" in t for t in eligible)


def test_reply_naming_its_own_finding_stands_without_its_question(kb):
    dialogue = "Doctor: What about your bones?\nPatient: Um, I have osteoporosis too.\n"
    facts = [f.text for f in text_facts(dialogue, kb)]
    assert facts == ["Um, I have osteoporosis too."]
    vague = "Doctor: Who will help at home?\nPatient: Just my family.\n"
    assert [f.text for f in text_facts(vague, kb)] == ["Who will help at home: Just my family."]


def test_denied_and_confirmed_questions_carry_their_polarity(kb):
    dialogue = "Doctor: Any fever?\nPatient: No.\nDoctor: Any cough?\nPatient: Yes.\n"
    facts = [(f.text, f.polarity) for f in text_facts(dialogue, kb)]
    assert facts == [("No fever.", "negative"), ("cough", "positive")]


# -- lists ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("statement", "parts"),
    [
        (
            "He has no fever, chills, or weakness.",
            ["He has no fever.", "He has no chills.", "He has no weakness."],
        ),
        (
            "Actually yes, I have high blood pressure and, um, depression.",
            ["Actually yes, I have high blood pressure.", "Actually yes, I have depression."],
        ),
        (  # the list goes on past its last concept: the rest is one more statement
            "Bipolar disorder, anxiety, anemia, frequent flyer, history of surgeries",
            ["Bipolar disorder", "anxiety", "anemia", "frequent flyer, history of surgeries"],
        ),
        (  # a dangling joint of a cut-off summary is dropped
            "No problems with urination, abdominal pain, or",
            ["No problems with urination", "No problems with abdominal pain"],
        ),
        (
            "I fell 4 days ago while mopping the floor.",
            ["I fell 4 days ago while mopping the floor."],
        ),
        ("Hip pain since she had a fall.", ["Hip pain since she had a fall."]),  # not a list
    ],
)
def test_listed_concepts_become_one_statement_each(kb, statement, parts):
    assert split_listed(statement, kb) == parts


def test_list_items_are_questions_of_their_own(cef):
    source = "Doctor: Any medical problems?\nPatient: I have high blood pressure and depression.\n"
    row = run(cef, source, "Significant for hypertension.")
    source_questions = [q for q in row["questions"] if q["side"] == "source"]
    assert [q["cross_answer"] for q in source_questions] == ["YES", "IDK"]
    assert row["coverage"] == 50.0  # the whole statement would be one IDK: coverage 0


# -- blanket negatives ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("statement", "blanket"),
    [
        ("None.", True),
        ("Noncontributory.", True),
        ("Non-contributory", True),
        ("Negative.", True),
        ("Family history: unremarkable.", True),
        ("No significant past medical history.", True),
        ("No known drug allergies.", False),  # names what is absent
        ("Negative for rash.", False),
        ("Nonsmoker.", False),
    ],
)
def test_blanket_statements(statement, blanket):
    assert is_blanket(statement) is blanket


def test_denials_and_all_negative_texts(kb):
    assert is_denial("No past surgeries.", kb, CLINICAL_KINDS)
    assert is_denial("He has no fever or chills.", kb, CLINICAL_KINDS)
    assert not is_denial("He has fever but no chills.", kb, CLINICAL_KINDS)
    assert all_negative("Noncontributory.  No previous surgeries.", kb, CLINICAL_KINDS)
    assert not all_negative("No previous surgeries.", kb, CLINICAL_KINDS)  # no blanket word
    assert not all_negative("None.  Knee replacement in 2010.", kb, CLINICAL_KINDS)
    assert dialogue_denies_all(["negative", None, "negative"])
    assert not dialogue_denies_all(["negative", "positive"])
    assert not dialogue_denies_all([None, None])


def test_blanket_summary_is_a_question_answered_by_the_dialogue(cef):
    denied = "Doctor: Any past surgeries?\nPatient: Nah.\n"
    row = run(cef, denied, "Noncontributory.")
    summary_question = next(q for q in row["questions"] if q["side"] == "summary")
    assert summary_question["own_answer"] == "YES" and summary_question["cross_answer"] == "YES"
    assert row["consistency"] == 100.0
    confirmed = "Doctor: Any past surgeries?\nPatient: Yes, my appendix was removed.\n"
    row = run(cef, confirmed, "None.")
    assert row["n_summary_questions"] == 1 and row["consistency"] == 0.0
    # the source's denied question is not answered from the blanket word (module docstring)
    assert run(cef, denied, "Negative.")["coverage"] == 0.0


# -- word forms -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("She's also anemic.", "She's also anemia."),
        ("He is hypertensive and asthmatic.", "He is hypertension and asthma."),
        ("I got referred to P T, and I went", "I got referred to PT, and I went"),
        ("Your E K G showed", "Your EKG showed"),
        ("Dilaudid 4 M G I M.", "Dilaudid 4 MG IM."),
        ("Mister X Y Z", "Mister X Y Z"),  # no known abbreviation: letters stay
        ("A basic classic case.", "A basic classic case."),  # no condition noun: words stay
        ("The patient is diabetic.", "The patient is diabetic."),  # a known term stays
    ],
)
def test_normalise_wording(kb, text, normalised):
    assert normalise_wording(text, kb) == normalised


def test_adjective_form_supports_the_noun(cef):
    source = (
        "Doctor: What is her history?\nGuest_clinician: She's anemic and has bipolar disorder.\n"
    )
    row = run(cef, source, "Anemia.")
    summary_question = next(q for q in row["questions"] if q["side"] == "summary")
    assert summary_question["fact"] == "Anemia."  # the question keeps its own wording
    assert summary_question["cross_answer"] == "YES"
