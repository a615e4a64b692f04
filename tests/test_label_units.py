"""Units of a note (issue 26, item 1): the cut of the shared claim-labels ``units.jsonl``
reproduced on the bundled fixture (``tests/fixtures/agreement/units.jsonl``, cut from the
aci-demo notes its ``run/`` judged), and each rule of :mod:`clinjudge.agreement.units` on a line
written to need it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinjudge.agreement.units import note_units, unit_kind, unit_rows
from clinjudge.datasets import load_items

FIXTURE = Path(__file__).parent / "fixtures" / "agreement"


@pytest.fixture(scope="module")
def fixture_notes() -> dict[str, str]:
    """The notes of the fixture run, loaded as its run.json records (aci-demo, limit 2)."""
    command = json.loads((FIXTURE / "run" / "run.json").read_text())["command"]
    data = load_items(command["dataset"], limit=command["load"]["limit"])
    return {item.id: item.note for item in data.items}


def fixture_units(encounter: str) -> list[dict]:
    rows = [json.loads(line) for line in (FIXTURE / "units.jsonl").read_text().splitlines()]
    return [r for r in rows if r["encounter"] == encounter]


def test_the_fixture_note_cut_again_equals_its_units_file(fixture_notes):
    expected = fixture_units("D2N005")  # every unit of D2N005: headers, bullets of one line
    assert unit_rows("D2N005", "reference", fixture_notes["D2N005"]) == expected


def test_the_second_fixture_note_starts_with_its_six_units(fixture_notes):
    expected = fixture_units("D2N007")  # the file holds the first six units of D2N007
    got = unit_rows("D2N007", "reference", fixture_notes["D2N007"])
    assert len(expected) == 6 and got[:6] == expected
    assert len(got) > 6


def test_spans_index_the_note_and_numbers_count_from_zero(fixture_notes):
    for note in fixture_notes.values():
        units = note_units(note)
        assert [u.unit for u in units] == list(range(len(units)))
        assert all(note[u.start : u.end] == u.text for u in units)


def texts(note: str) -> list[str]:
    return [u.text for u in note_units(note)]


@pytest.mark.parametrize(
    ("line", "units"),
    [
        ("Lungs clear. I suspect asthma.", ["Lungs clear.", "I suspect asthma."]),
        ("ECG normal. EKG is normal.", ["ECG normal.", "EKG is normal."]),
        (
            "Temp is 36.8 C. Blood pressure is 128/78.",
            ["Temp is 36.8 C.", "Blood pressure is 128/78."],
        ),
        ("Laxity noted. 1+ posterior drawer.", ["Laxity noted.", "1+ posterior drawer."]),
        ("Is it sore? Yes. Very!", ["Is it sore?", "Yes.", "Very!"]),
        ("1. Abnormal labs.", ["1.", "Abnormal labs."]),
        ("2. COPD.", ["2. COPD."]),  # a list number keeps a lone acronym
        ("Seen by Dr. Sanchez. Ms. Hill agrees.", ["Seen by Dr. Sanchez.", "Ms. Hill agrees."]),
        ("Try a drug, e.g. Tylenol or Advil.", ["Try a drug, e.g. Tylenol or Advil."]),
        ("every morning. the weather was nice", ["every morning. the weather was nice"]),
        ("as needed. - Depression, stable.", ["as needed. - Depression, stable."]),
        ("by the nurse.  [Note: Dragon.]", ["by the nurse.  [Note: Dragon.]"]),
        ("“cuddly”.” The patient denies it.", ["“cuddly”.” The patient denies it."]),
        ("dose 2.5 mg. BP 120/80.", ["dose 2.5 mg.", "BP 120/80."]),
    ],
)
def test_sentences_are_cut_within_a_line_by_the_rules(line, units):
    assert texts(line) == units


def test_lines_always_end_a_unit_and_blank_lines_give_none():
    note = "CC:\n\nRight finger pain\n   \n• Neck: Supple.\nNo bruits"
    assert texts(note) == ["CC:", "Right finger pain", "• Neck: Supple.", "No bruits"]


def test_units_are_trimmed_of_every_kind_of_space():
    note = "\u00a0 Doing well.\u202f \r\nNext line."
    units = note_units(note)
    assert [u.text for u in units] == ["Doing well.", "Next line."]
    assert units[0].start == 2 and note[units[0].start : units[0].end] == "Doing well."


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("HISTORY OF PRESENT ILLNESS", "header"),
        ("PLAN:", "header"),
        ("1.", "header"),
        ("BP: 118/77.", "header"),  # no lower-case letter: a header, as the shared file has it
        ("##", "header"),
        ("#", "text"),  # one character: text, as the shared file has it
        ("Right middle finger pain.", "text"),
        ("• GERD", "header"),
        ("HEENT: normal", "text"),
    ],
)
def test_a_unit_without_lower_case_letters_is_a_header(text, kind):
    assert unit_kind(text) == kind


def test_rows_carry_the_shared_fields_in_order():
    row = unit_rows("E1", "gpt4", "PLAN\nRest.")[1]
    assert row == {
        "encounter": "E1",
        "system": "gpt4",
        "unit": 1,
        "kind": "text",
        "start": 5,
        "end": 10,
        "text": "Rest.",
    }
