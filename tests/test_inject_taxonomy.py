"""The injection taxonomy as data (clinjudge/inject/data/taxonomy.toml, SPEC §5): 13 error types,
the rewrite types (and issue 36's error/rewrite pairs beyond them), sane limits, injectors that
exist, and type selection."""

from __future__ import annotations

import pytest

from clinjudge.inject.injectors import INJECTORS
from clinjudge.inject.taxonomy import (
    TAXONOMY,
    TaxonomyError,
    error_types,
    mechanical_types,
    parse_taxonomy,
    rewrite_types,
    select_types,
)

SPEC_ERRORS = {
    "dosage", "wrong_drug", "contraindicated_treatment", "wrong_diagnosis",
    "additional_diagnosis", "omission", "threshold_value", "laterality_anatomy",
    "timing_duration", "evidence_fabrication", "overconfidence", "negation_flip",
    "causal_organism",
}  # fmt: skip


ISSUE_36_ERRORS = {"attribution", "time_shift", "superseded", "declined_plan"}
ISSUE_36_REWRITES = {"voice", "time_rewording", "correction_rewording", "plan_rewording"}


def test_thirteen_error_types_and_four_rewrites_and_issue_36s_pairs_beyond_them():
    assert set(error_types()) == SPEC_ERRORS | ISSUE_36_ERRORS  # issue 36, beyond SPEC §5
    assert (
        set(rewrite_types())
        == {
            "trade_generic",
            "lay_to_clinical",
            "abbreviation",
            "paraphrase",
        }
        | ISSUE_36_REWRITES
    )


def test_every_type_is_complete_and_its_injectors_exist_with_its_kind():
    for t in TAXONOMY.values():
        assert t.definition and t.example_before != t.example_after and t.name
        assert t.mechanical == bool(t.injectors)
        for name in t.injectors:
            assert INJECTORS[name].kind == t.kind


def test_existing_perturbers_map_onto_types():
    owner = {name: t.id for t in TAXONOMY.values() for name in t.injectors}
    assert owner["dose_change"] == owner["frequency_change"] == "dosage"
    assert owner["added_drug"] == owner["drug_swap"] == "wrong_drug"
    assert owner["fabricated_history"] == "additional_diagnosis"
    assert owner["laterality_flip"] == "laterality_anatomy"
    assert owner["generic_to_brand"] == "trade_generic"
    assert owner["term_to_abbreviation"] == "abbreviation"
    assert set(owner) == set(INJECTORS)  # every offline injector serves a type


def test_limits_follow_the_shape_of_each_type():
    lim = {t: TAXONOMY[t].limits for t in TAXONOMY}
    assert lim["omission"].destroy > 100 and lim["omission"].write <= 10
    assert lim["evidence_fabrication"].write > 100
    assert lim["dosage"].destroy <= 20 and lim["negation_flip"].sentences == 1
    assert all(v.sentences <= 2 for v in lim.values())


def test_each_example_passes_its_own_shape_limits():
    from clinjudge.inject.shape import check_shape

    for t in TAXONOMY.values():
        check = check_shape(t.example_before, t.example_after, t.limits)
        assert check.ok, (t.id, check.violations)


def test_select_types_groups_lists_and_unknown_names():
    assert select_types("errors") == list(error_types())
    assert select_types("dosage,negation_flip,dosage") == ["dosage", "negation_flip"]
    assert select_types("all") == list(TAXONOMY)
    with pytest.raises(TaxonomyError, match="unknown injection type 'typo'; valid: all, errors"):
        select_types("dosage,typo")


def test_offline_selection_keeps_mechanical_types_and_names_the_others():
    assert select_types("all", offline=True) == list(mechanical_types())
    assert "paraphrase" not in select_types("rewrites", offline=True)
    with pytest.raises(TaxonomyError, match="'causal_organism' has no offline injector"):
        select_types("dosage,causal_organism", offline=True)


def test_a_broken_taxonomy_file_names_its_problem():
    good = (
        '[types.x]\nkind = "error"\nname = "x"\ndefinition = "d"\nexample_before = "a"\n'
        'example_after = "b"\nlimits = { destroy = 1, write = 1, sentences = 1, length = 1 }\n'
    )
    assert parse_taxonomy(good + 'mechanical = true\ninjectors = ["dose_change"]\n')["x"]
    with pytest.raises(TaxonomyError, match="unknown injector 'nope'"):
        parse_taxonomy(good + 'mechanical = true\ninjectors = ["nope"]\n')
    with pytest.raises(TaxonomyError, match="is not a error"):
        parse_taxonomy(good + 'mechanical = true\ninjectors = ["generic_to_brand"]\n')
    with pytest.raises(TaxonomyError, match="mechanical must be true exactly"):
        parse_taxonomy(good + "mechanical = true\ninjectors = []\n")
    with pytest.raises(TaxonomyError, match="limits"):
        parse_taxonomy(good.replace("destroy = 1", "destroy = -1") + "mechanical = false\n")


def test_inject_help_lists_every_type_of_the_taxonomy():
    from clinjudge.cli.inject import ERROR_TYPES, REWRITE_TYPES
    from clinjudge.inject.taxonomy import error_types, rewrite_types

    assert ERROR_TYPES.split(", ") == list(error_types())
    assert REWRITE_TYPES.split(", ") == list(rewrite_types())
