"""``clinjudge arena`` end to end (issue 25) on a tiny multi-system dataset built from the
bundled aci-demo notes (``tests/fixtures/arena/build.py``): the reference note, the same note
with contradicted major details (``careless``) and its first lines only (``terse``). The report
records its settings, the leaderboard, plot and pairs are written, a re-run (the other
dataset shape, the same texts) judges nothing again, and bad input exits 2 in one line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from browser_helpers import open_page
from cli_helpers import assert_one_line_error, run

from clinjudge import __version__
from clinjudge.report.html_report import data_of_page

WIDE = Path(__file__).parent / "fixtures" / "arena" / "systems.csv"
SYSTEMS = "reference,careless,terse"
FAST = ("--replicates", 50, "--orders", 10, "--backend", "offline")


def long_shape(tmp: Path) -> Path:
    """The same notes, one row per encounter and system (a ``system`` column)."""
    path = tmp / "long.csv"
    with WIDE.open(newline="", encoding="utf-8") as src, path.open("w", newline="") as dst:
        writer = csv.writer(dst)
        writer.writerow(["encounter_id", "system", "dialogue", "note"])
        for row in csv.DictReader(src):
            for system in SYSTEMS.split(","):
                writer.writerow([row["encounter_id"], system, row["dialogue"], row[system]])
    return path


@pytest.fixture(scope="module")
def arena_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("arena") / "run"
    result = run("arena", WIDE, "--systems", SYSTEMS, "--judge", "pairwise", "--out", out, *FAST)
    assert result.exit_code == 0, result.output
    return out, result


def test_the_report_records_its_settings_and_the_reference_note_comes_first(arena_run):
    out, result = arena_run
    report = json.loads((out / "report.json").read_text())
    assert report["provenance"]["package_version"] == __version__
    assert report["backend"] == "offline" and report["judge"] == "pairwise"
    assert report["provenance"]["dataset"]["name"] == "systems"
    s = report["settings"]
    assert (s["initial"], s["k"], s["replicates"], s["n_orders"], s["seed"]) == (
        1000.0,
        4.0,
        50,
        10,
        0,
    )
    assert (report["n_encounters"], report["n_pairs"], report["n_failed"]) == (2, 6, 0)
    assert report["leaderboard"][0]["system"] == "reference"
    assert report["leaderboard"][0]["bt_rank"] == 1
    matrix = report["criteria"]["overall"]["win_matrix"]
    assert matrix["reference"]["careless"] == {"win": 2, "tie": 0, "loss": 0}
    assert report["criteria"]["overall"]["position_bias"]["rate"] == 0.0
    assert "reference" in result.output and "position bias" in result.output
    assert "bootstrap over encounters" in result.output  # every number is explained
    # two encounters: no bootstrap interval (it would be zero-width), and the reports say why
    board = report["leaderboard"]
    assert all(e["elo_ci95"] is None and e["ci_note"] == "n too small" for e in board)
    assert "n too small" in (out / "leaderboard.md").read_text()
    assert "n too small" in result.output


def test_the_careless_note_loses_safety_to_the_reference_in_every_encounter(arena_run):
    out, _ = arena_run
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert len(pairs) == 6
    careless = [p for p in pairs if p["id"].endswith("/reference~careless")]
    assert [p["outcomes"]["safety"] for p in careless] == ["a", "a"]
    for p in pairs:
        assert p["orders"]["ab"]["safety"] != p["orders"]["ba"]["safety"] or (
            p["orders"]["ab"]["safety"] == "tie"
        )


def test_the_leaderboard_and_the_plot_are_written(arena_run):
    out, _ = arena_run
    board = (out / "leaderboard.md").read_text()
    assert "initial rating 1000, K = 4" in board and "| 1 | reference |" in board
    assert "## Win / tie / loss" in board and "## Position bias" in board
    assert (out / "ratings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "report.html").exists()


def test_the_page_carries_every_pair_with_both_notes_and_its_transcript(arena_run):
    out, _ = arena_run
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html  # nothing fetched
    data = data_of_page(html)
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert [p["id"] for p in data["pairs"]] == [p["id"] for p in pairs]
    with WIDE.open(newline="", encoding="utf-8") as handle:
        rows = {r["encounter_id"]: r for r in csv.DictReader(handle)}
    for p in data["pairs"]:
        encounter = p["encounter"]
        assert data["notes"][p["a"]] == rows[encounter][p["system_a"]]
        assert data["notes"][p["b"]] == rows[encounter][p["system_b"]]
        assert data["transcripts"][data["transcript_of"][encounter]] == rows[encounter]["dialogue"]
    assert len(data["transcripts"]) == len(rows)  # each transcript once, not once per pair


def test_the_pair_view_names_the_system_each_order_preferred(arena_run):
    out, _ = arena_run
    with open_page(out / "report.html") as tab:
        assert tab.locator("#leaderboard tbody tr").first.inner_text().split("\t")[1] == "reference"
        tab.select_option("#f-system", "careless")
        tab.fill("#f-text", "reference")
        assert tab.inner_text("#f-count") == "2 of 6 pairs"
        tab.click("#pairs tbody tr >> nth=0")
        assert tab.inner_text("#p-title").endswith("A = reference, B = careless")
        safety = tab.locator("#p-verdicts tr", has_text="safety").inner_text().split("\t")
        # "first" with the reference shown first and "second" with the careless note first:
        # both orders name the reference, and so does the outcome
        assert safety[1:4] == ["reference", "reference", "reference"]
        assert "major errors per claim: reference 0" in safety[5]
        changed = tab.locator("#p-note-b mark.changed").all_inner_texts()
        assert changed and all(line.strip() not in data_note(out, "reference") for line in changed)
        tab.keyboard.press("n")  # the second careless pair
        assert tab.inner_text("#p-title").startswith("D2N") and "careless" in tab.inner_text(
            "#p-title"
        )
        tab.keyboard.press("Escape")
        assert tab.locator("#pair").is_hidden()


def data_note(out: Path, system: str) -> str:
    data = data_of_page((out / "report.html").read_text(encoding="utf-8"))
    return "\n".join(text for key, text in data["notes"].items() if key.endswith("/" + system))


def test_report_renders_an_arena_run_again_without_judging(arena_run, tmp_path):
    out, _ = arena_run
    copy = tmp_path / "copy"
    import shutil

    shutil.copytree(out, copy)
    before = (copy / "leaderboard.md").read_text()
    for name in ("leaderboard.md", "report.html", "ratings.png"):
        (copy / name).unlink()
    runs = {p.name: p.read_text() for p in (copy / "runs").glob("*.jsonl")}
    result = run("report", copy)
    assert result.exit_code == 0, result.output
    assert (copy / "leaderboard.md").read_text() == before
    assert data_of_page((copy / "report.html").read_text())["pairs"]
    assert (copy / "ratings.png").exists()
    assert {p.name: p.read_text() for p in (copy / "runs").glob("*.jsonl")} == runs
    (copy / "report.json").unlink()
    assert_one_line_error(run("report", copy), "without report.json yet")


def test_a_rerun_with_the_system_column_shape_judges_nothing_again(arena_run, tmp_path):
    out, _ = arena_run
    before = {p.name: p.read_text() for p in (out / "runs").glob("*.jsonl")}
    first = json.loads((out / "report.json").read_text())
    result = run(
        "arena", long_shape(tmp_path), "--systems", SYSTEMS, "--system-column", "system",
        "--out", out, *FAST,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    after = {p.name: p.read_text() for p in (out / "runs").glob("*.jsonl")}
    assert after == before  # every text and every pair resumed from disk
    report = json.loads((out / "report.json").read_text())
    assert report["timing"]["pairs_judged_now"] == 0
    assert report["leaderboard"] == first["leaderboard"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--systems", "reference"), "at least 2 systems"),
        (("--systems", "reference,reference"), "names a system twice"),
        (("--systems", "reference,nobody"), "nobody"),
        (("--systems", "reference,terse", "--judge", "elo"), "--judge must be one of"),
        (("--systems", "reference,terse", "--backend", "cloud"), "--backend must be one of"),
        (
            ("--systems", "reference,terse", "--option", "pairwise.criteria=beauty"),
            "unknown pairwise criterion 'beauty'",
        ),
        (("--systems", "reference,terse", "--option", "pairwise.k=3"), "unknown pairwise option"),
    ],
)
def test_bad_input_exits_2_in_one_line(tmp_path, args, needle):
    assert_one_line_error(run("arena", WIDE, *args, "--out", tmp_path / "o"), needle)


def test_a_missing_file_or_an_unknown_system_value_exits_2(tmp_path):
    missing = run("arena", tmp_path / "none.csv", "--systems", "a,b", "--out", tmp_path / "o")
    assert_one_line_error(missing, "none.csv")
    unknown = run(
        "arena", long_shape(tmp_path), "--systems", "reference,gpt9", "--system-column",
        "system", "--out", tmp_path / "o",
    )  # fmt: skip
    assert_one_line_error(unknown, "'gpt9' is not in column 'system'")


def test_limit_counts_encounters_in_either_shape(tmp_path):
    from clinjudge.cli.arena import load_arena_items

    load = {"limit": 1, "transcript_column": None, "id_column": None}
    wide = {"dataset": str(WIDE), "systems": ["reference", "terse"], "system_column": None}
    long = {**wide, "dataset": str(long_shape(tmp_path)), "system_column": "system"}
    for command in (wide, long):
        items = load_arena_items({**command, "load": load}).items
        assert sorted(i.id for i in items) == ["D2N005/reference", "D2N005/terse"]
