"""What the visit took back (issue 36, item 2): the later statement wins. The transcript's
corrections (grounding.corrections) and the judge's tier-5 reading of a claim that keeps the
earlier statement (judges.corrections); the legitimate restatement of the later one stays
supported. Synthetic visits, in ACI-Bench's spaced-punctuation style."""

from __future__ import annotations

import pytest

from clinjudge.api import judge_note, make_setup
from clinjudge.grounding.corrections import read_corrections
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.transcript import parse_transcript

VISIT = """[doctor] hi , good to see you . how have you been ?
[patient] pretty good overall .
[doctor] and i know you had the cataract surgery about three months ago , your vision is okay ?
[patient] that was about four and a half months ago and it's been great ever since .
[doctor] do you smoke ?
[patient] no , i quit cold turkey , i stopped smoking several years ago .
[doctor] any chest pain ?
[patient] no . well , actually , i do get some chest pain when i climb stairs .
[doctor] okay . and the metformin , you take five hundred milligrams once a day ?
[patient] yes .
[doctor] your blood pressure today is one forty over ninety , is that what you get at home ?
[patient] one twenty five over seventy at home .
"""


@pytest.fixture(scope="module")
def setups():
    return {m: make_setup(m, "offline") for m in ("lexical", "inference-aware")}


def verdict(setups, sentence: str, mode: str = "inference-aware", transcript: str = VISIT):
    result = judge_note(
        transcript, f"HISTORY OF PRESENT ILLNESS\n\n{sentence}\n", setup=setups[mode]
    )
    assert len(result.report.verdicts) == 1, result.report
    return result.report.verdicts[0]


def test_the_visit_corrections_are_read_from_order_and_speaker():
    c = read_corrections(parse_transcript(VISIT), KnowledgeBase.default())
    assert [(v.earlier.text, v.later.text) for v in c.values] == [
        ("three months", "four and a half months")
    ]  # the home blood pressure is another occasion, not a correction of the clinic's
    assert "four and a half months" in c.values[0].said
    assert any("chest pain" in said for said in c.taken_back.values())
    assert c.habit_given_up is not None and "quit" in c.habit_given_up


def test_a_value_kept_as_first_said_is_contradicted_and_names_the_correction(setups):
    v = verdict(setups, "His vision is fine after cataract surgery about 3 months ago.")
    assert v.tier == 5
    assert "first said" in v.rationale and "four and a half months" in v.rationale


def test_the_corrected_value_is_supported(setups):
    assert verdict(setups, "He had cataract surgery about 4.5 months ago.").tier < 4


def test_a_denial_the_patient_took_back_is_contradicted(setups):
    v = verdict(setups, "He denies chest pain.")
    assert v.tier == 5 and "took it back" in v.rationale
    assert verdict(setups, "He reports chest pain when climbing stairs.").tier < 4


def test_smoking_given_up_is_not_current(setups):
    v = verdict(setups, "He continues to smoke.")
    assert v.tier == 5 and "gave up smoking" in v.rationale
    assert verdict(setups, "He quit smoking several years ago.").tier < 4


def test_no_correction_no_flag(setups):
    plain = VISIT.replace(
        "that was about four and a half months ago", "yes , about three months ago"
    )
    assert verdict(setups, "He had cataract surgery about 3 months ago.", transcript=plain).tier < 4
    assert not read_corrections(parse_transcript(plain), KnowledgeBase.default()).values


def test_smoking_that_goes_on_is_no_correction():
    text = VISIT + "[patient] well , i started smoking again last month .\n"
    c = read_corrections(parse_transcript(text), KnowledgeBase.default())
    assert c.habit_given_up is None


def test_the_lexical_judge_reads_words_not_corrections(setups):
    # the strict judge checks that the words are stated; the correction is the other judge's
    v = verdict(setups, "His vision is fine after cataract surgery about 3 months ago.", "lexical")
    assert v.tier != 5
