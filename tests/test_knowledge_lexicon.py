"""Normalisation, linking rules and scanning of the lexicon, on small synthetic concept sets."""

from __future__ import annotations

from clinjudge.knowledge.concept import Concept, term_ref
from clinjudge.knowledge.lexicon import build_lexicon, is_acronym
from clinjudge.knowledge.normalize import key, key_variants, singular, tokenize


def C(cid, source, kind, preferred, synonyms=(), relations=()):  # noqa: N802 - reads like data
    return Concept(cid, source, kind, preferred, tuple(synonyms), tuple(relations))


def lexicon(*concepts, stoplist=frozenset(), whitelist=frozenset()):
    return build_lexicon(concepts, stoplist=frozenset(stoplist), whitelist=frozenset(whitelist))


def test_key_normalises_case_punctuation_plurals_possessives_hyphens():
    assert key("Crohn's Disease") == key("crohns disease") == "crohn disease"
    assert key("Ribs") == key("rib")
    assert key("UTIs") == key("UTI") == "uti"
    assert key("acétaminophène") == "acetaminophene"
    assert key("Type two diabetes") == key("type 2 diabetes")
    assert key("X-ray") == "x ray" and "xray" in set(key_variants("X-ray"))
    assert key("s/p CABG") == "s p cabg"
    assert singular("virus") == "virus" and singular("analysis") == "analysis"
    assert singular("diabetes") == singular("diabete")  # symmetric, not linguistic
    assert singular("boxes") == "box" and singular("allergies") == "allergy"
    assert singular("headaches") == "headache" and singular("branches") == "branch"
    assert singular("aches") == "ache" and singular("reaches") == "reach"


def test_tokenize_offsets_and_segments():
    text = "Chest pain, SOB."
    tokens = tokenize(text)
    assert [text[t.start : t.end] for t in tokens] == ["Chest", "pain", "SOB"]
    assert tokens[0].segment == tokens[1].segment != tokens[2].segment


def test_is_acronym():
    assert is_acronym("COPD") and is_acronym("HbA1c") and is_acronym("ACE-I")
    assert not is_acronym("Zestril") and not is_acronym("MiraLAX") and not is_acronym("cold")


def test_merges_xref_one_to_one_but_not_ambiguous_xrefs():
    lx = lexicon(
        C("ICD10CM:X1", "icd10cm", "disease", "Zorb disease"),
        C("DOID:1", "disease_ontology", "disease", "zorbosis", relations=[("xref", "ICD10CM:X1")]),
        C("ICD10CM:X2", "icd10cm", "disease", "Blip disease"),
        C("DOID:2", "disease_ontology", "disease", "blip a", relations=[("xref", "ICD10CM:X2")]),
        C("DOID:3", "disease_ontology", "disease", "blip b", relations=[("xref", "ICD10CM:X2")]),
    )
    assert lx.canonical_id(lx.pos["ICD10CM:X1"]) == "DOID:1"  # DO outranks ICD as canonical
    canon = {lx.canonical_id(lx.pos[i]) for i in ("ICD10CM:X2", "DOID:2", "DOID:3")}
    assert len(canon) == 3  # one code shared by two DO terms: no merge
    assert ("xref", lx.pos["ICD10CM:X2"]) in lx.edges[lx.pos["DOID:2"]]


def test_merges_by_unique_preferred_name_across_sources():
    lx = lexicon(
        C("ICD10CM:R1", "icd10cm", "symptom", "Glimmer pain, unspecified"),
        C("SYMP:1", "symptom_ontology", "symptom", "glimmer pain"),
        C("SYMP:2", "symptom_ontology", "symptom", "twin"),
        C("SYMP:3", "symptom_ontology", "symptom", "twin"),
        C("ICD10CM:R2", "icd10cm", "symptom", "Twin"),
    )
    assert lx.canon[lx.pos["ICD10CM:R1"]] == lx.canon[lx.pos["SYMP:1"]]
    assert lx.canon[lx.pos["ICD10CM:R2"]] not in {lx.canon[lx.pos["SYMP:2"]], lx.pos["SYMP:3"]}


