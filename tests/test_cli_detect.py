"""End to end: ``detect`` → ``pairs`` → ``gate`` on real MEDEC pairs, through a local Typer app
(the main app registers the same functions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from openai_stub import OpenAIStub, Reply
from typer.testing import CliRunner

from clinjudge.cli.detect import detect, gate, pairs

FIXTURES = Path(__file__).parent / "fixtures" / "medec"
PAIRS = FIXTURES / "medec_pairs_sample.jsonl"
CSV = FIXTURES / "medec_ms_val_sample.csv"
REPORT_KEYS = {
    "sensitivity",
    "specificity",
    "precision",
    "f1",
    "balanced_accuracy",
    "mcc",
    "flag_rate",
    "bcr",
    "bcr_expected",
    "independence_ratio",
    "n_pairs",
    "parse_failures",
    "eca",
}

app = typer.Typer(pretty_exceptions_enable=False)
app.command()(detect)
app.command()(pairs)
app.command()(gate)
runner = CliRunner()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CLINJUDGE_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path / "cache"))


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def test_always_error_baseline_end_to_end(tmp_path: Path) -> None:
    out, report_dir = tmp_path / "run", tmp_path / "report"
    result = run("detect", PAIRS, "--baseline", "always-error", "--out", out)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(lines) == 8
    assert {(r["member"], r["parsed"]["error"]) for r in lines} == {
        ("error", True),
        ("clean", True),
    }
    assert json.loads((out / "run.json").read_text())["detector"] == "baseline:always-error"

    result = run("pairs", out / "predictions.jsonl", "--out", report_dir, "--resamples", "200")
    assert result.exit_code == 0, result.output
    report = json.loads((report_dir / "report.json").read_text())
    assert report.keys() >= REPORT_KEYS
    assert report["sensitivity"]["value"] == 1.0 and report["specificity"]["value"] == 0.0
    assert report["f1"]["value"] == pytest.approx(2 / 3)
    assert report["bcr"]["value"] == 0.0 and report["bcr"]["ci95"][0] == 0.0
    assert report["n_pairs"] == 4 and report["flag_rate"]["value"] == 1.0
    assert report["eca"]["categories"]["extraction_fail"]["count"] == 4  # baselines quote nothing
    assert report["bias"] == "yes-bias"
    for name in ("report.md", "bcr_vs_f1.png", "flag_rate.png"):
        assert (report_dir / name).stat().st_size > 0
    markdown = (report_dir / "report.md").read_text()
    assert "## Paired metrics (BCR)" in markdown and "| f1 | 66.7% |" in markdown

    gates = tmp_path / "gates.toml"
    gates.write_text("[gates]\nparse_failures = { max = 0.5 }\n")
    result = run("gate", report_dir / "report.json", "--gates", gates)
    assert result.exit_code == 0, result.output
    assert "parse_failures" in result.output and "1 of 1 gates pass" in result.output
    gates.write_text("[gates]\nparse_failures = { max = 0.5 }\nbcr = { min = 0.25 }\n")
    result = run("gate", report_dir / "report.json", "--gates", gates)
    assert result.exit_code == 1
    assert "FAIL" in result.output and "1 of 2 gates pass" in result.output


def test_detect_is_resumable_and_refuses_another_configuration(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run("detect", CSV, "--baseline", "random", "--out", out, "--limit", "2").exit_code == 0
    again = run("detect", CSV, "--baseline", "random", "--out", out, "--limit", "2")
    assert again.exit_code == 0 and "(4 resumed)" in again.output
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 4
    other = run("detect", CSV, "--baseline", "never-error", "--out", out)
    assert other.exit_code == 2 and "another configuration" in other.output
    said = " ".join(other.output.split())
    assert "random" in said and "now" in said and "never-error" in said, said  # names values


def test_csv_match_pairing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run("detect", CSV, "--baseline", "never-error", "--pairing", "match", "--out", out)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 9
    assert next(r for r in rows if r["note_id"] == "ms-val-3")["pair_id"] is None
    assert next(r for r in rows if r["note_id"] == "ms-val-1")["pair_id"] == "ms-val-0"


def test_llm_detection_through_the_stub(
    tmp_path: Path, openai_stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    def reply(body: dict) -> Reply:
        note = body["messages"][0]["content"]
        if "Neisseria gonorrhoeae" in note:
            return Reply(
                "Evidence: Culture tests indicate Neisseria gonorrhoeae.\n"
                "Analysis: The organism does not fit the disulfiram-like reaction.\n"
                "Confidence: 80\nError: Yes"
            )
        if "Trichomonas" in note:
            return Reply("Evidence: NA\nAnalysis: Consistent.\nConfidence: 70\nError: No")
        return Reply("This note looks fine to me.")  # a parse failure

    openai_stub.script(reply)
    monkeypatch.setenv("CLINJUDGE_MODEL", "stub-model")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    out, report_dir = tmp_path / "run", tmp_path / "report"
    result = run("detect", PAIRS, "--prompt", "neutral", "--decoding", "sampling", "--out", out)
    assert result.exit_code == 0, result.output
    assert len(openai_stub.requests) == 8
    assert {r["temperature"] for r in openai_stub.requests} == {0.7}
    run_info = json.loads((out / "run.json").read_text())
    assert run_info["prompt"]["name"] == "detect.neutral" and run_info["model"] == "stub-model"
    assert run_info["usage"]["calls"] == 8

    assert run("pairs", out / "predictions.jsonl", "--out", report_dir).exit_code == 0
    report = json.loads((report_dir / "report.json").read_text())
    assert report["parse_failures"]["k"] == 6  # three pairs answered in prose
    assert report["parse_failures"]["pairs_excluded"] == 3
    assert report["n_pairs_used"] == 1 and report["bcr"]["value"] == 1.0
    assert report["eca"]["n"] == 3  # the pairs with unparsed members: extraction-fail
    assert report["eca"]["tp_localization"]["k"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["detect", "missing.jsonl", "--baseline", "random", "--out", "o"], "not found"),
        (["detect", PAIRS, "--baseline", "coin", "--out", "o"], "--baseline must be one of"),
        (["detect", PAIRS, "--prompt", "lenient", "--out", "o"], "--prompt must be one of"),
        (["detect", PAIRS, "--out", "o"], "no model configured"),
        (["detect", PAIRS, "--pairing", "match", "--baseline", "random", "--out", "o"], "paired"),
        (["pairs", "nope.jsonl", "--out", "o"], "predictions file not found"),
        (["gate", "nope.json", "--gates", "g.toml"], "report file not found"),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list, message: str, tmp_path: Path) -> None:
    args = [
        str(tmp_path / a) if a in ("o", "missing.jsonl", "nope.jsonl", "nope.json") else a
        for a in args
    ]
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_gate_rejects_a_bad_gates_file(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"bcr": {"value": 0.3, "ci95": [0.2, 0.4]}}))
    gates = tmp_path / "gates.toml"
    gates.write_text("[gates]\nauroc = 0.5\n")
    result = run("gate", report, "--gates", gates)
    assert result.exit_code == 2 and "not in the report" in result.output
