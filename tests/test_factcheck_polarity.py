"""Polarity contradiction of the offline fact-checker (clinjudge.factcheck.polarity): effect
denied vs asserted, direction swaps, matching sentences, and its effect on the support rule."""

from __future__ import annotations

import pytest

from clinjudge.factcheck.polarity import (
    PolarityRule,
    contradiction,
    direction,
    effect_polarity,
    matching_sentences,
)
from clinjudge.factcheck.support import SupportRule, assess
from clinjudge.knowledge.base import KnowledgeBase

EVIDENCE = (
    "Patients with well and poorly differentiated tumours were followed for five years. "
    "There was no significant difference in disease free survival between the two tumour groups "
    "(p = 0.41). Capsule formation was observed in 40 patients."
)


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("There was no significant difference in survival.", "null"),
        ("Statins did not significantly improve outcome.", "null"),
        ("The rate was not significantly lower (p=0.14).", "null"),
        ("Treatment failed to reduce mortality.", "null"),
        ("Statins significantly improve outcome.", "effect"),
        ("Age was associated with neoplastic polyps.", "effect"),
        ("Patients who did not undergo surgery were older.", None),  # a group, not a denial
        ("Growth was not related to risk, but age was significantly associated with it.", None),
    ],
)
def test_effect_polarity(text, expected):
    assert effect_polarity(text) == expected


def test_direction_needs_a_single_direction():
    assert direction("Mortality was higher in rural infants.") == "up"
    assert direction("Expenditures were lower under the demonstration.") == "down"
    assert direction("Recall was higher but detection was lower.") is None


def test_matching_sentences_need_shared_words():
    assert matching_sentences("disease free survival of tumour groups", EVIDENCE) == [
        "There was no significant difference in disease free survival between the two tumour "
        "groups (p = 0.41)."
    ]
    assert matching_sentences("Aspirin prevents migraine headaches.", EVIDENCE) == []


def test_asserted_effect_against_denied_evidence_is_a_contradiction():
    claim = "Differentiated tumours significantly improve disease free survival in both groups."
    found = contradiction(claim, EVIDENCE)
    assert found is not None and "no significant difference" in found
    # the same claim in the evidence's own polarity is no contradiction
    assert (
        contradiction("There was no significant difference in disease free survival.", EVIDENCE)
        is None
    )


def test_denial_against_asserted_evidence_only_when_switched_on():
    evidence = "Disease free survival was significantly improved in the treated tumour group."
    claim = "Treatment did not improve disease free survival in the tumour group."
    assert contradiction(claim, evidence) is not None
    assert contradiction(claim, evidence, PolarityRule(null_vs_effect=False)) is None


def test_direction_swap_is_a_contradiction_when_switched_on():
    evidence = "Premature infants of rural mothers had higher stillbirth and neonatal mortality."
    claim = "Premature infants of rural mothers had lower stillbirth and neonatal mortality."
    assert contradiction(claim, evidence) is not None
    assert contradiction(claim, evidence, PolarityRule(direction_swap=False)) is None


def test_contradiction_makes_a_claim_unsupported(kb):
    claim = "There was a significant difference in disease free survival between the two groups."
    with_check = assess(claim, [EVIDENCE], kb)
    without = assess(claim, [EVIDENCE], kb, SupportRule(polarity=None))
    assert without.supported and not with_check.supported
    assert with_check.score < without.score
    assert "opposite" in with_check.rationale()
