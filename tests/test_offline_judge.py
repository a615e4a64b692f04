"""Tier rules of the offline SOAP verifier on hand-written cases (SPEC §1): what the
inference-aware judge accepts and the lexical one does not, and what the safety floor makes
hallucinated in both modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinjudge.api import judge_note, make_setup
from clinjudge.types import TIERS_BY_MODE

FIXTURES = Path(__file__).parent / "fixtures" / "soap"
TRANSCRIPT = (FIXTURES / "transcript.txt").read_text()
NOTE = (FIXTURES / "note.txt").read_text()


@pytest.fixture(scope="module")
def setups():
    return {m: make_setup(m, "offline") for m in ("lexical", "inference-aware")}


def verdict_of(setups, mode: str, sentence: str, *, section: str = "ASSESSMENT AND PLAN"):
    """Judge a note holding only ``sentence`` (under ``section``) and return its one verdict."""
    note = f"{section}\n\n{sentence}\n"
    result = judge_note(TRANSCRIPT, note, setup=setups[mode])
    assert len(result.report.claims) == 1, result.report.claims
    assert not result.report.failures
    return result.report.verdicts[0]


def test_trade_generic_supported_only_when_inference_aware(setups):
    sentence = "He takes lisinopril 10 mg once daily for hypertension."
    aware = verdict_of(setups, "inference-aware", sentence, section="CURRENT MEDICATIONS")
    lexical = verdict_of(setups, "lexical", sentence, section="CURRENT MEDICATIONS")
    assert aware.supported and aware.tier in (2, 3)
    assert not lexical.supported and lexical.tier in (4, 5)
    assert any("lisinopril" in k.preferred.lower() for k in aware.knowledge)


def test_wrong_dose_is_a_contradiction_in_both_modes(setups):
    sentence = "He takes Zestril 20 mg once daily."
    for mode in ("lexical", "inference-aware"):
        v = verdict_of(setups, mode, sentence, section="CURRENT MEDICATIONS")
        assert v.tier == 5 and not v.supported, (mode, v)


def test_unmentioned_medication_and_dose_hallucinated_in_both_modes(setups):
    sentence = "Start metformin 500 mg twice daily."
    for mode in ("lexical", "inference-aware"):
        v = verdict_of(setups, mode, sentence)
        assert v.tier == 4 and v.subtype == "no_basis", (mode, v)


def test_flipped_laterality_hallucinated_in_both_modes(setups):
    sentence = "Tenderness over the medial joint line of the left knee with mild effusion."
    for mode in ("lexical", "inference-aware"):
        v = verdict_of(setups, mode, sentence, section="PHYSICAL EXAM")
        assert v.tier == 5 and not v.supported, (mode, v)


def test_flipped_negation_hallucinated_in_both_modes(setups):
    sentence = "He reports chest pain."
    for mode in ("lexical", "inference-aware"):
        v = verdict_of(setups, mode, sentence, section="HISTORY OF PRESENT ILLNESS")
        assert not v.supported, (mode, v)


def test_direct_restatement_supported_in_both_modes(setups):
    sentence = "He twisted his right knee playing tennis."
    for mode in ("lexical", "inference-aware"):
        v = verdict_of(setups, mode, sentence, section="HISTORY OF PRESENT ILLNESS")
        assert v.tier == 1 and v.supported, (mode, v)


def test_abbreviation_supported_only_when_inference_aware(setups):
    sentence = "He denies CP or SOB."
    aware = verdict_of(setups, "inference-aware", sentence, section="REVIEW OF SYSTEMS")
    lexical = verdict_of(setups, "lexical", sentence, section="REVIEW OF SYSTEMS")
    assert aware.supported, aware
    assert not lexical.supported, lexical


def test_whole_note_counts_and_modes(setups):
    for mode, setup in setups.items():
        result = judge_note(TRANSCRIPT, NOTE, setup=setup)
        report = result.report
        assert len(report.verdicts) == len(report.claims) > 8
        assert {v.tier for v in report.verdicts} <= TIERS_BY_MODE[mode]
        for row in result.rows():
            assert NOTE[row["start"] : row["end"]] == row["text"]
            for ev in row["evidence"]:
                assert TRANSCRIPT[ev["start"] : ev["end"]] == ev["text"]
    lexical = judge_note(TRANSCRIPT, NOTE, setup=setups["lexical"]).report
    aware = judge_note(TRANSCRIPT, NOTE, setup=setups["inference-aware"]).report
    assert aware.n_hallucinated < lexical.n_hallucinated
    # the faithful note: the inference-aware judge flags at most one claim
    pairs = zip(aware.claims, aware.verdicts, strict=True)
    assert aware.n_hallucinated <= 1, [(c.text, v.rationale) for c, v in pairs if not v.supported]


PNEUMONIA_VISIT = """[doctor] what brings you in today ?
[patient] i've had a bad cough and a fever for three days , and i'm short of breath on stairs .
[doctor] any chest pain ?
[patient] no .
[doctor] i can hear crackles at the base of your right lung ."""


def test_diagnosis_inferred_from_the_symptom_picture_is_tier_3_not_lexical(setups):
    note = "ASSESSMENT\n\nPneumonia.\n"
    aware = judge_note(PNEUMONIA_VISIT, note, setup=setups["inference-aware"]).report.verdicts[0]
    lexical = judge_note(PNEUMONIA_VISIT, note, setup=setups["lexical"]).report.verdicts[0]
    assert aware.tier == 3 and aware.subtype == "inference", aware
    assert "has_symptom" in aware.rationale and aware.knowledge
    assert lexical.tier == 4, lexical


def test_one_shared_symptom_is_no_symptom_picture(setups):
    """Pulmonary embolism has shortness of breath and chest pain among its findings: with only
    the breathlessness affirmed it is not inferred; with both it is (min_findings = 2)."""
    one = (
        "[patient] i get short of breath on the stairs .\n[doctor] any chest pain ?\n[patient] no ."
    )
    two = "[patient] i get short of breath on the stairs .\n[patient] and i have chest pain ."
    note = "ASSESSMENT\n\nPulmonary embolism.\n"
    alone = judge_note(one, note, setup=setups["inference-aware"]).report.verdicts[0]
    assert alone.tier == 4 and "neither stated nor inferable" in alone.rationale, alone
    picture = judge_note(two, note, setup=setups["inference-aware"]).report.verdicts[0]
    assert picture.tier == 3 and "has_symptom" in picture.rationale, picture


def test_uninferable_diagnosis_is_hallucinated_in_both_modes(setups):
    note = "ASSESSMENT\n\nRheumatoid arthritis.\n"
    for mode in ("lexical", "inference-aware"):
        v = judge_note(PNEUMONIA_VISIT, note, setup=setups[mode]).report.verdicts[0]
        assert v.tier == 4 and not v.supported, (mode, v)


def test_a_cited_guideline_the_visit_never_mentions_is_fabricated_evidence(setups):
    plain = "Take ibuprofen 600 mg three times a day as needed for pain."
    cited = plain[:-1] + (
        ", as the 2021 American Academy of Orthopaedic Surgeons guideline recommends for every "
        "knee strain."
    )
    trial = plain[:-1] + ", which a 2019 randomized trial showed halves recovery time."
    for mode in ("lexical", "inference-aware"):
        assert verdict_of(setups, mode, plain, section="PLAN").supported, mode
    for sentence in (cited, trial):
        for mode in ("lexical", "inference-aware"):
            v = verdict_of(setups, mode, sentence, section="PLAN")
            assert not v.supported, (mode, v)
        v = verdict_of(setups, "inference-aware", sentence, section="PLAN")
        assert v.tier == 4 and "cites a source the transcript never mentions" in v.rationale


def test_a_guideline_the_visit_talked_about_is_not_refused_by_the_citation_rule(setups):
    said = "\n[doctor] the guidelines say ibuprofen is fine for a strain like this ."
    note = "PLAN\n\nPer the guidelines, take ibuprofen 600 mg three times a day as needed.\n"
    result = judge_note(TRANSCRIPT + said, note, setup=setups["inference-aware"])
    (v,) = result.report.verdicts
    assert "cites a source" not in v.rationale and v.supported, v


def test_a_diagnosis_is_inferable_from_the_drug_that_treats_it(setups):
    """Standard-of-care reading: the visit names the condition only through its treatment."""
    visit = "[doctor] any medicines ?\n[patient] i take unithroid every morning ."
    note = "ASSESSMENT\n\nHypothyroidism.\n"
    aware = judge_note(visit, note, setup=setups["inference-aware"]).report.verdicts[0]
    assert aware.tier == 3 and "treated_by 'unithroid'" in aware.rationale, aware
    assert judge_note(visit, note, setup=setups["lexical"]).report.verdicts[0].tier == 4
    other = judge_note(visit, "ASSESSMENT\n\nHyperthyroidism.\n", setup=setups["inference-aware"])
    assert other.report.verdicts[0].tier == 4  # the drug does not treat this one