def test_brand_lay_and_abbreviation_links_merge_only_when_unambiguous():
    lx = lexicon(
        C("DRUG:zorbinol", "drugs", "drug", "Zorbinol", ["Zorbex"]),
        C("BRAND:zorbex", "drugs", "drug", "Zorbex", relations=[("brand_of", "DRUG:zorbinol")]),
        C("DRUG:a", "drugs", "drug", "Alphamine"),
        C("DRUG:b", "drugs", "drug", "Betamine"),
        C(
            "BRAND:combo",
            "drugs",
            "drug",
            "Combex",
            [],
            [("brand_of", "DRUG:a"), ("brand_of", "DRUG:b")],
        ),
        C("SYMP:9", "symptom_ontology", "symptom", "dyspnoea plus"),
        C(
            "LAY:puffed",
            "lay_terms",
            "lay_term",
            "puffed",
            [],
            [("lay_for", term_ref("dyspnoea plus"))],
        ),
        C(
            "LAY:sugr",
            "lay_terms",
            "lay_term",
            "sugr",
            [],
            [("lay_for", "TERM:glucose"), ("lay_for", "TERM:diabetes")],
        ),
        C("CUR:glucose", "curated", "finding", "glucose", [], [("same_as", "TERM:glucose")]),
        C("CUR:diabetes", "curated", "disease", "diabetes", [], [("same_as", "TERM:diabetes")]),
        C(
            "ABBR:DPP",
            "abbreviations",
            "abbreviation",
            "DPP",
            [],
            [("expands_to", "TERM:dyspnoea plus")],
        ),
    )
    same = lambda a, b: lx.canon[lx.pos[a]] == lx.canon[lx.pos[b]]  # noqa: E731
    assert same("BRAND:zorbex", "DRUG:zorbinol")
    assert not same("DRUG:a", "DRUG:b") and not same("BRAND:combo", "DRUG:a")
    assert same("LAY:puffed", "SYMP:9") and same("ABBR:DPP", "SYMP:9")
    assert not same("LAY:sugr", "CUR:glucose") and not same("CUR:glucose", "CUR:diabetes")
    rels = lx.edges[lx.pos["LAY:sugr"]]
    assert ("lay_for", lx.canon[lx.pos["CUR:glucose"]]) in rels
    assert ("lay_for", lx.canon[lx.pos["CUR:diabetes"]]) in rels
    assert [c.id for c in lx.lookup("zorbex")][0] == "DRUG:zorbinol"  # the generic first


def test_unresolved_term_targets_are_kept_as_keys():
    lx = lexicon(
        C(
            "ABBR:QQ",
            "abbreviations",
            "abbreviation",
            "QQ",
            [],
            [("expands_to", "TERM:quux quarter")],
        )
    )
    assert lx.term_edges[lx.pos["ABBR:QQ"]] == (("expands_to", "quux quarter"),)


def test_scan_longest_match_offsets_and_punctuation_breaks():
    lx = lexicon(
        C("SYMP:1", "symptom_ontology", "symptom", "chest pain"),
        C("SYMP:2", "symptom_ontology", "symptom", "pain"),
        C("SYMP:3", "symptom_ontology", "symptom", "left chest pain radiating"),
    )
    text = "Has chest pains today; chest, pain."
    found = [(m.surface, m.concept_ids) for m in lx.scan(text)]
    assert found == [("chest pains", ("SYMP:1",)), ("pain", ("SYMP:2",))]
    m = lx.scan(text)[0]
    assert text[m.start : m.end] == "chest pains" and m.kinds == ("symptom",)


def test_scan_gates_abbreviations_and_stops_common_words():
    lx = lexicon(
        C(
            "ABBR:SOB",
            "abbreviations",
            "abbreviation",
            "SOB",
            [],
            [("expands_to", "TERM:breathless")],
        ),
        C(
            "ABBR:DOE",
            "abbreviations",
            "abbreviation",
            "DOE",
            [],
            [("expands_to", "TERM:dyspnea on exertion")],
        ),
        C("DOID:9", "disease_ontology", "disease", "chronic zorb disease", ["CZD", "HbZ1c"]),
        C("DRUG:x", "drugs", "drug", "Wellex", ["well"]),
        C("LAY:well", "lay_terms", "lay_term", "well feeling", ["well"]),
        stoplist={"well"},
        whitelist={"doe"},
    )
    ids = lambda t: [m.concept_ids for m in lx.scan(t)]  # noqa: E731
    assert ids("she is SOB at rest") == [("ABBR:SOB",)]
    assert ids("she is sob at rest") == []  # lower case, not whitelisted
    assert ids("no doe") == [("ABBR:DOE",)]  # whitelisted in lower case
    assert ids("known CZD") == [("DOID:9",)] and ids("known czd") == []
    assert ids("HbZ1c was high") == [("DOID:9",)]  # exact mixed-case acronym form
    assert ids("doing well") == [("LAY:well",)]  # stopped for the drug, not for the lay term
    assert [c.id for c in lx.lookup("well")] == ["DRUG:x", "LAY:well"]  # lookup still finds it


def test_a_cached_lexicon_makes_its_concepts_on_first_use(tmp_path):
    """The pickled lexicon keeps its concepts as field tuples (no constructor call per concept
    on load) and reads back equal: same concepts, lookups and scans."""
    from clinjudge.knowledge import cache
    from clinjudge.knowledge.concept import ConceptTable

    built = lexicon(
        C("DRUG:lisinopril", "drugs", "drug", "Lisinopril", ["Zestril"]),
        C("LAY:sugar", "lay_terms", "lay_term", "sugar", relations=[("lay_for", "DOID:9351")]),
        C("DOID:9351", "disease_ontology", "disease", "diabetes mellitus"),
    )
    path = tmp_path / "lexicon.pkl"
    cache.write_pickle(path, built)
    loaded = cache.read_pickle(path)
    assert isinstance(loaded.concepts, ConceptTable)
    assert loaded.concepts._made == [None, None, None]
    assert loaded.concepts[-1] == built.concepts[2] and loaded.concepts._made[2] is not None
    assert list(loaded.concepts) == list(built.concepts) and loaded == built
    assert loaded.concepts[1:] == built.concepts[1:] == list(built.concepts)[1:]
    assert loaded.lookup("zestril") == built.lookup("zestril")
    assert loaded.scan("my sugar and Zestril") == built.scan("my sugar and Zestril")
    assert cache.read_pickle(tmp_path / "absent.pkl") is None
