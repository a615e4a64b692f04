"""Release gates from TOML on a report's 95% bounds (SPEC §8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinjudge.gates import GateError, evaluate_gates, load_gates, parse_gates

REPORT = {
    "parse_failures": {"value": 0.0, "ci95": [0.0, 0.006], "k": 0, "n": 638},
    "flag_rate": {"value": 0.5, "ci95": [0.46, 0.54], "n": 638},
    "bcr": {"value": 0.24, "ci95": [0.198, 0.291], "n": 319},
    "eca": {"tp_localization": {"value": 0.7, "ci95": [0.6, 0.78], "n": 90}},
    "n_pairs": 319,
    "bcr_upper_bound": 0.49,
}


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gates.toml"
    path.write_text(text)
    return path


def test_max_gate_on_the_upper_bound(tmp_path: Path) -> None:
    gates = load_gates(write(tmp_path, "[gates]\nparse_failures = { max = 0.01 }\n"))
    (result,) = evaluate_gates(REPORT, gates)
    assert result.passed and result.bound == 0.006 and result.n == 638
    # the point value is below 0.0059 but the upper bound is not: fails
    (result,) = evaluate_gates(REPORT, parse_gates({"gates": {"parse_failures": 0.005}}))
    assert not result.passed and result.reason == "bound beyond limit"


def test_min_gate_on_the_lower_bound_and_both_limits(tmp_path: Path) -> None:
    text = '[gates]\nbcr = { min = 0.25 }\n"eca.tp_localization" = { min = 0.5, max = 0.9 }\n'
    results = evaluate_gates(REPORT, load_gates(write(tmp_path, text)))
    assert [(r.gate.metric, r.gate.kind, r.passed) for r in results] == [
        ("bcr", "min", False),  # point 0.24, lower bound 0.198 < 0.25
        ("eca.tp_localization", "max", True),
        ("eca.tp_localization", "min", True),
    ]
    assert results[0].bound == 0.198


def test_minimum_cases(tmp_path: Path) -> None:
    text = "min_n = 400\n[gates]\nflag_rate = 0.6\nbcr = { min = 0.1, min_n = 100 }\n"
    results = evaluate_gates(REPORT, load_gates(write(tmp_path, text)))
    assert results[0].passed  # 638 cases >= the file's min_n of 400
    assert results[1].passed  # the gate's own min_n of 100 overrides the file's 400
    results = evaluate_gates(REPORT, parse_gates({"min_n": 500, "gates": {"bcr": {"min": 0.1}}}))
    assert not results[0].passed and results[0].reason == "n = 319 < min_n = 500"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, r"no \[gates\]"),
        ({"gates": {"bcr": {"limit": 1}}}, "unknown key"),
        ({"gates": {"bcr": {"min_n": 3}}}, "needs max or min"),
        ({"gates": {"bcr": "low"}}, "must be a number"),
        ({"gates": {"bcr": 0.3}, "extra": 1}, "unknown top-level"),
        ({"gates": {"bcr": {"min": 0.1, "min_n": -1}}}, "min_n"),
    ],
)
def test_invalid_gate_files(config: dict, message: str) -> None:
    with pytest.raises(GateError, match=message):
        parse_gates(config)


def test_unknown_metric_or_metric_without_interval(tmp_path: Path) -> None:
    with pytest.raises(GateError, match="not in the report"):
        evaluate_gates(REPORT, parse_gates({"gates": {"auroc": 0.5}}))
    with pytest.raises(GateError, match="no 95% interval"):
        evaluate_gates(REPORT, parse_gates({"gates": {"bcr_upper_bound": 0.5}}))
    with pytest.raises(GateError, match="invalid TOML"):
        load_gates(write(tmp_path, "[gates\n"))
    with pytest.raises(GateError, match="not found"):
        load_gates(tmp_path / "nope.toml")


def test_an_unknown_metric_names_those_the_report_has_and_list_prints_them(tmp_path: Path) -> None:
    from cli_helpers import run

    from clinjudge.gates import gateable

    report = {"judges": {"lexical": {"headline": {"rate": {"value": 0.1, "ci95": [0, 0.2]}}}}}
    assert gateable(report) == ["judges.lexical.headline.rate"]
    with pytest.raises(GateError, match="it has judges.lexical.headline.rate"):
        evaluate_gates(report, parse_gates({"gates": {"rate": 0.5}}))
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    listed = run("gate", path, "--list")
    assert listed.exit_code == 0 and listed.stdout == "judges.lexical.headline.rate\n"
    gates = write(tmp_path, '[gates]\n"judges.lexical.headline.rate" = { max = 0.25 }\n')
    assert run("gate", path, "--gates", gates).exit_code == 0
