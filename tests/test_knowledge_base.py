"""The KnowledgeBase facade on the full default build (built once per test session)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.knowledge.concept import Hit
from clinjudge.types import KnowledgeEntry

FIXTURES = Path(__file__).parent / "fixtures" / "knowledge"
ACI = json.loads((FIXTURES / "aci_sentences.json").read_text())


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> KnowledgeBase:
    # one cache directory for the whole session: other knowledge test modules reuse the build
    return KnowledgeBase.load(tmp_path_factory.getbasetemp() / "knowledge-cache")


def surfaces(mentions):
    return [m.surface.lower() for m in mentions]


def test_trade_and_generic_names_are_the_same_concept(kb):
    assert kb.same_concept("Zestril", "lisinopril")
    assert kb.same_concept("Glucophage", "metformin")
    assert kb.lookup("Zestril")[0].id == "DRUG:lisinopril"  # the generic first
    assert kb.related("Zestril", "lisinopril") == "brand_of"
    assert not kb.same_concept("lisinopril", "losartan")
    assert kb.related("lisinopril", "ACE inhibitor") == "in_class"
    assert kb.related("Lasix", "loop diuretic") == "in_class"  # brand -> generic -> class


def test_lay_terms_and_synonyms(kb):
    assert kb.same_concept("heart attack", "myocardial infarction")
    assert kb.same_concept("pins and needles", "paresthesia")
    assert kb.same_concept("throwing up", "vomiting")
    assert kb.same_concept("runny nose", "rhinorrhea")
    assert kb.same_concept("short of breath", "shortness of breath")
    assert kb.related("short of breath", "dyspnea") == "lay_for"
    assert kb.related("passed out", "syncope") == "lay_for"
    # an ambiguous lay term is related to each reading but merged with none
    assert kb.related("sugar", "diabetes mellitus") == "lay_for"
    assert kb.related("sugar", "glucose") == "lay_for"
    assert not kb.same_concept("glucose", "diabetes mellitus")
    assert kb.related("belly", "abdomen") == "lay_for"
    assert kb.related("water pill", "diuretic") == "lay_for"


def test_abbreviations_expand_and_keep_their_senses(kb):
    senses = {t for c in kb.lookup("SOB") for r, t in c.relations if r == "expands_to"}
    assert "TERM:shortness of breath" in senses
    assert kb.related("SOB", "shortness of breath") == "expands_to"
    assert kb.same_concept("HTN", "hypertension")
    pe = next(c for c in kb.lookup("PE") if c.kind == "abbreviation")
    pe_senses = {t for r, t in pe.relations if r == "expands_to"}
    assert {"TERM:pulmonary embolism", "TERM:physical exam"} <= pe_senses
    assert kb.related("PE", "pulmonary embolism") == "expands_to"


def test_related_through_symptoms_classes_and_hierarchy(kb):
    assert kb.related("angina", "chest pain") == "has_symptom"
    assert kb.related("chest pain", "angina") == "has_symptom"  # either direction
    assert kb.related("unstable angina", "chest pain") == "has_symptom"  # via is_a
    assert kb.related("Acute myocardial infarction", "Ischemic heart diseases") == "is_a"
    assert kb.related("asthma", "wheezing") == "has_symptom"
    assert kb.related("knee pain", "lisinopril") is None
    assert kb.related("not a term at all", "chest pain") is None


def test_curated_treatments_link_a_condition_to_its_specific_drugs(kb):
    assert kb.related("hypertension", "Zestril") == "treated_by"  # brand -> lisinopril
    assert kb.related("Unithroid", "hypothyroidism") == "treated_by"  # either direction
    assert kb.related("GERD", "omeprazole") is None  # a PPI treats gastritis as much
    assert kb.related("gout", "allopurinol") == "treated_by"
    assert kb.related("hypotension", "lisinopril") is None
    assert kb.related("hyperthyroidism", "levothyroxine") is None


def test_concepts_in_transcript_sentence(kb):
    text = ACI["transcript"]
    found = kb.concepts_in(text)
    names = surfaces(found)
    assert {"chest pains", "shortness of breath", "swelling"} <= set(names)
    for m in found:
        assert text[m.start : m.end] == m.surface and m.concept_ids and m.canonical
    common = {"today", "sure", "all", "well", "any", "okay", "no", "not", "good"}
    assert not common & set(names)
    bp = surfaces(kb.concepts_in(ACI["transcript_bp"]))
    assert "blood pressure medication" in bp and "blood pressure" in bp


def test_concepts_in_note_sentence(kb):
    found = kb.concepts_in(ACI["note_plan"])
    by_surface = {m.surface: m for m in found}
    assert set(by_surface) == {"lisinopril", "Lasix"}
    assert by_surface["Lasix"].canonical == ("DRUG:furosemide",)
    note = surfaces(kb.concepts_in(ACI["note"]))
    assert note == ["chest pain", "shortness of breath", "swelling"]


def test_common_words_never_become_mentions(kb):
    text = "Today I'm sure all is well, okay. We will see you in a week, all right?"
    assert kb.concepts_in(text) == []
    assert kb.concepts_in("ASSESSMENT AND PLAN") == []
    # abbreviations only where written like abbreviations
    assert surfaces(kb.concepts_in("Pt c/o SOB and CP, hx of HTN and COPD.")) == [
        "c/o",
        "sob",
        "cp",
        "hx",
        "htn",
        "copd",
    ]
    assert surfaces(kb.concepts_in("ms smith was in the er, cp the file")) == []


def test_lookup_concept_canonical_and_entry(kb):
    mi = kb.concept("DOID:5844")
    assert mi.preferred == "myocardial infarction"
    assert kb.canonical("LAY:heart attack") == "DOID:5844"
    with pytest.raises(KeyError):
        kb.concept("DOID:does-not-exist")
    entry = kb.entry(mi, relation="same_as")
    assert isinstance(entry, KnowledgeEntry)
    assert (entry.concept_id, entry.source, entry.kind, entry.relation) == (
        "DOID:5844",
        "disease_ontology",
        "disease",
        "same_as",
    )
    hit = Hit("DRUG:lisinopril", "Lisinopril", "drugs", "drug", 1.0, "Zestril")
    assert kb.entry(hit).matched == "Zestril"
    assert kb.entry("DRUG:lisinopril").preferred == "Lisinopril"


def test_lexical_search_without_the_dense_index(kb):
    hits = kb.search("heart attack", k=3, dense=False)
    assert hits[0].concept_id == "DOID:5844" and hits[0].score == 1.0
    assert kb.search("Zestril", k=1, dense=False)[0].concept_id == "DRUG:lisinopril"
    sob = kb.search("SOB", k=5, dense=False)
    assert any("breath" in h.preferred.lower() or h.preferred == "dyspnea" for h in sob)


def test_stats_and_warm_reload(kb, tmp_path_factory):
    info = kb.stats()
    assert info["concepts"] == len(kb.lexicon.concepts) > 80000
    assert {"icd10cm", "drugs", "disease_ontology", "abbreviations", "lay_terms"} <= set(
        info["per_source"]
    )
    again = KnowledgeBase.load(tmp_path_factory.getbasetemp() / "knowledge-cache")
    assert again.digest == kb.digest
    assert len(again.lexicon.concepts) == len(kb.lexicon.concepts)
