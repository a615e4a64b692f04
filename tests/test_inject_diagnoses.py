"""Offline ``diagnosis_swap`` injector (clinjudge.inject.diagnoses, taxonomy ``wrong_diagnosis``):
the curated table checked against the knowledge base, hand cases (applies / each rule refuses,
fluent articles, case and plurals), and real ACI-Bench notes under the pipeline's shape check."""

from __future__ import annotations

import itertools

import pytest
from aci_fixtures import read_encounter

from clinjudge.inject.confusable import confusable_groups, disease_ids, read_table
from clinjudge.inject.diagnoses import diagnosis_swap
from clinjudge.inject.shape import check_shape
from clinjudge.inject.taxonomy import load_taxonomy
from clinjudge.inject.types import indefinite_article
from clinjudge.knowledge.base import KnowledgeBase

KNEE = "[doctor] so your mri shows a meniscus tear in the right knee .\n[patient] okay ."


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture(scope="module")
def limits():
    return load_taxonomy()["wrong_diagnosis"].limits


def _encounter(folder: str, encounter_id: str) -> tuple[str, str]:
    return read_encounter(folder, encounter_id)


def _swaps(note: str, transcript: str, kb: KnowledgeBase) -> list[tuple[str, str]]:
    return [(p.before, p.after) for p in diagnosis_swap.candidates(note, transcript, kb=kb)]


def _ap(text: str) -> str:
    return f"ASSESSMENT AND PLAN\n\n{text}"


# -- the curated table -----------------------------------------------------------------------


def test_every_table_member_resolves_to_a_disease_concept(kb):
    for raw in read_table():
        for entry in raw["members"]:
            entry = {"name": entry} if isinstance(entry, str) else entry
            term = entry.get("kb", entry["name"])
            assert disease_ids(kb, term), f"{entry['name']!r} ({term!r}) is no disease concept"
    sizes = [len(raw["members"]) for raw in read_table()]
    assert [len(g.members) for g in confusable_groups(kb)] == sizes


def test_every_group_holds_a_pair_the_knowledge_base_does_not_relate(kb):
    for g in confusable_groups(kb):
        pairs = itertools.combinations(g.members, 2)
        assert any(kb.related(a.kb_term, b.kb_term) is None for a, b in pairs), g.presentation


def test_member_ids_are_the_classes_the_name_represents(kb):
    groups = confusable_groups(kb)
    osteoarthritis = next(d for g in groups for d in g.members if d.name == "osteoarthritis")
    arthritis = {kb.canonical(c.id) for c in kb.lookup("arthritis") if c.kind == "disease"}
    assert osteoarthritis.ids and not osteoarthritis.ids & arthritis
    fracture = next(d for g in groups for d in g.members if d.name == "fracture")
    assert fracture.ids == frozenset()  # ICD-10 T14.8 also carries "contusion": ambiguous


@pytest.mark.parametrize(
    ("phrase", "article"),
    [("ACL tear", "an"), ("meniscus tear", "a"), ("UTI", "a"), ("urinary tract infection", "a"),
     ("ulcerative colitis", "an"), ("ankle fracture", "an"), ("MRI", "an"), ("hour", "an")],
)  # fmt: skip
def test_indefinite_article_follows_the_first_sound(phrase, article):
    assert indefinite_article(phrase) == article


# -- applies ---------------------------------------------------------------------------------


def test_swaps_a_knee_diagnosis_with_articles_fixed(kb):
    found = _swaps(_ap("Right knee pain, consistent with a meniscus tear."), KNEE, kb)
    assert ("a meniscus tear", "an ACL tear") in found
    assert ("a meniscus tear", "osteoarthritis") in found  # a mass noun drops the article
    assert ("a meniscus tear", "gout") in found
    assert all(before == "a meniscus tear" for before, _ in found)
    assert not any("rheumatoid" in after or "stenosis" in after for _, after in found)


def test_count_noun_after_a_bare_preposition_gains_an_article(kb):
    note = _ap("Right knee pain consistent with patellofemoral pain syndrome.")
    transcript = "[doctor] you have patellofemoral pain syndrome in the right knee ."
    pairs = _swaps(note, transcript, kb)
    assert ("patellofemoral pain syndrome", "a meniscus tear") in pairs
    assert ("patellofemoral pain syndrome", "an ACL tear") in pairs
    assert ("patellofemoral pain syndrome", "gout") in pairs


def test_case_plural_and_abbreviations_are_kept(kb):
    note = _ap("Migraines.\nHer migraines are improving.")
    found = _swaps(note, "[doctor] how are your migraines ?\n[patient] better .", kb)
    assert ("Migraines", "Tension headaches") in found
    assert ("migraines", "cluster headaches") in found
    assert not any(after.endswith("headache") for _, after in found)
    heading = _ap("HYPERTENSION.\nHer hypertension is controlled.")
    found = _swaps(heading, "[doctor] your hypertension is controlled .", kb)
    assert ("HYPERTENSION", "HYPOTENSION") in found and ("hypertension", "hypotension") in found
    gerd = _ap("Her GERD is worse.")
    said = "[patient] i have chest pain after meals , my gerd is acting up ."
    found = dict(_swaps(gerd, said, kb))
    assert found and all(after[0].islower() or after.isupper() for after in found.values())


