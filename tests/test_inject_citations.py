"""Offline ``fabricated_citation`` injector (clinjudge.inject.citations, taxonomy
``evidence_fabrication``): the authority table, hand cases (each decision kind applies, each rule
refuses), and real ACI-Bench notes under the pipeline's shape check."""

from __future__ import annotations

import pytest
from aci_fixtures import read_encounter

from clinjudge.inject.citations import (
    MAX_CLAUSE,
    citation_table,
    fabricated_citation,
    icd10_codes,
)
from clinjudge.inject.shape import check_shape
from clinjudge.inject.taxonomy import load_taxonomy
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.sentences import split_sentences

ACC = "American College of Cardiology"
HTN = "ASSESSMENT AND PLAN\n\nHypertension.\n{0}"
LISINOPRIL = "[doctor] i will start you on lisinopril for your blood pressure .\n[patient] okay ."


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture(scope="module")
def limits():
    return load_taxonomy()["evidence_fabrication"].limits


def _encounter(folder: str, encounter_id: str) -> tuple[str, str]:
    return read_encounter(folder, encounter_id)


def _clauses(note: str, transcript: str, kb: KnowledgeBase) -> list[str]:
    return [p.after for p in fabricated_citation.candidates(note, transcript, kb=kb)]


# -- the table -------------------------------------------------------------------------------


def test_templates_fit_the_limits_and_keep_one_sentence():
    table = citation_table()
    assert set(table.templates) == {"drug", "imaging", "lab", "referral"}
    longest = max(table.organisations, key=len)
    for kind, templates in table.templates.items():
        for t in templates:
            clause = t.format(year=2020, org=longest, condition="chronic obstructive pulmonary")
            assert clause.startswith(", ") and "." not in clause, (kind, t)
            assert len(clause) <= MAX_CLAUSE
            sentence = f"We will start it{clause}."
            assert len(split_sentences(sentence)) == 1
    assert not any("." in org for org in table.organisations)


@pytest.mark.parametrize(
    ("term", "organisation"),
    [("hypertension", ACC), ("gout", "American Academy of Orthopaedic Surgeons"),
     ("diabetes", "American Diabetes Association"), ("asthma", "American Thoracic Society"),
     ("hypothyroidism", "Endocrine Society"), ("depression", "American Psychiatric Association"),
     ("GERD", "American Gastroenterological Association")],
)  # fmt: skip
def test_body_system_comes_from_the_icd10_codes_of_the_knowledge_base(kb, term, organisation):
    (mention,) = kb.concepts_in(term)
    codes = icd10_codes(kb, mention.canonical)
    assert codes and all(c.startswith("ICD10CM:") for c in codes)
    assert citation_table().organisation(codes) == organisation


# -- applies ---------------------------------------------------------------------------------


def test_drug_decision_gets_a_guideline_of_its_body_system_before_the_period(kb):
    note = HTN.format("We will start lisinopril 10 mg daily.")
    found = fabricated_citation.candidates(note, LISINOPRIL, kb=kb)
    assert len(found) == len(citation_table().templates["drug"])
    period = note.rindex(".")
    for p in found:
        assert p.start == period and p.before == "" and p.note.endswith(p.after + ".")
        assert "daily, " in p.note and p.type == "fabricated_citation"
    clauses = [p.after for p in found]
    assert any(ACC in c and "for hypertension" in c for c in clauses)
    assert any("randomized trial" in c and ACC not in c for c in clauses)
    words = (w for c in clauses for w in c.replace(",", " ").split())
    years = {int(w) for w in words if w.isdigit() and len(w) == 4}
    assert len(years) == 1 and 2015 <= years.pop() <= 2023


def test_each_kind_of_decision_gets_its_own_templates(kb):
    note = (
        "ASSESSMENT AND PLAN\n\nRight knee pain.\nWe will order an MRI of the right knee.\n"
        "I will refer her to physical therapy.\nWe will check a CBC."
    )
    found = fabricated_citation.candidates(note, "[doctor] an mri , a cbc and therapy .", kb=kb)
    kinds = {p.rationale.split(" decision")[0].rsplit(" ", 1)[-1] for p in found}
    assert kinds == {"imaging", "referral", "lab"}
    assert any("detects 98%" in p.after and "MRI of the right knee, since" in p.note for p in found)
    assert any(
        "shortens recovery" in p.after and "physical therapy, which" in p.note for p in found
    )
    assert any("every six months" in p.after and "a CBC, as required" in p.note for p in found)
    # no diagnosis with a body system: the fallback organisation, no {condition} templates
    assert all(
        "with" not in p.after.split("guideline")[-1] for p in found if "guideline" in p.after
    )
    assert any(citation_table().fallback in p.after for p in found)


