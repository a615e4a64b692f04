"""Offline ``critical_omission`` injector (clinjudge.inject.omission, taxonomy ``omission``):
which sentences carry a critical item the transcript states, what is refused, how the deletion
keeps the rest of the note, and the shape check on a real ACI-Bench note."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinjudge.inject.omission import critical_omission
from clinjudge.inject.shape import check_shape
from clinjudge.inject.taxonomy import load_taxonomy
from clinjudge.knowledge.base import KnowledgeBase

FIXTURES = Path(__file__).parent / "fixtures" / "inject"
HPI = "HISTORY OF PRESENT ILLNESS\n\nShe has had knee pain for a week. {0}\n\nPLAN\n\nRest."
CHEST = "[patient] my knee hurts . i also get chest pain when i walk ."


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def _edits(note: str, transcript: str, kb: KnowledgeBase) -> list[tuple[str, str]]:
    return [(p.before, p.note) for p in critical_omission.candidates(note, transcript, kb=kb)]


def test_a_red_flag_symptom_the_transcript_states_is_deleted_with_its_space(kb):
    note = HPI.format("She also reports chest pain on exertion.")
    [(before, edited)] = _edits(note, CHEST, kb)
    assert before == " She also reports chest pain on exertion."
    assert edited == HPI.format("").replace("week. \n", "week.\n")
    (p,) = critical_omission.candidates(note, CHEST, kb=kb)
    assert p.after == "" and p.start == p.end and "red-flag symptom: chest pain" in p.rationale


@pytest.mark.parametrize(
    ("sentence", "transcript"),
    [
        ("She denies chest pain.", CHEST),  # negated in the note
        ("She also reports chest pain on exertion.", "[patient] no chest pain at all ."),
        ("She also reports chest pain on exertion.", "[patient] my knee hurts ."),  # unstated
        ("She has chest pain. Her chest pain is worse uphill.", CHEST),  # said twice
    ],
)
def test_red_flags_that_are_denied_unstated_or_repeated_are_refused(kb, sentence, transcript):
    assert _edits(HPI.format(sentence), transcript, kb) == []


def test_the_only_sentence_of_a_section_is_never_deleted(kb):
    note = "HISTORY OF PRESENT ILLNESS\n\nShe reports chest pain on exertion.\n\nPLAN\n\nRest."
    assert _edits(note, CHEST, kb) == []


def test_a_drug_allergy_is_omitted_but_not_a_denial_or_a_seasonal_allergy(kb):
    transcript = "[doctor] any allergies ?\n[patient] i'm allergic to penicillin ."
    [(before, _)] = _edits(HPI.format("She is allergic to penicillin."), transcript, kb)
    assert before == " She is allergic to penicillin."
    assert _edits(HPI.format("No known drug allergies."), transcript, kb) == []
    assert _edits(HPI.format("Her allergies flare in spring."), transcript, kb) == []
    assert _edits(HPI.format("She is allergic to penicillin."), "[patient] hi .", kb) == []


def test_a_return_precaution_needs_a_clinical_condition_on_both_sides(kb):
    plan = "HPI\n\nKnee pain.\n\nPLAN\n\nStart ibuprofen. {0}"
    said = "[doctor] call me if it gets worse .\n[patient] okay ."
    found = _edits(plan.format("Return to the clinic if symptoms worsen."), said, kb)
    [(before, edited)] = found
    assert before == " Return to the clinic if symptoms worsen."
    assert edited.endswith("Start ibuprofen.")
    assert _edits(plan.format("Call with any questions."), said, kb) == []
    assert _edits(plan.format("Return if symptoms worsen."), "[doctor] take care .", kb) == []


def test_a_bulleted_line_goes_whole(kb):
    note = "REVIEW OF SYSTEMS\n\n• Constitutional: Denies fever.\n• Respiratory: Reports shortness of breath.\n\nPLAN\n\nRest."  # noqa: E501
    transcript = "[patient] i get short of breath . shortness of breath going up stairs ."
    [(before, edited)] = _edits(note, transcript, kb)
    assert before == "• Respiratory: Reports shortness of breath.\n"
    assert edited == note.replace(before, "")


def test_real_note_candidates_fit_the_omission_limits(kb):
    note = (FIXTURES / "aci_D2N018_note.txt").read_text(encoding="utf-8")
    dialogue = (FIXTURES / "aci_D2N018_dialogue.txt").read_text(encoding="utf-8")
    found = critical_omission.candidates(note, dialogue, kb=kb)
    assert found and all("abnormal result" in p.rationale for p in found)
    limits = load_taxonomy()["omission"].limits
    for p in found:
        assert check_shape(p.original_note, p.note, limits).ok, p.before
        assert p.note == note[: p.original_span[0]] + note[p.original_span[1] :]
