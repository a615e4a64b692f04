"""Offline ``value_change`` injector (clinjudge.inject.values, taxonomy ``threshold_value``):
hand cases (applies / refuses), the threshold table, and real ACI-Bench notes under the
pipeline's shape check."""

from __future__ import annotations

import random

import pytest
from aci_fixtures import read_encounter

from clinjudge.inject.shape import check_shape
from clinjudge.inject.taxonomy import load_taxonomy
from clinjudge.inject.types import Perturbation
from clinjudge.inject.values import (
    BP,
    BP_DIASTOLIC_RANGE,
    BP_LOWER_DIASTOLIC,
    BP_NORMAL_DIASTOLIC,
    MEASURES,
    value_change,
)
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.numbers import spoken_numbers


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture(scope="module")
def limits():
    return load_taxonomy()["threshold_value"].limits


def _encounter(encounter_id: str) -> tuple[str, str]:
    return read_encounter("inject_values", encounter_id)


def _changes(note: str, transcript: str, kb: KnowledgeBase) -> set[tuple[str, str]]:
    return {(p.before, p.after) for p in value_change.candidates(note, transcript, kb=kb)}


def _assert_single_edit(p: Perturbation) -> None:
    a, b = p.original_span
    assert p.note[: p.start] == p.original_note[:a]
    assert p.note[p.end :] == p.original_note[b:]
    assert p.note[p.start : p.end] == p.after != p.before


# -- applies ---------------------------------------------------------------------------------


def test_a_normal_vital_the_transcript_states_becomes_abnormal_both_ways(kb):
    note = "VITALS\n\nHeart rate: 72 bpm."
    transcript = "[doctor] your heart rate is seventy two , that's good ."
    found = value_change.candidates(note, transcript, kb=kb)
    assert {(p.before, p.after) for p in found} == {("72", "124"), ("72", "42")}
    for p in found:
        _assert_single_edit(p)
        assert p.kind == "error" and "heart rate" in p.rationale and "seventy two" in p.rationale


def test_an_abnormal_value_is_normalised_and_the_taxonomy_example_is_reproduced(kb):
    note = "RESULTS\n\nHemoglobin A1c: 8.2"
    transcript = "[doctor] your hemoglobin a1c came back at eight point two ."
    assert _changes(note, transcript, kb) == {("8.2", "5.4")}
    example = "RESULTS\n\nHemoglobin A1c is 6.1."
    assert _changes(example, "[doctor] your a1c is six point one .", kb) == {("6.1", "8.1")}


def test_blood_pressure_raises_the_systolic_or_changes_both_numbers(kb):
    note = "VITALS\n\nBlood pressure: 128/72 mmHg"
    transcript = "[doctor] blood pressure is one twenty eight over seventy two today ."
    assert _changes(note, transcript, kb) == {("128", "168"), ("128/72", "84/50")}
    high = "VITALS\n\nBP: 182/96."
    assert _changes(high, "[doctor] your blood pressure was 182 over 96 .", kb) == {
        ("182/96", "118/76")
    }


def test_decimals_and_units_are_kept_and_asr_decimals_are_read(kb):
    note = "VITALS\n\nTemperature: 98.7 degrees F"
    transcript = "[doctor] your temperature is ninety eight . seven and that's fine ."
    found = value_change.candidates(note, transcript, kb=kb)
    assert {p.after for p in found} == {"102.4", "94.1"}
    assert all(p.note.endswith(f"{p.after} degrees F") for p in found)
    whole = "LABS\n\nPotassium 4 mmol/L."
    assert _changes(whole, "[doctor] your potassium is four .", kb) == {("4", "6"), ("4", "3")}


def test_a_new_value_the_transcript_states_is_replaced_by_the_next_option(kb):
    note = "VITALS\n\nHeart rate: 72 bpm."
    transcript = "[doctor] heart rate is seventy two . last year it was 124 when you were sick ."
    assert _changes(note, transcript, kb) == {("72", "128"), ("72", "42")}


