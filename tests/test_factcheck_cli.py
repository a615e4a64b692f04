"""``clinjudge factcheck``: JSON keys and values on a corpus, the table output, and one-line
errors for bad input (missing file, both --corpus and --search, a missing API key)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinjudge.cli import app

CORPUS = Path(__file__).parent / "fixtures" / "factcheck" / "corpus.jsonl"
ANSWER = (
    "Aspirin 650 mg daily is recommended for secondary prevention of stroke. "
    "Metformin is the first-line drug for type 2 diabetes. Please consult your doctor."
)


@pytest.fixture
def answer(tmp_path) -> Path:
    path = tmp_path / "answer.txt"
    path.write_text(ANSWER)
    return path


def invoke(*args: str):
    return CliRunner().invoke(app, ["factcheck", *args])


def test_json_output(answer, tmp_path):
    question = tmp_path / "q.txt"
    question.write_text("How should stroke and diabetes be treated?")
    out = invoke(
        "--answer", str(answer), "--question", str(question), "--corpus", str(CORPUS),
        "--backend", "offline", "--json",
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert list(data)[:4] == ["claims", "unsupported_rate", "ci95", "checkable_rate"]
    assert data["unsupported_rate"] == 0.5 and data["checkable_rate"] == 1.0
    assert [c["label"] for c in data["claims"]] == ["relevant", "relevant", "meta"]
    assert data["claims"][0]["evidence"][0]["id"] == "aspirin-secondary"
    assert data["provenance"]["search"]["backend"] == "corpus"


def test_table_output(answer):
    out = invoke("--answer", str(answer), "--corpus", str(CORPUS), "--backend", "offline")
    assert out.exit_code == 0, out.output
    assert "not supported" in out.stdout and "unsupported 50.0%" in out.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--answer", "missing.txt"], "answer file not found"),
        (["--search", "brave", "--corpus", str(CORPUS)], "either --corpus or --search"),
        (["--search", "brave"], "BRAVE_API_KEY"),
        (["--search", "bing"], "unknown search backend"),
        (["--backend", "cloud"], "--backend must be one of"),
    ],
)
def test_bad_input_is_one_line(answer, monkeypatch, args, message):
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    full = args if args[0] == "--answer" else ["--answer", str(answer), *args]
    out = invoke(*full, "--backend", "offline") if "--backend" not in full else invoke(*full)
    assert out.exit_code == 2
    assert out.stderr.strip().startswith("error:") and message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_compare_with_row_evidence_writes_per_item_scores(tmp_path):
    data = tmp_path / "answers.jsonl"
    evidence = [{"id": "m1", "text": "Metformin is the first-line drug for type 2 diabetes."}]
    rows = [
        {"id": "good", "answer": "Metformin is the first-line drug for type 2 diabetes.",
         "evidence": evidence},
        {"id": "bad", "answer": "Warfarin is the first-line drug for type 2 diabetes.",
         "question": "What is first-line for type 2 diabetes?", "evidence": json.dumps(evidence)},
    ]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = CliRunner().invoke(
        app,
        ["compare", str(data), "--judges", "factcheck", "--backend", "offline",
         "--out", str(tmp_path / "run")],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    per_item = {r["id"]: r["factcheck"] for r in report["per_item"]}
    assert per_item["good"]["unsupported_rate"] == 0.0
    assert per_item["bad"]["unsupported_rate"] == 1.0
    assert per_item["bad"]["n_claims"] == 1 and per_item["good"]["checkable_rate"] == 1.0


def test_table_output_says_why_each_claim_was_rated(answer):
    out = invoke("--answer", str(answer), "--corpus", str(CORPUS), "--backend", "offline")
    assert out.exit_code == 0, out.output
    text = " ".join(out.stdout.split())
    assert "c1: not supported" in text and "650 mg" in text.split("c1: not supported")[1]
    assert "c2: supported" in text and "checkable = the evidence addressed the claim" in text
