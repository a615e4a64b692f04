"""The offline injection pipeline (clinjudge.inject.pipeline / outputs, SPEC §5): the new
knowledge-based injectors on hand cases, one seeded attempt per (note, type) through the shape
check over real ACI-Bench notes, discards with reasons, acceptance statistics, and a resumable,
idempotent run whose pairs the meta-evaluation can read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aci_fixtures import read_encounter

from clinjudge.datasets.items import Dataset, Item
from clinjudge.errors import ConfigError
from clinjudge.inject.injectors import INJECTORS
from clinjudge.inject.outputs import InjectFiles, run_offline, run_provenance
from clinjudge.inject.pairs import read_pairs
from clinjudge.inject.pipeline import acceptance_stats, inject_offline
from clinjudge.inject.shape import ShapeLimits
from clinjudge.inject.taxonomy import TAXONOMY, mechanical_types
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.quantities import extract_quantities

FIXTURES = Path(__file__).parent / "fixtures" / "inject"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def _item(encounter_id: str) -> Item:
    folder = next(
        f
        for f in ("inject", "inject_values", "inject_dx", "inject_time")
        if (FIXTURES.parent / f / f"aci_{encounter_id}_note.txt").is_file()
    )
    note, dialogue = read_encounter(folder, encounter_id)
    return Item(id=encounter_id, transcript=dialogue, note=note, meta={"set": "fixture"})


@pytest.fixture(scope="module")
def data() -> Dataset:
    return Dataset(
        name="fixture", path=FIXTURES, items=[_item("D2N009"), _item("D2N018")], sha256="f" * 64
    )


# -- new injectors on hand cases -------------------------------------------------------------


def test_drug_swap_uses_an_unnamed_drug_of_the_same_class(kb):
    note = "PLAN\n\nContinue lisinopril 10 mg daily."
    transcript = "[patient] i take lisinopril ten milligrams , and enalapril made me cough ."
    found = INJECTORS["drug_swap"].candidates(note, transcript, kb=kb)
    swapped = {p.after for p in found}
    assert "ramipril" in swapped and "enalapril" not in swapped  # the transcript names it
    assert all(p.before == "lisinopril" and p.kind == "error" for p in found)
    assert all(kb.related(p.after, "ACE inhibitor") == "in_class" for p in found)
    unnamed = "[patient] i take a blood pressure pill ."
    assert INJECTORS["drug_swap"].candidates(note, unnamed, kb=kb) == []
    brands = "PLAN\n\nHe is taking the Imitrex. Lasix 20 mg daily."
    said = "[patient] i take imitrex and lasix twenty milligrams ."
    after = {p.before: p.after for p in INJECTORS["drug_swap"].candidates(brands, said, kb=kb)}
    assert after["Imitrex"].islower() and after["Lasix"][0].isupper()  # mid-sentence / start


def test_duration_change_moves_the_unit_of_a_stated_duration(kb):
    note = "HPI\n\nKnee pain for 3 days."
    transcript = "[patient] my knee has hurt for three days ."
    (p,) = INJECTORS["duration_change"].candidates(note, transcript, kb=kb)
    assert (p.before, p.after) == ("days", "weeks") and p.note.endswith("for 3 weeks.")
    (q,) = [q for q in extract_quantities(p.note) if q.kind == "duration"]
    assert (q.value, q.unit) == (3, "week")
    assert INJECTORS["duration_change"].candidates(note, "[patient] it hurts .", kb=kb) == []


def test_fabricated_history_adds_a_condition_neither_text_mentions(kb):
    note = "HISTORY OF PRESENT ILLNESS\n\nShe has had right knee pain since a fall last week."
    transcript = "[patient] i fell last week , my knee hurts . i also have diabetes and asthma ."
    found = INJECTORS["fabricated_history"].candidates(note, transcript, kb=kb)
    added = {p.after for p in found}
    assert " The patient has a history of hypothyroidism." in added
    assert not any("asthma" in a or "diabetes" in a for a in added)  # named, or related (is_a)
    assert all(p.original_span == (len(note), len(note)) for p in found)
    assert INJECTORS["fabricated_history"].candidates("PLAN\n\nIce.", transcript, kb=kb) == []


# -- one attempt per (note, type) ------------------------------------------------------------


#: Fixture notes a type applies to, where D2N009 and D2N018 give it no candidate.
APPLIES_TO = {
    "threshold_value": ("D2N035", "D2N044"),
    "overconfidence": ("D2N063", "D2N079"),
    "wrong_diagnosis": ("D2N009", "D2N001"),
    "evidence_fabrication": ("D2N009", "D2N079"),
    "omission": ("D2N018",),
    **{
        t: ("T001",)  # hand-written (fixtures/inject_time/PROVENANCE.md)
        for t in ("time_shift", "time_rewording", "superseded", "correction_rewording")
        + ("declined_plan", "plan_rewording")
    },
}


@pytest.mark.parametrize("type_id", mechanical_types())
def test_offline_attempts_are_seeded_single_edits_within_limits(kb, type_id):
    for encounter_id in APPLIES_TO.get(type_id, ("D2N009", "D2N018")):
        item = _item(encounter_id)
        outcome = inject_offline(item, TAXONOMY[type_id], seed=3, kb=kb)
        assert outcome == inject_offline(item, TAXONOMY[type_id], seed=3, kb=kb)
        assert outcome.pair_id == f"{encounter_id}:{type_id}"
        assert outcome.status == "accepted", outcome.reason
        pair = outcome.pair
        assert pair.type == type_id and pair.kind == TAXONOMY[type_id].kind
        assert pair.meta["injector"] in TAXONOMY[type_id].injectors
        assert pair.source == item.transcript and pair.original == item.note
        a, b = pair.original_span
        c, d = pair.edited_span
        assert pair.edited == pair.original[:a] + pair.after + pair.original[b:]
        assert pair.edited[c:d] == pair.after and pair.shape["ok"]


def test_seeds_change_the_pick(kb):
    item = _item("D2N009")
    picks = {
        inject_offline(item, TAXONOMY["wrong_drug"], seed=s, kb=kb).pair.after for s in range(8)
    }
    assert len(picks) > 2


def test_a_perturbation_beyond_the_limits_is_discarded_with_its_reason(kb):
    item = _item("D2N009")
    tight = TAXONOMY["wrong_drug"].model_copy(
        update={"limits": ShapeLimits(destroy=40, write=5, sentences=1, length=5)}
    )
    outcome = inject_offline(item, tight, seed=0, kb=kb)
    assert outcome.status == "shape_rejected" and outcome.pair is None
    assert "limit 5" in outcome.reason and outcome.failures[0]["stage"] == "shape"


def test_a_type_that_does_not_apply_is_recorded_as_not_applicable(kb):
    item = Item(id="x", transcript="[patient] hello .", note="PLAN\n\nRest.")
    outcome = inject_offline(item, TAXONOMY["dosage"], kb=kb)
    assert outcome.status == "not_applicable" and "dose_change" in outcome.reason
    with pytest.raises(ValueError, match="no offline injector"):
        inject_offline(item, TAXONOMY["causal_organism"], kb=kb)


def test_acceptance_statistics_exclude_attempts_that_were_never_tried(kb):
    items = [_item("D2N009"), Item(id="x", transcript="[patient] hi .", note="PLAN\n\nRest.")]
    outcomes = [inject_offline(i, TAXONOMY["dosage"], kb=kb) for i in items]
    stats = acceptance_stats(outcomes, ["dosage"])
    s = stats["per_type"]["dosage"]
    assert (s["attempted"], s["accepted"], s["not_applicable"], s["n_tried"]) == (2, 1, 1, 1)
    assert s["acceptance_rate"] == 1.0 and s["excluded"]["not_applicable"] == 1
    assert s["ci95"][0] < 1.0 and stats["total"]["attempted"] == 2


# -- a run -----------------------------------------------------------------------------------


def test_an_offline_run_writes_pairs_and_stats_and_resumes(tmp_path, data, kb):
    files = InjectFiles(tmp_path / "pairs.jsonl")
    types = ["dosage", "negation_flip", "trade_generic"]
    provenance = run_provenance("offline", data, seed=0, kb=kb)
    stats = run_offline(data, types, files, provenance, seed=0, kb=kb)
    pairs = read_pairs(files.pairs)
    assert [p.pair_id for p in pairs] == [f"{i}:{t}" for i in ("D2N009", "D2N018") for t in types]
    assert stats["total"]["accepted"] == 6 and stats["complete"]
    on_disk = json.loads(files.stats.read_text())
    assert on_disk["provenance"]["dataset_sha256"] == "f" * 64
    assert on_disk["per_type"]["dosage"]["accepted"] == 2
    first = files.pairs.read_text()
    log_lines = files.outcomes.read_text().count("\n")
    calls = []
    run_offline(data, types, files, provenance, seed=0, kb=kb, on_done=lambda: calls.append(1))
    assert files.pairs.read_text() == first and len(calls) == 6
    assert files.outcomes.read_text().count("\n") == log_lines  # nothing attempted twice
    with pytest.raises(ConfigError, match="another seed"):
        run_offline(data, types, files, {**provenance, "seed": 1}, seed=1, kb=kb)