# -- refuses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("note", "transcript"),
    [
        ("VITALS\n\nHeart rate: 72 bpm.", "[doctor] your vitals look fine ."),  # not stated
        ("VITALS\n\nHeart rate: 72 bpm.", "[doctor] your temperature is seventy two ."),
        ("VITALS\n\nOxygen saturation: 92%", "[doctor] oxygen is ninety two percent ."),  # grey
        ("VITALS\n\nHeart rate: 58 bpm", "[doctor] heart rate was fifty eight ."),  # grey
        ("LABS\n\nHemoglobin A1c is elevated at 8.2.", "[doctor] a1c is eight point two ."),
        ("PLAN\n\nKeep hemoglobin A1c below 7.", "[doctor] keep your a1c below seven ."),
        ("HPI\n\nBlood sugars between 80 to 90.", "[patient] my sugar is eighty to ninety ."),
        ("HPI\n\nBlood sugars in the 300's.", "[patient] my sugars are around 300 ."),
        ("PLAN\n\nRepeat hemoglobin A1c in 3 months.", "[doctor] a1c in three months ."),
    ],
)
def test_refuses_unstated_borderline_interpreted_or_non_measurement_values(kb, note, transcript):
    assert value_change.candidates(note, transcript, kb=kb) == []


def test_spoken_numbers_join_asr_decimals_only_after_a_spaced_full_stop():
    text = "temperature ninety eight . seven and a1c is seven . five , then 98 . Seven days"
    values = [v for _, _, v in spoken_numbers(text)]
    assert values == [98.7, 1.0, 7.5, 98.0, 7.0]  # "a1c" holds a digit; "Seven" opens a sentence
    assert spoken_numbers("it was 8.2 .")[0][2] == 8.2


# -- the table -------------------------------------------------------------------------------


@pytest.mark.parametrize("m", [*MEASURES, BP], ids=lambda m: f"{m.key}-{m.unit}")
def test_every_replacement_lies_on_the_intended_side_of_its_boundary(m):
    assert m.low < m.high
    assert m.alert_high is None or m.alert_high > m.high
    assert m.alert_low is None or m.alert_low < m.low
    assert all(v >= m.alert_high for v in m.raise_to)
    assert all(v <= m.alert_low for v in m.lower_to)
    assert all(m.low <= v <= m.high for v in m.normal_to)
    assert all(m.plausible[0] <= v <= m.plausible[1] for v in (*m.raise_to, *m.lower_to))
    assert m.normal_to, "an abnormal value must have a normal replacement"


def test_blood_pressure_diastolic_replacements_match_their_direction():
    lo, hi = BP_DIASTOLIC_RANGE
    assert all(d < lo for d in BP_LOWER_DIASTOLIC)
    assert all(lo <= d <= hi for d in BP_NORMAL_DIASTOLIC)


# -- real notes ------------------------------------------------------------------------------


def test_real_vitals_note_every_candidate_is_stated_new_and_within_the_shape_limits(kb, limits):
    note, transcript = _encounter("D2N035")
    found = value_change.candidates(note, transcript, kb=kb, source_id="D2N035")
    assert {p.before for p in found} >= {"128", "128/72", "98.7", "72", "96"}
    heard = {v for _, _, v in spoken_numbers(transcript)}
    for p in found:
        _assert_single_edit(p)
        assert p.source_id == "D2N035" and p.type == "value_change"
        assert not {float(x) for x in p.after.split("/")} & heard
        check = check_shape(p.original_note, p.note, limits)
        assert check.ok, check.reason()


def test_real_lab_note_normalises_a_stated_a1c_and_leaves_a_borderline_saturation(kb, limits):
    note, transcript = _encounter("D2N063")
    found = value_change.candidates(note, transcript, kb=kb)
    assert [(p.before, p.after) for p in found] == [("7.5", "5.4")]
    assert "seven . five" in found[0].rationale
    assert check_shape(found[0].original_note, found[0].note, limits).ok


def test_the_seed_makes_the_choice_deterministic_and_spreads_over_candidates(kb):
    note, transcript = _encounter("D2N035")
    found = value_change.candidates(note, transcript, kb=kb)
    picks = [value_change(note, transcript, seed=s, kb=kb) for s in range(10)]
    assert picks == [value_change(note, transcript, seed=s, kb=kb) for s in range(10)]
    assert all(p in found for p in picks) and len({p.after for p in picks}) > 2
    assert value_change(note, transcript, seed=random.Random(3), kb=kb) == picks[3]