def test_seed_makes_the_choice_deterministic(kb):
    note = HTN.format("We will start lisinopril 10 mg daily. We will check a lipid panel.")
    first = fabricated_citation(note, LISINOPRIL, seed=4, kb=kb)
    assert first == fabricated_citation(note, LISINOPRIL, seed=4, kb=kb)
    assert len({fabricated_citation(note, LISINOPRIL, seed=s, kb=kb) for s in range(12)}) > 2


# -- refuses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence",
    [
        "We will not start lisinopril today.",
        "We may start lisinopril at the next visit.",
        "Discontinue lisinopril.",
        "She will follow up in 2 weeks for repeat imaging.",
        "Recommend the shingles vaccine next month.",
        "We will start lisinopril 10 mg daily per the AHA guideline.",
        "We will start lisinopril 10 mg daily",
        "Her blood pressure is well controlled.",
    ],
)
def test_refuses_what_is_no_plain_decision(kb, sentence):
    assert _clauses(HTN.format(sentence), LISINOPRIL, kb) == []


def test_refuses_when_the_transcript_cites_for_that_decision(kb):
    note = HTN.format("We will start lisinopril 10 mg daily. We will order an echocardiogram.")
    cited = (
        "[doctor] the guidelines say we should start lisinopril for your blood pressure .\n"
        "[patient] okay .\n[doctor] and i'll get an echocardiogram ."
    )
    found = fabricated_citation.candidates(note, cited, kb=kb)
    assert found and all("echocardiogram" in p.rationale for p in found)
    trial = "[doctor] i will start you on lisinopril . a big trial showed it helps ."
    assert _clauses(HTN.format("We will start lisinopril 10 mg daily."), trial, kb) == []


def test_refuses_an_organisation_the_transcript_names(kb):
    note = HTN.format("We will start lisinopril 10 mg daily.")
    named = LISINOPRIL + "\n[doctor] the american college of cardiology has a website ."
    clauses = _clauses(note, named, kb)
    assert clauses and all(ACC not in c for c in clauses)


# -- real notes ------------------------------------------------------------------------------


def test_real_notes_pass_the_shape_check(kb, limits):
    for folder, encounter in (("inject", "D2N009"), ("inject_dx", "D2N001")):
        note, transcript = _encounter(folder, encounter)
        found = fabricated_citation.candidates(note, transcript, kb=kb, source_id=encounter)
        assert found
        for p in found:
            assert p.note[p.end] == "." and p.source_id == encounter
            check = check_shape(p.original_note, p.note, limits)
            assert check.ok, check.reason()
            assert check.shape is not None and check.shape.sentences_touched == 1
    note, transcript = _encounter("inject", "D2N009")
    found = fabricated_citation.candidates(note, transcript, kb=kb)
    assert any(
        "order a MRI of the lumbar spine for further evaluation, as" in p.note for p in found
    )
    assert any("Initiate meloxicam" in p.note[p.start - 120 : p.start] for p in found)


def test_real_note_without_a_plain_decision_is_refused(kb):
    # "I will prescribe Lortab ..." names no drug the knowledge base knows; the imaging
    # sentence is a follow-up, the cast a procedure
    assert fabricated_citation(*_encounter("inject", "D2N018"), seed=0, kb=kb) is None


def test_a_negated_diagnosis_gives_no_authority(kb):
    note = "ASSESSMENT AND PLAN\n\nX-rays show no fracture.\nI will start you on lisinopril."
    clauses = _clauses(note, LISINOPRIL, kb)
    assert clauses and not any("fracture" in c or "Orthopaedic" in c for c in clauses)
    asserted = "ASSESSMENT AND PLAN\n\nX-rays show a fracture.\nI will start you on lisinopril."
    assert any("Orthopaedic" in c for c in _clauses(asserted, LISINOPRIL, kb))
