"""Mechanical perturbations (clinjudge.inject): hand cases per type, the single-edit contract on
real ACI-Bench notes, determinism, and the curated tables checked against the knowledge layer."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pydantic import ValidationError

from clinjudge.inject import (
    ERROR_TYPES,
    PERTURBERS,
    REWRITE_TYPES,
    Perturbation,
    perturb,
    spans_touch,
)
from clinjudge.inject.tables import ABBREVIATIONS, ADDED_DRUGS, LAY_TO_CLINICAL
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.laterality import laterality_mentions
from clinjudge.text.quantities import extract_quantities, quantities_agree

FIXTURES = Path(__file__).parent / "fixtures" / "inject"
ENCOUNTERS = ("D2N009", "D2N018")


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def _encounter(encounter_id: str) -> tuple[str, str]:
    note = (FIXTURES / f"aci_{encounter_id}_note.txt").read_text(encoding="utf-8")
    dialogue = (FIXTURES / f"aci_{encounter_id}_dialogue.txt").read_text(encoding="utf-8")
    return note, dialogue


def _assert_single_edit(p: Perturbation) -> None:
    a, b = p.original_span
    assert p.note[p.start : p.end] == p.after
    assert p.original_note[a:b] == p.before
    assert p.start == a and p.end == a + len(p.after)
    assert p.note[: p.start] == p.original_note[:a]
    assert p.note[p.end :] == p.original_note[b:]
    assert p.before != p.after


# -- the record ------------------------------------------------------------------------------


def test_perturbation_rejects_an_edit_that_is_not_the_only_difference():
    good = dict(
        kind="error",
        type="dose_change",
        original_note="take 20 mg daily",
        note="take 40 mg daily",
        start=5,
        end=7,
        original_span=(5, 7),
        before="20",
        after="40",
    )
    p = Perturbation(**good)
    assert (p.chars_removed, p.chars_added, p.length_change) == (2, 2, 0)
    with pytest.raises(ValidationError, match="outside the edited span"):
        Perturbation(**{**good, "note": "take 40 mg twice"})
    with pytest.raises(ValidationError, match="before"):
        Perturbation(**{**good, "before": "30"})
    with pytest.raises(ValidationError, match="nothing changed"):
        Perturbation(**{**good, "note": good["original_note"], "after": "20"})


def test_spans_touch_handles_replacements_and_empty_edits():
    assert spans_touch(5, 7, 0, 6) and not spans_touch(5, 7, 7, 9)
    assert spans_touch(5, 5, 0, 5) and spans_touch(5, 5, 5, 9) and not spans_touch(5, 5, 6, 9)


def test_registry_splits_errors_and_rewrites():
    assert ERROR_TYPES == (
        "dose_change",
        "frequency_change",
        "added_drug",
        "negation_flip",
        "laterality_flip",
    )
    assert REWRITE_TYPES == ("generic_to_brand", "lay_to_clinical", "term_to_abbreviation")
    with pytest.raises(KeyError, match="unknown perturbation type"):
        perturb("note", "transcript", "typo")


# -- errors on hand cases --------------------------------------------------------------------


def test_dose_change_doubles_or_halves_a_stated_dose_and_keeps_the_unit(kb):
    note = "PLAN\n\nContinue lisinopril 20 mg daily."
    transcript = "[doctor] you take lisinopril twenty milligrams a day ?\n[patient] yes ."
    found = PERTURBERS["dose_change"].candidates(note, transcript, kb=kb)
    assert sorted(p.after for p in found) == ["10", "40"]
    for p in found:
        _assert_single_edit(p)
        assert p.before == "20" and p.kind == "error"
        (q,) = [q for q in extract_quantities(p.note) if q.kind == "dose"]
        assert q.unit == "mg" and q.value == float(p.after)


def test_dose_change_avoids_values_the_transcript_states_and_needs_a_stated_dose(kb):
    note = "PLAN\n\nContinue lisinopril 20 mg daily."
    both = "[doctor] lisinopril twenty milligrams , we used forty milligrams before ."
    assert [p.after for p in PERTURBERS["dose_change"].candidates(note, both, kb=kb)] == ["10"]
    assert perturb(note, "[doctor] keep taking your lisinopril .", "dose_change", kb=kb) is None


def test_frequency_change_rewrites_in_the_same_style(kb):
    transcript = "[doctor] metformin five hundred milligrams twice a day and the bid inhaler ."
    note = "PLAN\n\nContinue metformin 500 mg twice daily. Inhaler 2 puffs BID."
    found = PERTURBERS["frequency_change"].candidates(note, transcript, kb=kb)
    assert {(p.before, p.after) for p in found} == {
        ("twice", "once"),
        ("twice", "three times"),
        ("BID", "daily"),
        ("BID", "TID"),
    }
    for p in found:
        _assert_single_edit(p)


def test_frequency_change_ignores_frequencies_that_are_not_dosing(kb):
    note = "She performs her daily tasks."
    assert perturb(note, "[patient] i do my daily tasks .", "frequency_change", kb=kb) is None
    note = "She takes gabapentin, reporting less pain at night."
    transcript = "[patient] the gabapentin helps , less pain at night ."
    assert perturb(note, transcript, "frequency_change", kb=kb) is None
    dosed = "She takes gabapentin 300 mg by mouth at night."
    assert perturb(dosed, transcript, "frequency_change", kb=kb).after == "twice daily"


def test_added_drug_appends_an_unmentioned_drug_to_the_plan(kb):
    note = "HPI\n\nKnee pain.\n\nPLAN\n\nIce and rest."
    transcript = "[patient] my knee hurts .\n[doctor] ice and rest ."
    p = perturb(note, transcript, "added_drug", seed=3, kb=kb)
    assert p is not None
    _assert_single_edit(p)
    assert p.before == "" and p.original_span == (len(note), len(note))
    assert p.note.endswith(p.after) and p.after.startswith(" Start ")
    name, dose, frequency = next(d for d in ADDED_DRUGS if f" {d[0]} " in p.after)
    assert p.after == f" Start {name} {dose} {frequency}."


def test_added_drug_skips_drugs_named_by_brand_in_the_transcript(kb):
    note = "PLAN\n\nIce and rest."
    transcript = "[patient] i take toprol and prilosec ."
    added = {
        p.after.split()[1] for p in PERTURBERS["added_drug"].candidates(note, transcript, kb=kb)
    }
    assert added and "metoprolol" not in added and "omeprazole" not in added
    assert perturb("HPI\n\nKnee pain.", transcript, "added_drug", kb=kb) is None  # no plan


def test_negation_flip_turns_a_denial_into_a_report(kb):
    note = "HISTORY OF PRESENT ILLNESS\n\nShe denies any chest pain."
    transcript = "[doctor] any chest pain ?\n[patient] no ."
    p = perturb(note, transcript, "negation_flip", kb=kb)
    assert p is not None
    _assert_single_edit(p)
    assert p.note.endswith("She reports chest pain.")
    affirmed = "[doctor] any chest pain ?\n[patient] yes , a lot of chest pain ."
    assert perturb(note, affirmed, "negation_flip", kb=kb) is None


def test_negation_flip_drops_a_leading_no_and_keeps_the_capital(kb):
    note = "PHYSICAL EXAMINATION\n\nNo edema in the legs."
    p = perturb(note, "[doctor] there is no edema in your legs .", "negation_flip", kb=kb)
    assert p is not None
    _assert_single_edit(p)
    assert (p.before, p.after) == ("No e", "E")
    assert p.note.endswith("Edema in the legs.")


def test_negation_flip_turns_a_report_into_a_denial(kb):
    note = "REVIEW OF SYSTEMS\n\nEndorses dizziness."
    p = perturb(note, "[patient] i have been having dizziness .", "negation_flip", kb=kb)
    assert p is not None and p.note.endswith("Denies dizziness.")


def test_laterality_flip_swaps_a_side_the_transcript_states(kb):
    note = "CHIEF COMPLAINT\n\nRight knee pain."
    p = perturb(note, "[patient] my right knee hurts .", "laterality_flip", kb=kb)
    assert p is not None
    _assert_single_edit(p)
    assert (p.before, p.after) == ("Right", "Left")
    both = "[patient] my right knee hurts , and the left knee a bit too ."
    assert perturb(note, both, "laterality_flip", kb=kb) is None
    handed = "She is right-hand dominant."
    assert perturb(handed, "[patient] my right hand is dominant .", "laterality_flip") is None


# -- rewrites on hand cases ------------------------------------------------------------------


def test_generic_to_brand_uses_a_curated_brand_of_the_same_drug(kb):
    note = "PLAN\n\nContinue lisinopril 10 mg daily."
    transcript = "[patient] i take lisinopril ten milligrams ."
    found = PERTURBERS["generic_to_brand"].candidates(note, transcript, kb=kb)
    assert {p.after for p in found} >= {"Zestril"}
    for p in found:
        _assert_single_edit(p)
        assert p.kind == "rewrite" and p.before == "lisinopril"
        assert kb.related(p.after, "lisinopril") == "brand_of"
    assert perturb(note, "[patient] i take a water pill .", "generic_to_brand", kb=kb) is None
    branded = "PLAN\n\nContinue Zestril 10 mg daily."
    assert perturb(branded, transcript, "generic_to_brand", kb=kb) is None


def test_lay_to_clinical_translates_a_phrase_the_transcript_uses(kb):
    note = "Shortness of breath. She had a heart attack in 2019."
    transcript = "[patient] i get shortness of breath , and i had a heart attack ."
    found = PERTURBERS["lay_to_clinical"].candidates(note, transcript, kb=kb)
    assert [(p.before, p.after) for p in found] == [
        ("Shortness of breath", "Dyspnea"),
        ("heart attack", "myocardial infarction"),
    ]
    assert perturb(note, "[patient] i can't breathe well .", "lay_to_clinical", kb=kb) is None


def test_term_to_abbreviation_prefers_the_longest_term(kb):
    note = "VITALS\n\nBlood pressure: 120/80. History of congestive heart failure."
    transcript = "[doctor] blood pressure is 120 over 80 . your congestive heart failure ."
    found = PERTURBERS["term_to_abbreviation"].candidates(note, transcript, kb=kb)
    assert [(p.before, p.after) for p in found] == [
        ("Blood pressure", "BP"),
        ("congestive heart failure", "CHF"),
    ]
    assert "knowledge base: expands_to" in found[0].rationale


# -- curated tables --------------------------------------------------------------------------


def test_core_lay_pairs_are_one_concept_in_the_knowledge_base(kb):
    core = {"shortness of breath", "high blood pressure", "heart attack", "throwing up"}
    pairs = dict(LAY_TO_CLINICAL)
    assert all(kb.same_concept(lay, pairs[lay]) for lay in core)


def test_frequency_abbreviations_read_as_the_same_frequency():
    checked = 0
    for term, abbreviation in ABBREVIATIONS:
        (a,) = [q for q in extract_quantities(f"take {term}") if q.kind == "frequency"] or [None]
        if a is None:
            continue
        (b,) = [q for q in extract_quantities(f"take {abbreviation}") if q.kind == "frequency"]
        assert quantities_agree(a, b), (term, abbreviation)
        checked += 1
    assert checked >= 6


def test_added_drugs_are_known_drugs(kb):
    for name, _, _ in ADDED_DRUGS:
        assert any(c.kind == "drug" for c in kb.lookup(name)), name


# -- real notes ------------------------------------------------------------------------------


@pytest.mark.parametrize("encounter_id", ENCOUNTERS)
@pytest.mark.parametrize("kind", list(PERTURBERS))
def test_every_type_applies_to_the_fixture_notes_with_one_edit(kb, encounter_id, kind):
    note, transcript = _encounter(encounter_id)
    found = PERTURBERS[kind].candidates(note, transcript, kb=kb, source_id=encounter_id)
    assert found
    for p in found:
        _assert_single_edit(p)
        assert p.type == kind and p.source_id == encounter_id and p.rationale
    picked = perturb(note, transcript, kind, seed=7, kb=kb, source_id=encounter_id)
    assert picked == perturb(note, transcript, kind, seed=7, kb=kb, source_id=encounter_id)
    assert picked in found
    assert picked == PERTURBERS[kind](note, transcript, seed=random.Random(7), kb=kb,
                                      source_id=encounter_id)  # fmt: skip


def test_seeds_spread_over_the_candidates(kb):
    note, transcript = _encounter("D2N009")
    picks = {perturb(note, transcript, "added_drug", seed=s, kb=kb).after for s in range(12)}
    assert len(picks) > 3


def test_laterality_flip_on_a_real_note_contradicts_the_transcript(kb):
    note, transcript = _encounter("D2N018")
    for p in PERTURBERS["laterality_flip"].candidates(note, transcript, kb=kb):
        (side,) = [m for m in laterality_mentions(p.note) if m.start == p.start]
        assert side.side == "left" and p.before.lower() == "right"


def test_dose_change_on_a_real_note_states_a_new_value(kb):
    note, transcript = _encounter("D2N009")
    stated = [q for q in extract_quantities(transcript) if q.kind == "dose"]
    for p in PERTURBERS["dose_change"].candidates(note, transcript, kb=kb):
        (q,) = [q for q in extract_quantities(p.note) if q.start <= p.start < q.end]
        assert not any(quantities_agree(q, t) for t in stated)
