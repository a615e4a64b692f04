"""Harm categories as a clinical reviewer files an error (issue 37, item 5; SPEC §9;
``bench/harm_labels/GUIDE.md``): the category of the wrong part, read by
:mod:`clinjudge.judges.harm`. Each case below was filed otherwise by the rules before."""

from __future__ import annotations

import pytest

from clinjudge.judges.harm import flagged_category, harm_category
from clinjudge.judges.severity import severity
from clinjudge.knowledge.base import KnowledgeBase


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.mark.parametrize(
    ("text", "section", "category"),
    [
        # a lab value and its range: the analyte is the test's, not a drug
        ("Hemoglobin is 8.2 (normal range 12-16).", "objective", "test_result"),
        ("Urinalysis: Negative for nitrites, glucose, and ketones.", "objective", "test_result"),
        # a test ordered now is a plan item, not a result
        ("Check lipid panel today.", "assessment", "plan_follow_up"),
        # vital signs are measured, not examined
        ("Vital signs are stable.", "objective", "test_result"),
        ("BMI is 24.", "objective", "test_result"),
        # the patient's symptoms, their course and their denials are history
        ("The pain is worse around dinner time.", "subjective", "history"),
        ("She denies any constipation or dyspnea.", "subjective", "history"),
        ("He denies any congestion in his lungs.", "subjective", "history"),
        ("No chills.", "objective", "history"),
        # an examination finding in the Objective section stays one
        ("No lymphadenopathy.", "objective", "exam_finding"),
        # a cause or impression is a diagnosis
        (
            "He believes the pain is caused by a misalignment in his spine.",
            "subjective",
            "diagnosis",
        ),
        # a drug taken as needed is its regimen
        ("He takes imitrex and protonix as needed.", "subjective", "dose_frequency"),
        # medication named without a drug name
        ("Continue current medications.", "assessment", "medication"),
        # family and companions are who the patient is
        (
            "He has a family history of hypertension and diabetes.",
            "subjective",
            "demographic_social",
        ),
        ("He is accompanied by his father.", "subjective", "demographic_social"),
        # advice and monitoring are plan items
        ("Advised to monitor blood glucose regularly.", "assessment", "plan_follow_up"),
    ],
)
def test_what_the_wrong_part_is_about(kb, text, section, category):
    assert harm_category(text, section, kb) == category


def test_a_bullet_after_a_full_stop_starts_a_new_clause(kb):
    text = "Lipid panel ordered. - Diabetes: Poorly controlled."
    assert flagged_category(text, "never said: 'Poorly controlled'", "assessment", kb) == (
        "diagnosis"
    )
    assert flagged_category(text, "never said: 'Lipid panel'", "assessment", kb) == (
        "plan_follow_up"
    )


@pytest.mark.parametrize(
    ("quoted", "category"),
    [
        ("Mr. Moore", "demographic_social"),  # a title and surname in a drug sentence
        ("aspirin", "medication"),
    ],
)
def test_a_person_quoted_by_the_flag_is_filed_as_who_not_what(kb, quoted, category):
    text = "Mr. Moore states he is compliant with his aspirin."
    assert flagged_category(text, f"never said in the visit: '{quoted}'", "subjective", kb) == (
        category
    )


def test_boilerplate_vital_signs_are_minor_an_invented_value_major():
    assert severity(4, "test_result", "Vital signs are stable.") == "minor"
    assert severity(4, "test_result", "Blood pressure is 150/90.") == "major"
    assert severity(5, "test_result", "Vital signs are stable.") == "major"


@pytest.mark.parametrize(
    ("text", "rationale", "category"),
    [
        # the number a flag quotes is the age it belongs to
        (
            "The patient is a 65-year-old female with hypertension.",
            "value '65'",
            "demographic_social",
        ),
        # the drug itself is what the visit lacks, not its dose
        ("Continue aspirin 81 mg daily.", "medication 'aspirin' is not mentioned", "medication"),
        (
            "Continue aspirin 81 mg daily.",
            "the visit never gives this dose: '81 mg'",
            "dose_frequency",
        ),
    ],
)
def test_the_words_a_flag_quotes_are_read_whole(kb, text, rationale, category):
    assert flagged_category(text, rationale, "subjective", kb) == category
