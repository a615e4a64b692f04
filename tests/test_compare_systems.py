"""Several systems' notes in one compare run (issue 24): one note column per system or a system
column give the same items (``<encounter>/<system>``), a system's empty note is skipped for that
system only, the report holds each system's rates and the paired differences between systems,
and the viewer switches between systems in a real browser."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from browser_helpers import open_page
from typer.testing import CliRunner

from clinjudge.cli import app
from clinjudge.datasets import load_items
from clinjudge.datasets.systems import load_system_columns, systems_of

FIXTURES = Path(__file__).parent / "fixtures" / "soap"
RIGHT = (FIXTURES / "note.txt").read_text()
LEFT = RIGHT.replace("right knee", "left knee")  # a contradicted side in every encounter


def columns_file(tmp_path: Path) -> Path:
    path = tmp_path / "systems.csv"
    transcript = (FIXTURES / "transcript.txt").read_text()
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["encounter_id", "dialogue", "careful", "careless"])
        for n in range(6):
            writer.writerow([f"e{n}", transcript, RIGHT, LEFT if n else ""])
    return path


def test_both_shapes_give_the_same_items_and_an_empty_note_skips_one_system(tmp_path):
    wide = load_system_columns(columns_file(tmp_path), ["careful", "careless"])
    assert [i.id for i in wide.items][:2] == ["e0/careful", "e1/careful"]
    assert systems_of(wide.items) == ["careful", "careless"]
    assert len(wide.items) == 11  # e0 has no careless note
    assert [(s.id, s.reason) for s in wide.skipped] == [
        ("e0/careless", "careless: empty note (column 'careless')")
    ]
    long = tmp_path / "long.csv"
    with long.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["encounter_id", "system", "dialogue", "note"])
        for item in wide.items:
            meta = item.meta
            writer.writerow([meta["encounter"], meta["system"], item.transcript, item.note])
    rows = load_items(long, system_column="system")
    assert sorted(i.id for i in rows.items) == sorted(i.id for i in wide.items)
    assert {i.id: i.note for i in rows.items} == {i.id: i.note for i in wide.items}


def run(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def systems_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("systems")
    out = tmp / "run"
    result = run(
        "compare", columns_file(tmp), "--systems", "careful,careless", "--out", out,
        "--judges", "lexical,inference-aware", "--backend", "offline",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out, result


def test_the_report_holds_each_systems_rates_and_their_paired_difference(systems_run):
    out, result = systems_run
    report = json.loads((out / "report.json").read_text())
    systems = report["systems"]
    assert systems["systems"] == ["careful", "careless"]
    careful = systems["by_system"]["inference-aware"]["careful"]
    careless = systems["by_system"]["inference-aware"]["careless"]
    assert (careful["n_notes"], careless["n_notes"]) == (6, 5)
    assert careless["hallucination_rate"]["value"] > careful["hallucination_rate"]["value"]
    pair = next(p for p in systems["pairs"] if p["judge"] == "inference-aware")
    assert (pair["a"], pair["b"], pair["n_encounters"]) == ("careful", "careless", 5)
    assert pair["mean_difference"] < 0 and pair["ci95"][1] < 0  # careful flags fewer, apart
    assert "## Paired differences between systems" in (out / "report.md").read_text()
    assert "per system" in result.output and "careful vs careless" in result.output


def test_the_viewer_switches_between_systems(systems_run):
    out, _ = systems_run
    with open_page(out / "report.html") as tab:
        assert tab.locator("#f-system-label").is_visible()
        rates = tab.locator("#rates tbody").inner_text()
        assert "inference-aware · careless" in rates and "inference-aware · careful" in rates
        tab.select_option("#f-system", "careless")
        notes = [n.removeprefix("note-") for n in tab.eval_on_selector_all(
            "#notes section.note:not([hidden])", "els => els.map(e => e.id)")]  # fmt: skip
        assert notes and all(n.endswith("/careless") for n in notes)
        flagged = tab.locator("#flagged tbody tr td:first-child").all_inner_texts()
        assert flagged and all(n.endswith("/careless") for n in flagged)
