"""``clinjudge cef`` (table, JSON, one-line errors, prompt overrides over HTTP) and CEF as a
judge of ``clinjudge compare``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run
from openai_stub import Reply

FIXTURES = Path(__file__).parent / "fixtures" / "cef"
DIALOGUE = FIXTURES / "dialogue.txt"
SUMMARY = FIXTURES / "automatic_summary.txt"


def test_json_has_the_documented_keys():
    result = run(
        "cef", "--source", DIALOGUE, "--summary", SUMMARY, "--backend", "offline", "--json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("coverage", "conformity", "consistency", "conciseness", "overall", "questions"):
        assert key in data
    assert 0 < data["coverage"] < 100 and data["conciseness"] > 80
    assert data["n_source"] == 10 and data["n_summary"] == 10
    assert data["n_source_questions"] == sum(
        1 for q in data["questions"] if q["side"] == "source" and q["status"] == "asked"
    )
    assert data["provenance"]["backend"] == "offline"
    assert data["provenance"]["options"] == {"n_source": 10, "n_summary": 10, "task": "summary"}


def test_table_lists_scores_and_omitted_facts():
    result = run(
        "cef", "--source", DIALOGUE, "--summary", SUMMARY, "--backend", "offline",
        "--n-source", "4", "--task", "note",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "coverage" in out and "consistency" in out and "not computed" in out
    assert "Omitted source facts" in out and "N=4" in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--source", "missing.txt", "--summary", SUMMARY), "source file not found"),
        (("--source", DIALOGUE, "--summary", FIXTURES), "summary path is a directory"),
        (("--source", DIALOGUE, "--summary", SUMMARY, "--task", "essay"), "--task must be one of"),
        (("--source", DIALOGUE, "--summary", SUMMARY, "--backend", "gpu"), "--backend must be"),
        (("--source", DIALOGUE, "--summary", SUMMARY, "--layout", "wide"), "--layout must be"),
        (
            ("--source", DIALOGUE, "--summary", SUMMARY, "--prompt", "cef.nope=x.md"),
            "unknown prompt",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(args, needle):
    assert_one_line_error(run("cef", *args), needle)


def test_empty_summary_is_one_line_error(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    assert_one_line_error(run("cef", "--source", DIALOGUE, "--summary", empty), "empty")


def test_prompt_override_is_used_and_recorded(openai_stub, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINJUDGE_MODEL", "stub-cef")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    custom = tmp_path / "answer.md"
    custom.write_text("CUSTOM ANSWER PROMPT\n<<<\n{{text}}\n>>>\nQuestions:\n{{questions}}\n")
    base = ("cef", "--source", DIALOGUE, "--summary", SUMMARY, "--backend", "llm", "--json")
    override = ("--prompt", f"cef.answer_questions={custom}")
    # a prompt of the focused layout, overridden under the shared one: said, not ignored
    shared = ("--layout", "shared")
    assert_one_line_error(run(*base, *override, *shared), "belongs to the focused CEF layout")

    def script(request):
        text = request["messages"][0]["content"]
        if "Write " in text:
            q = {"question": "Left hip pain?", "answer": "YES", "quote": "left hip pain"}
            return Reply(json.dumps({"questions": [q]}))
        ids = [q["id"] for q in json.loads(text.split("Questions:\n", 1)[1])]
        return Reply(json.dumps({"answers": [{"id": i, "answer": "YES"} for i in ids]}))

    openai_stub.script(script)
    result = run(*base, *override)  # the default layout, focused
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["coverage"] == 100.0 and data["consistency"] == 100.0
    answered = [r for r in openai_stub.requests if "CUSTOM ANSWER PROMPT" in str(r["messages"])]
    assert len(answered) == 4  # two self-checks, two cross batches
    refs = {p["name"]: p for p in data["provenance"]["prompts"]}
    assert refs["cef.answer_questions"]["path"] == str(custom.resolve())
    assert refs["cef.answer_questions"]["version"] == "custom"
    assert data["usage"]["calls"] == 6
    assert data["provenance"]["layout"] == "focused"
    assert "OPENAI_API_KEY" not in result.stdout


def test_compare_runs_cef_with_per_item_scores(tmp_path):
    data = tmp_path / "pairs.csv"
    with data.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "dialogue", "summary"])
        writer.writeheader()
        writer.writerow(
            {"id": "short", "dialogue": DIALOGUE.read_text(), "summary": SUMMARY.read_text()}
        )
        full = (FIXTURES / "reference_summary.txt").read_text()
        writer.writerow({"id": "full", "dialogue": DIALOGUE.read_text(), "summary": full})
    out = tmp_path / "run"
    result = run(
        "compare", data, "--judges", "cef", "--backend", "offline", "--out", out,
        "--option", "cef.n_source=6",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    cef = report["judges"]["cef"]
    assert cef["kind"] == "cef" and set(cef["headline"]) == {
        "coverage", "conformity", "consistency", "conciseness", "overall",
    }  # fmt: skip
    coverage = cef["headline"]["coverage"]
    assert coverage["n"] == 2 and coverage["ci95"] is None  # 2 items: too few for a bootstrap
    assert "| cef | coverage |" in (out / "report.md").read_text()
    assert "n too small" in (out / "report.md").read_text()  # said, not a blank "n/a"
    assert "n too small" in result.output
    rows = {row["id"]: row["cef"] for row in report["per_item"]}
    assert set(rows) == {"short", "full"}
    assert rows["full"]["coverage"] > rows["short"]["coverage"]
    for scores in rows.values():
        assert set(scores) >= {"coverage", "conformity", "consistency", "conciseness", "overall"}
    lines = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    assert lines and all(x["judge"] == "cef" and x["id"] in rows for x in lines)