def test_presentation_groups_need_the_presentation_in_the_transcript(kb):
    note = _ap("GERD.\nHer GERD is worse.")
    with_pain = {a.lower() for _, a in _swaps(note, "[patient] chest pain , my gerd .", kb)}
    without = {a.lower() for _, a in _swaps(note, "[patient] my gerd , lots of nausea .", kb)}
    assert {"angina", "costochondritis"} <= with_pain
    assert "gastritis" in without and not {"angina", "costochondritis"} & without


def test_the_knowledge_base_blocks_a_narrowed_or_related_alternative(kb):
    found = _swaps(_ap("Diabetes.\nHis diabetes is controlled."), "[doctor] your diabetes .", kb)
    assert {after.lower() for _, after in found} == {"prediabetes"}


def test_seed_makes_the_choice_deterministic(kb):
    note = _ap("Right knee pain, consistent with a meniscus tear.")
    first = diagnosis_swap(note, KNEE, seed=3, kb=kb)
    assert first == diagnosis_swap(note, KNEE, seed=3, kb=kb)
    assert len({diagnosis_swap(note, KNEE, seed=s, kb=kb).after for s in range(12)}) > 2


# -- refuses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "note",
    [
        _ap("Right knee pain. No evidence of a meniscus tear."),
        _ap("Possible meniscus tear versus osteoarthritis of the right knee."),
        _ap("We discussed the risks of surgery, including stroke."),
        _ap("He is fully vaccinated against COVID-19."),
        _ap("The CT scan revealed a 0.5 cm kidney stone in the right ureter."),
        _ap("Right knee pain. Her mother has gout."),
        _ap("Diabetes type 2.\nContinue diabetes medication."),
        "HISTORY OF PRESENT ILLNESS\n\nShe has a meniscus tear.\n\nASSESSMENT AND PLAN\n\nPain.",
    ],
)
def test_refuses_what_is_no_stated_diagnosis_of_the_assessment(kb, note):
    transcript = (
        KNEE + "\n[doctor] your diabetes , covid-19 , kidney stone , gout and stroke risk ."
    )
    assert _swaps(note, transcript, kb) == []


def test_refuses_a_diagnosis_the_transcript_does_not_name(kb):
    note = _ap("Right knee pain, consistent with a meniscus tear.")
    assert _swaps(note, "[doctor] your knee hurts ?\n[patient] yes .", kb) == []


def test_refuses_alternatives_the_transcript_names_or_points_to(kb):
    note = _ap("Right knee pain, consistent with a meniscus tear.")
    transcript = KNEE + "\n[patient] i have gout and osteoarthritis in my hands ."
    found = {after for _, after in _swaps(note, transcript, kb)}
    assert found and not {"gout", "osteoarthritis"} & found


def test_knee_alternatives_need_a_knee_in_the_sentence(kb):
    note = _ap("Osteoarthritis of the right hand.")
    said = "[doctor] osteoarthritis in your hand ."
    found = {after.lower() for _, after in _swaps(note, said, kb)}
    assert "rheumatoid arthritis" in found
    assert not {"a meniscus tear", "an ACL tear", "prepatellar bursitis"} & found


# -- real notes ------------------------------------------------------------------------------


def test_real_notes_swap_only_assessment_diagnoses_and_pass_the_shape_check(kb, limits):
    for folder, encounter in (("inject", "D2N009"), ("inject_dx", "D2N001")):
        note, transcript = _encounter(folder, encounter)
        found = diagnosis_swap.candidates(note, transcript, kb=kb, source_id=encounter)
        assert found
        assessment = note.index("ASSESSMENT AND PLAN")
        for p in found:
            assert p.start > assessment and p.type == "diagnosis_swap"
            assert p.after.lower() not in transcript.lower()
            check = check_shape(p.original_note, p.note, limits)
            assert check.ok, check.reason()
    note, transcript = _encounter("inject", "D2N009")
    assert {p.after for p in diagnosis_swap.candidates(note, transcript, kb=kb)} == {
        "Herniated disc",
        "Spinal stenosis",
    }


def test_real_note_article_and_refusal(kb):
    note, transcript = _encounter("inject_dx", "D2N044")
    found = {(p.before, p.after) for p in diagnosis_swap.candidates(note, transcript, kb=kb)}
    assert ("patellofemoral pain syndrome", "a meniscus tear") in found
    assert ("Patellofemoral pain syndrome", "Meniscus tear") in found
    p = diagnosis_swap(note, transcript, seed=0, kb=kb)
    assert p is not None and p == diagnosis_swap(note, transcript, seed=0, kb=kb)
    # a proximal humerus fracture: no joint to sprain, and the transcript names a contusion
    assert diagnosis_swap(*_encounter("inject", "D2N018"), seed=0, kb=kb) is None
