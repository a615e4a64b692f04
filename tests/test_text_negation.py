"""ConText-style negation, history, hypothetical and family cues on note and ASR sentences."""

from pathlib import Path

import pytest

from clinjudge.text.negation import (
    answer_polarity,
    history_or_hypothetical,
    is_negated,
    negated_spans,
)

FIXTURES = Path(__file__).parent / "fixtures" / "text"


def _neg(sentence: str, term: str) -> bool:
    i = sentence.index(term)
    return is_negated(sentence, i, i + len(term))


def _ctx(sentence: str, term: str) -> str | None:
    i = sentence.index(term)
    return history_or_hypothetical(sentence, i, i + len(term))


@pytest.mark.parametrize(
    ("sentence", "term", "negated"),
    [
        # ASR style
        ("no , no chest pain", "chest pain", True),
        ("i don't have any fevers", "fevers", True),
        ("um , no , i have n't had any nausea", "nausea", True),
        ("i haven't had any nausea or vomiting", "vomiting", True),
        ("she doesn't smoke", "smoke", True),
        ("no fever but has a cough", "fever", True),
        ("no fever but has a cough", "cough", False),
        ("i can't bear weight on it", "bear weight", False),
        ("i couldn't sleep", "sleep", False),
        ("i've not actually had any like runny nose or cough", "cough", True),
        ("i haven't really had any pain", "pain", True),
        # note style
        (
            "The patient denies any chest pain, shortness of breath, or swelling in her legs.",
            "swelling",
            True,
        ),  # fmt: skip
        (
            "Denies fevers, chills, nausea, vomiting, diarrhea, fatigue, and weight loss.",
            "weight loss",
            True,
        ),  # fmt: skip
        ("Cardiovascular: Denies chest pain or dyspnea on exertion.", "dyspnea", True),
        ("Skin: Warm, without rash.", "rash", True),
        ("Negative for chest pain.", "chest pain", True),
        ("No evidence of fracture.", "fracture", True),
        ("Nil radiation.", "radiation", True),
        ("No blood in stool.", "blood", True),
        ("Non-smoker, social EtOH.", "smoker", True),
        ("Non-smoker, social EtOH.", "EtOH", False),
        ("McMurray's Test: Negative.", "McMurray", True),
        ("Cushing's Syndrome has been ruled out.", "Cushing", True),
        ("He is no longer smoking.", "smoking", True),
        ("Wife and children also unwell with vomiting, but no diarrhea.", "vomiting", False),
        ("Wife and children also unwell with vomiting, but no diarrhea.", "diarrhea", True),
        ("Patient reports knee pain.", "knee pain", False),
        # pseudo-triggers
        ("not only chest pain but also fever", "chest pain", False),
        ("No change in chest pain.", "chest pain", False),
        ("i'm not sure if it's a fever", "fever", False),
        # a verbless list answered by a final "no" denies every item
        ("headaches or dizziness , no .", "headaches", True),
        ("fever , chills , no", "chills", True),
        ("i had a fever , no .", "fever", False),
        # scope length: a long list item ends the scope
        (
            "no fever since i started taking the new medication last week and the rash",
            "rash",
            False,
        ),  # fmt: skip
    ],
)
def test_is_negated(sentence, term, negated):
    assert _neg(sentence, term) is negated


def test_negated_spans_are_ranges_after_the_trigger():
    s = "no , no chest pain"
    spans = negated_spans(s)
    assert spans
    assert any(s[a:b].endswith("chest pain") for a, b in spans)
    assert negated_spans("She has a cough.") == []
    assert negated_spans("NKDA") == [(0, 4)]


@pytest.mark.parametrize(
    ("sentence", "term", "context"),
    [
        ("mother has breast cancer", "breast cancer", "family"),
        ("FH: father - colon Ca", "colon", "family"),
        ("she lives with her daughter and has diabetes", "diabetes", None),
        ("If his symptoms persist, we can consider further imaging.", "imaging", "hypothetical"),
        ("call if you develop a fever", "fever", "hypothetical"),
        ("She has a history of diabetes.", "diabetes", "historical"),
        ("c section 2-3 weeks ago", "section", "historical"),
        ("3/7 hx of diarrhea, mainly watery.", "diarrhea", None),
        ("She has a cough.", "cough", None),
    ],
)
def test_history_or_hypothetical(sentence, term, context):
    assert _ctx(sentence, term) == context


@pytest.mark.parametrize(
    ("utterance", "polarity"),
    [
        ("no , no chest pain", "negative"),
        ("um , no .", "negative"),
        ("i don't think so", "negative"),
        ("nope", "negative"),
        ("yeah , a little", "positive"),
        ("well , yes", "positive"),
        ("it hurts when i walk", None),
    ],
)
def test_answer_polarity(utterance, polarity):
    assert answer_polarity(utterance) == polarity
