"""Offline ``hedge_removal`` injector (clinjudge.inject.certainty, taxonomy ``overconfidence``):
hand cases (each rewrite applies, each rule refuses), and real ACI-Bench notes under the
pipeline's shape check."""

from __future__ import annotations

import pytest
from aci_fixtures import read_encounter

from clinjudge.inject.certainty import hedge_removal
from clinjudge.inject.shape import check_shape
from clinjudge.inject.taxonomy import load_taxonomy
from clinjudge.knowledge.base import KnowledgeBase

HEDGED = "[doctor] i think this is probably {0} , we'll see .\n[patient] okay ."


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture(scope="module")
def limits():
    return load_taxonomy()["overconfidence"].limits


def _encounter(encounter_id: str) -> tuple[str, str]:
    return read_encounter("inject_values", encounter_id)


def _edited(note: str, transcript: str, kb: KnowledgeBase) -> list[str]:
    return [p.note for p in hedge_removal.candidates(note, transcript, kb=kb)]


# -- applies ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "condition", "certain"),
    [
        ("This is likely a viral URI.", "a viral upper respiratory infection",
         "This is a viral URI."),
        ("She has a possible ankle sprain.", "an ankle sprain", "She has an ankle sprain."),
        ("Possible pneumonia.", "pneumonia", "Pneumonia."),
        ("X-ray concerning for a fracture of the radius.", "a fracture",
         "X-ray diagnostic of a fracture of the radius."),
        ("He may have gout.", "gout", "He has gout."),
        ("We cannot rule out a fracture.", "a fracture", "We confirmed a fracture."),
        ("I suspect that this is a flare of gout.", "gout", "This is a flare of gout."),
        ("Knee pain, most likely due to patellar tendinopathy.", "patellar tendinopathy",
         "Knee pain, due to patellar tendinopathy."),
    ],
)  # fmt: skip
def test_each_hedge_is_rewritten_as_a_fluent_certain_statement(kb, sentence, condition, certain):
    note = f"ASSESSMENT AND PLAN\n\n{sentence}"
    found = hedge_removal.candidates(note, HEDGED.format(condition), kb=kb)
    assert [p.note for p in found] == [f"ASSESSMENT AND PLAN\n\n{certain}"]
    (p,) = found
    assert p.kind == "error" and "only with uncertainty" in p.rationale
    assert p.note[: p.start] == note[: p.original_span[0]]
    assert p.note[p.end :] == note[p.original_span[1] :]


# -- refuses ---------------------------------------------------------------------------------


def test_refuses_when_the_transcript_states_the_diagnosis_as_certain(kb):
    note = "ASSESSMENT\n\nPossible pneumonia."
    certain = "[doctor] this might be pneumonia .\n[doctor] okay , you have pneumonia ."
    assert _edited(note, certain, kb) == []
    never = "[doctor] let's get a chest x-ray .\n[patient] okay ."
    assert _edited(note, never, kb) == []  # no hedged mention at all


def test_a_past_or_denied_transcript_mention_does_not_count_as_certain(kb):
    note = "ASSESSMENT\n\nPossible pneumonia."
    transcript = (
        "[doctor] any history of pneumonia ?\n[patient] no .\n[doctor] this might be pneumonia ."
    )
    assert _edited(note, transcript, kb) == ["ASSESSMENT\n\nPneumonia."]


@pytest.mark.parametrize(
    "note",
    [
        "HISTORY OF PRESENT ILLNESS\n\nPossible pneumonia.",  # not assessment / plan
        "ASSESSMENT\n\nPossible pneumonia or bronchitis.",  # an alternative stays
        "ASSESSMENT\n\nIf febrile, possible pneumonia.",  # another uncertainty cue
        "PLAN\n\nChest x-ray to evaluate for possible pneumonia.",  # what a test looks for
        "ASSESSMENT\n\nPneumonia is not likely.",  # negated hedge
        "ASSESSMENT\n\nThe patient states she may have pneumonia.",  # reported, not the note's
        "ASSESSMENT\n\nPossible surgical intervention for pneumonia.",  # not the diagnosis
        "ASSESSMENT\n\nPneumonia.\n\nPLAN\n\nThis is likely pneumonia.",  # note asserts it
    ],
)
def test_refuses_hedges_that_are_not_the_notes_own_qualifier_of_a_diagnosis(kb, note):
    assert _edited(note, HEDGED.format("pneumonia"), kb) == []


def test_a_clause_hedge_needs_a_clause_that_asserts_the_condition(kb):
    note = "PLAN\n\nI think her gout is also a contributing factor. I think this is more of a gout."
    assert _edited(note, HEDGED.format("gout"), kb) == []


def test_refuses_a_hedge_before_something_that_is_no_condition(kb):
    note = "PLAN\n\nShe will most likely require surgery. His edema is likely caused by Norvasc."
    assert _edited(note, "[doctor] you'll probably need surgery , maybe the norvasc .", kb) == []


# -- real notes ------------------------------------------------------------------------------


def test_real_note_with_a_hedged_assessment_and_plan(kb, limits):
    note, transcript = _encounter("D2N079")
    found = hedge_removal.candidates(note, transcript, kb=kb, source_id="D2N079")
    assert [(p.before, p.after) for p in found] == [("most likely ", "")] * 2
    assert "Left shoulder pain, due to rotator cuff tendinopathy." in found[0].note
    assert "his symptoms are due to rotator cuff tendinopathy." in found[1].note
    for p in found:
        assert p.type == "hedge_removal" and p.source_id == "D2N079"
        check = check_shape(p.original_note, p.note, limits)
        assert check.ok, check.reason()


def test_real_note_clause_hedge_and_determinism(kb, limits):
    note, transcript = _encounter("D2N063")
    (p,) = hedge_removal.candidates(note, transcript, kb=kb)
    assert (p.before, p.after) == ("I believe t", "T")
    assert "- Medical Reasoning: This is an exacerbation of her congestive heart failure." in p.note
    assert check_shape(p.original_note, p.note, limits).ok
    assert hedge_removal(note, transcript, seed=5, kb=kb) == p
    both = _encounter("D2N079")
    picks = {hedge_removal(*both, seed=s, kb=kb).start for s in range(8)}
    assert len(picks) == 2
    assert [hedge_removal(*both, seed=s, kb=kb) for s in range(4)] == [
        hedge_removal(*both, seed=s, kb=kb) for s in range(4)
    ]


def test_the_fixture_notes_of_other_areas_have_no_doubtful_candidates(kb):
    note, transcript = _encounter("D2N035")
    assert hedge_removal.candidates(note, transcript, kb=kb) == []
