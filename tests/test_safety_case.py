"""``clinjudge safety-case`` over compare runs (SPEC §8, §9): endpoints with Wilson intervals,
gates on the upper bound with the clean cases still needed, subgroups with the minimum n, and
one-line errors for bad input."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from clinjudge.cli import app
from clinjudge.metrics.intervals import wilson_interval
from clinjudge.metrics.safety import clean_cases_to_pass
from clinjudge.safety_case import item_counts, subgroup_of


def soap_row(id_, tiers_severities, **extra):
    verdicts = [
        {"claim_id": f"c{i}", "tier": t, "severity": s} for i, (t, s) in enumerate(tiers_severities)
    ]
    return {"id": id_, "verdicts": verdicts, "failures": [], "retry": False, **extra}


def omission_row(id_, critical, omitted, **extra):
    return {
        "id": id_,
        "facts": [],
        "n_critical": critical,
        "n_critical_omitted": omitted,
        "failure": None,
        "retry": False,
        **extra,
    }


def write_run(path, soap_rows, omission_rows):
    (path / "runs").mkdir(parents=True)
    (path / "report.json").write_text("{}")
    for name, rows in (("inference-aware", soap_rows), ("omission", omission_rows)):
        with (path / "runs" / f"{name}.jsonl").open("w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


def test_an_item_counts_major_tier_4_5_claims_contradictions_and_critical_omissions():
    c = item_counts(
        soap_row("a", [(1, None), (4, "major"), (5, "minor"), (5, "major"), (3, "major")]),
        omission_row("a", 4, 1),
    )
    assert c.units["major_hallucination_rate"] == 5
    assert c.events["major_hallucination_rate"] == 2  # tier 3 is never a hallucination
    assert c.events["contradiction_rate"] == 2
    assert (c.events["critical_omission_rate"], c.units["critical_omission_rate"]) == (1, 4)


def test_clean_cases_to_pass_is_the_fewest_that_bring_the_upper_bound_under_the_limit():
    m = clean_cases_to_pass(2, 50, 0.05)
    assert wilson_interval(2, 50 + m)[1] <= 0.05 < wilson_interval(2, 50 + m - 1)[1]
    assert clean_cases_to_pass(0, 400, 0.01) == 0
    assert subgroup_of(72) == "65+" and subgroup_of(None) == "(blank)" and subgroup_of(" F ") == "F"


@pytest.fixture
def runs(tmp_path):
    good, bad = tmp_path / "good", tmp_path / "bad"
    write_run(
        good,
        [soap_row(f"n{i}", [(1, None)] * 20) for i in range(10)],
        [omission_row(f"n{i}", 5, 0) for i in range(10)],
    )
    write_run(
        bad,
        [soap_row(f"n{i}", [(1, None)] * 18 + [(4, "major"), (5, "major")]) for i in range(10)],
        [omission_row(f"n{i}", 5, 2) for i in range(9)]
        + [omission_row("n9", 0, 0, facts=None, failure={"kind": "error"}, retry=True)],
    )
    meta = tmp_path / "meta.jsonl"
    with meta.open("w") as f:
        for i in range(10):
            f.write(
                json.dumps(
                    {"id": f"n{i}", "transcript": "t", "note": "n", "sex": "F" if i < 8 else "M"}
                )
                + "\n"
            )
    gates = tmp_path / "gates.toml"
    gates.write_text(
        "[gates]\nmajor_hallucination_rate = { max = 0.05 }\n"
        "critical_omission_rate = { max = 0.1 }\n"
    )
    return tmp_path, good, bad, meta, gates


def test_the_case_passes_a_clean_system_fails_a_bad_one_and_names_small_subgroups(runs):
    tmp_path, good, bad, meta, gates = runs
    out = tmp_path / "case"
    args = [
        "safety-case",
        str(good),
        str(bad),
        "--gates",
        str(gates),
        "--out",
        str(out),
        "--metadata",
        str(meta),
        "--subgroup-column",
        "sex",
        "--min-n",
        "5",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    case = json.loads((out / "safety-case.json").read_text())
    by = {s["system"]: s for s in case["systems"]}
    assert by["good"]["passed"] and not by["bad"]["passed"]
    bad_sys = by["bad"]
    assert bad_sys["excluded_items"] == 1 and bad_sys["n_items"] == 9
    major = bad_sys["endpoints"]["major_hallucination_rate"]
    assert (major["events"], major["n"]) == (18, 180)
    assert major["ci95"] == pytest.approx(list(wilson_interval(18, 180)))
    lo, hi = major["ci95_clustered"]  # claims of one note are not independent
    assert major["design_effect"] >= 1 and lo <= major["ci95"][0] and hi >= major["ci95"][1]
    assert major["clusters"] == 9
    failing = {g["endpoint"]: g for g in bad_sys["gates"]}
    assert failing["major_hallucination_rate"]["clean_cases_needed"] == clean_cases_to_pass(
        18, 180, 0.05
    )
    assert by["good"]["subgroups"]["M"]["enough_cases"] is False
    assert by["good"]["subgroups"]["M"]["endpoints"] == {}
    markdown = (out / "safety-case.md").read_text()
    assert "Too few items (< 5) for rates: M (n=2)" in markdown
    assert "95% CI by item (deff)" in markdown
    assert (out / "forest.png").stat().st_size > 1000
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in page and "http" not in page  # one self-contained file
    assert 'data-system="good"' in page and 'data-system="bad"' in page
    assert "too few items (&lt; 5) for rates" in page
    only_good = CliRunner().invoke(
        app, ["safety-case", str(good), "--gates", str(gates), "--out", str(out)]
    )
    assert only_good.exit_code == 0, only_good.output


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("gates", "unknown endpoint 'hallucination_vibes'"),
        ("run", "not a compare run directory"),
        ("column", "no column 'ethnicity'"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(runs, change, message):
    tmp_path, good, _, meta, gates = runs
    column = "sex"
    target = good
    if change == "gates":
        gates.write_text("[gates]\nhallucination_vibes = 0.1\n")
    elif change == "run":
        target = tmp_path / "nowhere"
        target.mkdir()
    else:
        column = "ethnicity"
    args = [
        "safety-case",
        str(target),
        "--gates",
        str(gates),
        "--out",
        str(tmp_path / "o"),
        "--metadata",
        str(meta),
        "--subgroup-column",
        column,
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_a_pairs_report_of_detect_predictions_gives_the_calibration_endpoints(runs):
    tmp_path, good, _, _, _ = runs
    detect = tmp_path / "detector"
    detect.mkdir()
    over = {"value": 0.3, "ci95": list(wilson_interval(30, 100)), "k": 30, "n": 100}
    (detect / "report.json").write_text(
        json.dumps({"calibration": {"brier": 0.21, "overconfident_error": over}})
    )
    gates = tmp_path / "calibration.toml"
    gates.write_text("[gates]\noverconfident_error_rate = { max = 0.2 }\n")
    out = tmp_path / "cal"
    args = ["safety-case", str(detect), "--gates", str(gates), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    system = json.loads((out / "safety-case.json").read_text())["systems"][0]
    assert system["brier_score"] == 0.21
    gate = system["gates"][0]
    assert gate["endpoint"] == "overconfident_error_rate" and not gate["passed"]
    assert gate["clean_cases_needed"] == clean_cases_to_pass(30, 100, 0.2)


def test_an_aci_bench_csv_gives_its_metadata_and_the_printed_numbers_are_explained(runs):
    tmp_path, good, _, _, gates = runs
    data = tmp_path / "notes.csv"
    rows = "".join(f"virtassist,n{i},[doctor] hi,Note {i}.\n" for i in range(10))
    data.write_text("dataset,encounter_id,dialogue,note\n" + rows)
    meta = "".join(f"virtassist,VA{i},n{i},{'female' if i < 8 else 'male'},30\n" for i in range(10))
    header = "dataset,id,encounter_id,patient_gender,patient_age\n"
    (tmp_path / "notes_metadata.csv").write_text(header + meta)
    out = tmp_path / "aci"
    args = ["safety-case", str(good), "--gates", str(gates), "--out", str(out)]
    args += ["--metadata", str(data), "--subgroup-column", "patient_gender", "--min-n", "5"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    case = json.loads((out / "safety-case.json").read_text())
    assert set(case["systems"][0]["subgroups"]) == {"female", "male"}
    assert "n: judged claims" in " ".join(result.output.split())
