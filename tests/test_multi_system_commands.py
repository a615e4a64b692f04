"""Every command that reads a run treats a run of several systems as the normal case (issue 37,
item 1): ``safety-case`` gives each system its row and joins metadata on the encounter part of
``<encounter>/<system>`` ids (from a table that holds no transcript), ``--format tsv/json``
prints one row per judge × system × metric, and ``gate`` names per-system metrics (``*``) and
lists the headline paths its ``--help`` uses."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

FIXTURES = Path(__file__).parent / "fixtures" / "soap"
RIGHT = (FIXTURES / "note.txt").read_text()
LEFT = RIGHT.replace("right knee", "left knee")


@pytest.fixture(scope="module")
def systems_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("multi")
    data = tmp / "systems.csv"
    transcript = (FIXTURES / "transcript.txt").read_text()
    with data.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["encounter_id", "dialogue", "careful", "careless"])
        for n in range(4):
            writer.writerow([f"e{n}", transcript, RIGHT, LEFT])
    metadata = tmp / "visits_metadata.csv"
    with metadata.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["visit_code", "encounter_id", "patient_age", "patient_gender"])
        for n in range(4):
            writer.writerow([f"V{n}", f"e{n}", 30 + 20 * n, "female" if n % 2 else "male"])
    out = tmp / "run"
    result = run(
        "compare", data, "--systems", "careful,careless", "--out", out, "--judges", "lexical",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    gates = tmp / "gates.toml"
    gates.write_text("[gates.major_hallucination_rate]\nmax = 0.5\n")
    return out, metadata, gates, tmp


def test_safety_case_gives_each_system_its_row_and_joins_metadata_by_encounter(systems_run):
    out, metadata, gates, tmp = systems_run
    case_dir = tmp / "case"
    result = run(
        "safety-case", out, "--gates", gates, "--out", case_dir, "--judge", "lexical",
        "--metadata", metadata, "--subgroup-column", "patient_gender", "--min-n", "1",
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    case = json.loads((case_dir / "safety-case.json").read_text())
    assert [s["system"] for s in case["systems"]] == ["careful", "careless"]
    assert [s["n_items"] for s in case["systems"]] == [4, 4]
    rates = [s["endpoints"]["major_hallucination_rate"]["value"] for s in case["systems"]]
    assert rates[1] > rates[0]  # the contradicted side counts for careless only
    assert case["metadata"] == {
        "column": "patient_gender",
        "key_column": "encounter_id",
        "matched": 8,
        "items": 8,
    }
    for system in case["systems"]:
        assert set(system["subgroups"]) == {"female", "male"}
        assert sum(g["n_items"] for g in system["subgroups"].values()) == 4
    assert "joined on 'encounter_id': 8 of 8 notes matched" in result.output
    ages = run(
        "safety-case", out, "--gates", gates, "--out", tmp / "ages", "--judge", "lexical",
        "--metadata", metadata, "--subgroup-column", "patient_age", "--min-n", "1",
    )  # fmt: skip
    age_case = json.loads((tmp / "ages" / "safety-case.json").read_text())
    assert ages.exit_code in (0, 1) and set(age_case["systems"][0]["subgroups"]) == {
        "18-39",
        "40-64",
        "65+",
    }
    nowhere = tmp / "other.csv"
    nowhere.write_text("code,patient_gender\nX1,female\n")
    refused = run(
        "safety-case", out, "--gates", gates, "--out", tmp / "c2", "--judge", "lexical",
        "--metadata", nowhere, "--subgroup-column", "patient_gender",
    )  # fmt: skip
    assert_one_line_error(refused, "no metadata column holds the run's item ids or encounters")


def test_tsv_and_json_hold_one_row_per_judge_system_and_metric(systems_run):
    out, *_ = systems_run
    tsv = run("report", out, "--format", "tsv")
    assert tsv.exit_code == 0, tsv.output
    lines = [line.split("\t") for line in tsv.stdout.strip().splitlines()]
    header = ["judge", "system", "metric", "value", "ci95_low", "ci95_high", "n", "n_notes"]
    assert lines[0] == header
    keyed = {(r[1], r[2]): r for r in lines[1:]}
    assert {s for s, _ in keyed} == {"all", "careful", "careless"}
    rate = {s: float(keyed[(s, "hallucination_rate")][3]) for s in ("careful", "careless")}
    assert rate["careless"] > rate["careful"]
    assert keyed[("careful", "hallucination_rate")][7] == "4"
    # each judge's and each system's cost follows its metrics (issue 38): offline, no call
    assert keyed[("careful", "cost.calls")][3] == "0" and keyed[("all", "cost.calls")][3] == "0"
    assert float(keyed[("careless", "cost.seconds")][3]) > 0
    assert keyed[("careful", "cost.seconds")][4:6] == ["", ""]  # a count has no interval
    rows = json.loads(run("report", out, "--format", "json").stdout)
    assert [list(r) for r in rows[:1]] == [header]
    assert [(r["system"], r["metric"], r["value"]) for r in rows] == [
        (r[1], r[2], float(r[3])) for r in lines[1:]
    ]


def test_gate_names_each_system_and_lists_the_headline_paths(systems_run):
    out, _, _, tmp = systems_run
    listed = run("gate", out / "report.json", "--list").stdout.splitlines()
    assert "judges.lexical.headline.hallucination_rate" in listed
    assert "systems.by_system.lexical.careless.hallucination_rate" in listed
    assert "systems.by_system.lexical.*.hallucination_rate" in listed  # every system at once
    gates = tmp / "per-system.toml"
    gates.write_text('[gates]\n"systems.by_system.lexical.*.hallucination_rate" = 1.0\n')
    checked = run("gate", out / "report.json", "--gates", gates)
    assert checked.exit_code == 0, checked.output
    assert "lexical.careful.hallucination_rate" in checked.output
    assert "lexical.careless.hallucination_rate" in checked.output
    assert "2 of 2 gates pass" in checked.output
    bad = tmp / "bad.toml"
    bad.write_text('[gates]\n"systems.by_system.nobody.*.rate" = 1.0\n')
    assert_one_line_error(run("gate", out / "report.json", "--gates", bad), "matches nothing")


def test_limit_counts_encounters_in_both_layouts(tmp_path):
    from clinjudge.datasets import load_items
    from clinjudge.datasets.systems import load_system_columns

    transcript = (FIXTURES / "transcript.txt").read_text()
    wide, long = tmp_path / "wide.csv", tmp_path / "long.csv"
    with wide.open("w", newline="") as w, long.open("w", newline="") as g:
        a, b = csv.writer(w), csv.writer(g)
        a.writerow(["encounter_id", "dialogue", "careful", "careless"])
        b.writerow(["encounter_id", "system", "dialogue", "note"])
        for n in range(5):
            a.writerow([f"e{n}", transcript, RIGHT, LEFT])
        for system, note in (("careful", RIGHT), ("careless", LEFT)):  # one system after another
            for n in range(5):
                b.writerow([f"e{n}", system, transcript, note])
    by_columns = load_system_columns(wide, ["careful", "careless"], limit=2).items
    by_rows = load_items(long, system_column="system", limit=2).items
    assert sorted(i.id for i in by_rows) == sorted(i.id for i in by_columns)
    assert sorted(i.id for i in by_rows) == [
        "e0/careful",
        "e0/careless",
        "e1/careful",
        "e1/careless",
    ]


def test_one_vocabulary_and_a_version(tmp_path):
    from clinjudge import __version__

    shown = run("--version")
    assert shown.exit_code == 0 and shown.stdout.strip() == f"clinjudge {__version__}"
    for command in ("compare", "meta-eval", "arena", "safety-case"):
        text = run(command, "--help").stdout
        assert "--judges" in text and "--judge" in text, command
        assert "<bool>" not in text and "<str>" not in text, command


def test_a_run_reports_every_judge_it_holds_and_a_flat_claims_csv(systems_run, tmp_path):
    import shutil

    source, *_ = systems_run
    out = tmp_path / "run"
    shutil.copytree(source, out)
    data = next(source.parent.glob("systems.csv"))
    grown = run(
        "compare", data, "--systems", "careful,careless", "--out", out, "--judges", "omission"
    )
    assert grown.exit_code == 0, grown.output
    report = json.loads((out / "report.json").read_text())
    assert list(report["judges"]) == ["lexical", "omission"]
    assert set(report["systems"]["by_system"]) == {"lexical", "omission"}
    again = run(
        "compare", data, "--systems", "careful,careless", "--out", out, "--judges", "lexical"
    )
    assert again.exit_code == 0, again.output
    assert list(json.loads((out / "report.json").read_text())["judges"]) == ["lexical", "omission"]
    printed = run("report", out, "--judges", "omission", "--format", "tsv").stdout
    assert "omission" in printed and "lexical" not in printed
    assert "lexical" in json.loads((out / "report.json").read_text())["judges"]
    with (out / "claims.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == [
        "note", "system", "judge", "claim_id", "section", "claim", "tier", "supported",
        "severity", "harm_category", "rationale", "evidence_turns",
    ]  # fmt: skip
    assert {r["system"] for r in rows} == {"careful", "careless"}
    assert {r["judge"] for r in rows} == {"lexical"}
    assert all(r["note"].endswith("/" + r["system"]) for r in rows)
    cited = [r for r in rows if r["evidence_turns"]]
    assert cited and all(int(t) >= 1 for r in cited for t in r["evidence_turns"].split(";"))
    side = [r for r in rows if "left knee" in r["claim"].lower()]
    assert side and all(r["tier"] in ("4", "5") for r in side)


def test_a_datasets_format_error_comes_before_the_judges_load(tmp_path, monkeypatch):
    from clinjudge.executors.spec import JudgeSpec

    def never(*args, **kwargs):
        raise AssertionError("the judges were built before the dataset was checked")

    monkeypatch.setattr(JudgeSpec, "build", never)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    refused = run("compare", bad, "--out", tmp_path / "o", "--judges", "lexical")
    assert_one_line_error(refused, "no usable transcript column")
    answers = tmp_path / "answers.csv"  # the fact-checker reads no transcript: none is asked for
    answers.write_text("id,answer\n1,Metformin treats type 2 diabetes.\n")
    passed = run("compare", answers, "--out", tmp_path / "o2", "--judges", "factcheck")
    assert isinstance(passed.exception, AssertionError)  # read and checked, then the build
