"""Concept sources: bundled files, derivations from real excerpts, SNOMED CT samples, RDF."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinjudge.knowledge.bundled import read_jsonl_gz, write_jsonl_gz
from clinjudge.knowledge.concept import KINDS
from clinjudge.knowledge.sources import (
    DEFAULT_SOURCES,
    abbreviations,
    curated,
    disease_ontology,
    drugs,
    icd10cm,
    lay_terms,
    rdf,
    snomed,
    symptom_ontology,
)

FIXTURES = Path(__file__).parent / "fixtures" / "knowledge"


def by_id(concepts):
    return {c.id: c for c in concepts}


def test_icd10cm_descriptions_hierarchy_and_kinds():
    concepts = by_id(icd10cm.iter_concepts())
    mi = concepts["ICD10CM:I21.9"]
    assert mi.preferred == "Acute myocardial infarction, unspecified"
    assert "Acute myocardial infarction" in mi.synonyms  # ", unspecified" stripped
    assert ("is_a", "ICD10CM:I21") in mi.relations
    assert ("same_as", "ICD10CM:I21") in mi.relations  # unspecified child = its category
    angina = concepts["ICD10CM:I20.9"]
    assert "Angina" in angina.synonyms  # inclusion term "Angina NOS"
    assert concepts["ICD10CM:R06.02"].kind == "symptom"
    assert concepts["ICD10CM:R70"].kind == "finding"
    assert concepts["ICD10CM:I10"].kind == "disease"
    assert "Essential hypertension" in concepts["ICD10CM:I10"].synonyms
    assert not any(cid.endswith("A") and cid.startswith("ICD10CM:S72.001") for cid in concepts)


def test_drugs_brand_is_synonym_and_brand_of_generic():
    concepts = by_id(drugs.iter_concepts())
    lisinopril = concepts["DRUG:lisinopril"]
    assert "Zestril" in lisinopril.synonyms
    assert ("in_class", "DRUGCLASS:ace_inhibitor") in lisinopril.relations
    assert concepts["BRAND:zestril"].relations == (("brand_of", "DRUG:lisinopril"),)
    percocet = concepts["BRAND:percocet"]  # a combination: one brand_of per ingredient
    assert {t for _, t in percocet.relations} == {"DRUG:oxycodone", "DRUG:acetaminophen"}
    # the curated list overrides the dictionary's "synthroid" -> thyroxine entry
    assert "Synthroid" in concepts["DRUG:levothyroxine"].synonyms
    assert "synthroid" not in concepts["DRUG:thyroxine"].synonyms
    assert not any("&lt;" in s or "{{" in s for s in lisinopril.synonyms)  # wiki debris gone
    assert concepts["DRUGCLASS:thiazide_diuretic"].relations == (("is_a", "DRUGCLASS:diuretic"),)


def test_curated_drug_files_resolve_against_the_dictionary():
    variants, canonicals, _ = drugs.load_dictionary()
    brands = list(drugs.read_csv(drugs.data_path("drug_brands.csv")))
    unresolved = [
        r["brand"]
        for r in brands
        if not all(drugs._resolve(g, variants, canonicals) for g in r["generic"].split(" + "))
    ]
    assert unresolved == []
    members = [
        m
        for r in drugs.read_csv(drugs.data_path("drug_classes.csv"))
        for m in r["members"].split("|")
        if m and not drugs._resolve(m, variants, canonicals)
    ]
    assert members == []


def test_nhs_brands_derivation_skips_abbreviations(tmp_path):
    variants, _, _ = drugs.load_dictionary()
    nhs = tmp_path / "nhs_sample.json"
    nhs.write_text(
        '[{"name": "Fluoxetine (Prozac)"}, {"name": "Glyceryl trinitrate (GTN)"},'
        ' {"name": "Ibuprofen for adults (Nurofen)"}, {"name": "Pre-Exposure Prophylaxis (PrEP)"}]'
    )
    rows = list(drugs.derive_nhs_rows(nhs, variants))
    assert rows == [
        {"brand": "Prozac", "generic": "fluoxetine"},
        {"brand": "Nurofen", "generic": "ibuprofen"},
    ]


def test_disease_ontology_derivation_and_bundled_file(tmp_path):
    rows = list(
        disease_ontology.derive_rows(
            FIXTURES / "do_terms_sample.jsonl", FIXTURES / "disease_symptom_sample.tsv"
        )
    )
    ids = {r["id"] for r in rows}
    assert "DOID:5844" in ids and not any("obsolete" in r["name"] for r in rows)
    mi = next(r for r in rows if r["id"] == "DOID:5844")
    assert "heart attack" in mi["synonyms"]
    assert "ICD10CM:I21" in mi["xrefs"] and "SNOMED:66514008" in mi["xrefs"]
    assert not any(x.startswith(("MESH", "NCI", "EFO")) for x in mi["xrefs"])
    out = tmp_path / "do.jsonl.gz"
    assert write_jsonl_gz(out, rows) == len(rows)
    again = by_id(disease_ontology.iter_concepts(out))
    assert ("xref", "ICD10CM:I21") in again["DOID:5844"].relations
    bundled = by_id(disease_ontology.iter_concepts())
    assert len(bundled) > 12000
    assert "heart attack" in bundled["DOID:5844"].synonyms
    assert any(r == "has_symptom" for c in bundled.values() for r, _ in c.relations)


def test_symptom_ontology_keeps_exact_synonyms_only(tmp_path):
    rows = {r["id"]: r for r in symptom_ontology.derive_rows(FIXTURES / "symp_sample.obo")}
    assert "SYMP:0000003" not in rows  # obsolete
    assert "shortness of breath" in rows["SYMP:0019153"]["synonyms"]
    assert rows["SYMP:0000576"]["is_a"] == ["SYMP:0000099"]
    assert rows["SYMP:0000576"]["xrefs"] == ["UMLS:C0008031"]
    bundled = by_id(symptom_ontology.iter_concepts())
    assert bundled["SYMP:0019153"].preferred == "dyspnea"
    assert all(c.kind == "symptom" for c in bundled.values())


def test_abbreviations_keep_ambiguity_and_drop_junk(tmp_path):
    rows = {r["abbr"]: r for r in abbreviations.derive_rows(FIXTURES / "abbr")}
    assert [s["text"] for s in rows["SOB"]["senses"]] == ["shortness of breath"]
    ms_senses = {s["text"] for s in rows["MS"]["senses"]}
    assert {"multiple sclerosis", "mental status"} <= ms_senses
    assert "milliseconds" not in ms_senses  # 0.31 % in Vanderbilt clinic notes: dropped
    assert "A" not in rows and "R" not in rows  # single-character short forms
    assert not any("not an" in s["text"] for r in rows.values() for s in r["senses"])
    assert rows["ETOH"]["senses"][0]["text"] == "ethanol"  # "(aka alcohol)" removed
    bundled = by_id(abbreviations.iter_concepts())
    assert ("expands_to", "TERM:shortness of breath") in bundled["ABBR:SOB"].relations
    assert len([r for r, _ in bundled["ABBR:PE"].relations]) >= 3  # ambiguity kept


def test_lay_terms_and_curated_relations_are_well_formed():
    lay = list(lay_terms.iter_concepts())
    ids = by_id(lay)
    assert 600 <= sum(c.kind == "lay_term" for c in lay) <= 800
    assert ids["LAY:heart attack"].relations == (("lay_for", "TERM:myocardial infarction"),)
    assert {t for _, t in ids["LAY:sugar"].relations} == {
        "TERM:glucose",
        "TERM:diabetes mellitus",
    }
    assert ids["CUR:abdomen"].kind == "anatomy"  # target of "belly", typed by the CSV
    assert all(c.kind in KINDS for c in lay)
    cur = by_id(curated.iter_concepts())
    assert ("has_symptom", "TERM:chest pain") in cur["CUR:angina"].relations
    assert ("same_as", "TERM:angina") in cur["CUR:angina"].relations


def test_default_sources_registry_lists_every_bundled_file():
    files = {f for _, fs in DEFAULT_SOURCES.values() for f in fs}
    for name in files:
        assert (drugs.data_path(name)).exists(), name
    assert set(DEFAULT_SOURCES) == {
        "icd10cm",
        "drugs",
        "disease_ontology",
        "symptom_ontology",
        "abbreviations",
        "lay_terms",
        "curated",
    }
    assert next(iter(read_jsonl_gz(drugs.data_path(abbreviations.DATA_FILE))))["abbr"]


def test_snomed_rf2_active_rows_semantic_tags_and_attributes():
    concepts = by_id(snomed.iter_concepts(FIXTURES / "snomed" / "rf2"))
    assert "SNOMED:999000061" not in concepts  # inactive concept
    zorblax = concepts["SNOMED:999000011"]
    assert zorblax.kind == "disease"
    assert zorblax.preferred == "Zorblaxitis"  # preferred in the language refset
    assert "Zorblax disorder" in zorblax.synonyms
    assert "Retired zorblax synonym" not in zorblax.synonyms  # inactive description
    assert ("is_a", "SNOMED:999000021") in zorblax.relations
    assert ("finding_site", "SNOMED:999000041") in zorblax.relations  # named from its FSN
    pain = concepts["SNOMED:999000031"]
    assert pain.kind == "finding" and pain.preferred == "Glimmer pain"
    assert ("is_a", "SNOMED:999000021") not in pain.relations  # inactive relationship
    assert concepts["SNOMED:999000041"].kind == "anatomy"


def test_snomed_turtle_and_errors(tmp_path):
    concepts = by_id(snomed.iter_concepts(FIXTURES / "snomed" / "snomed_sample.ttl"))
    assert set(concepts) == {"SNOMED:999000011", "SNOMED:999000021", "SNOMED:999000031"}
    assert concepts["SNOMED:999000011"].kind == "disease"
    assert concepts["SNOMED:999000011"].preferred == "Zorblax disorder"
    assert concepts["SNOMED:999000031"].synonyms == ("Glimmering ache",)
    with pytest.raises(snomed.SnomedError, match="RF2"):
        list(snomed.iter_concepts(tmp_path))  # an empty directory
    with pytest.raises(snomed.SnomedError, match="no such"):
        snomed.iter_concepts(tmp_path / "missing")


def test_rdf_skos_vocabulary_and_unreadable_file(tmp_path):
    concepts = by_id(
        rdf.iter_concepts(FIXTURES / "extra_vocab.ttl", source="extra", kind="disease")
    )
    fever = concepts["ex:wobbleFever"]
    assert fever.preferred == "wobble fever"
    assert set(fever.synonyms) == {"wobbly pyrexia", "WBF"}
    assert fever.relations == (("is_a", "ex:madeUpFever"),)
    assert not any("obsolete" in c.preferred for c in concepts.values())
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://e/> .\nex:a ex:b")
    with pytest.raises(rdf.RdfError, match="cannot parse"):
        list(rdf.iter_concepts(bad))
    with pytest.raises(rdf.RdfError, match="unknown RDF format"):
        list(rdf.iter_concepts(FIXTURES / "PROVENANCE.md"))
