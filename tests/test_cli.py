"""The ``judge`` and ``compare`` commands: outputs, resume, and one-line errors with exit code 2."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

FIXTURES = Path(__file__).parent / "fixtures" / "soap"


def use_model(monkeypatch, base_url: str, tmp_path: Path, **extra: str) -> None:
    """Point the LLM backend at ``base_url`` with a cache of this test's own, no SDK retries."""
    settings = {
        "CLINJUDGE_MODEL": "stub-judge",
        "OPENAI_BASE_URL": base_url,
        "CLINJUDGE_CACHE_DIR": str(tmp_path / "cache"),
        "CLINJUDGE_MAX_RETRIES": "0",
        **extra,
    }
    for key, value in settings.items():
        monkeypatch.setenv(key, value)


def chest_pain_visit(tmp_path: Path, note_text: str) -> tuple[Path, Path]:
    transcript = tmp_path / "t.txt"
    transcript.write_text("[doctor] any chest pain ?\n[patient] yes , for two days .\n")
    note = tmp_path / "n.txt"
    note.write_text(note_text)
    return transcript, note


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("data") / "notes.csv"
    transcript = (FIXTURES / "transcript.txt").read_text()
    note = (FIXTURES / "note.txt").read_text()
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["encounter_id", "dialogue", "note"])
        writer.writeheader()
        writer.writerow({"encounter_id": "e1", "dialogue": transcript, "note": note})
        wrong = note.replace("right knee with mild", "left knee with mild")
        writer.writerow({"encounter_id": "e2", "dialogue": transcript, "note": wrong})
    return path


def test_judge_json_has_the_documented_fields():
    result = run(
        "judge",
        "--transcript",
        FIXTURES / "transcript.txt",
        "--note",
        FIXTURES / "note.txt",
        "--backend",
        "offline",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("mode", "backend", "hallucination_rate", "n_claims", "parse_failures"):
        assert key in data
    assert data["backend"] == "offline" and data["mode"] == "inference-aware"
    assert data["provenance"]["package_version"]
    claim = data["claims"][0]
    for key in ("id", "text", "section", "start", "end", "tier", "supported", "subtype"):
        assert key in claim
    assert {"rationale", "evidence", "knowledge"} <= claim.keys()
    assert data["n_claims"] == len(data["claims"])


def test_judge_table_mentions_rate_and_exclusions():
    result = run(
        "judge",
        "--transcript",
        FIXTURES / "transcript.txt",
        "--note",
        FIXTURES / "note.txt",
        "--mode",
        "lexical",
        "--backend",
        "offline",
    )
    assert result.exit_code == 0, result.output
    assert "hallucination rate" in result.stdout and "parse failures" in result.stdout


def test_judge_bad_input_is_one_line_exit_2(tmp_path):
    missing = tmp_path / "nope.txt"
    assert_one_line_error(
        run("judge", "--transcript", missing, "--note", FIXTURES / "note.txt"), "not found"
    )
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    assert_one_line_error(
        run("judge", "--transcript", FIXTURES / "transcript.txt", "--note", empty), "empty"
    )
    assert_one_line_error(
        run(
            "judge",
            "--transcript",
            FIXTURES / "transcript.txt",
            "--note",
            FIXTURES / "note.txt",
            "--mode",
            "strict",
        ),
        "--mode",
    )


def test_compare_writes_report_and_resumes(dataset, tmp_path):
    out = tmp_path / "run"
    args = ("compare", dataset, "--out", out, "--backend", "offline")
    result = run(*args)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    for name in ("lexical", "inference-aware"):
        judge = report["judges"][name]
        for key in ("hallucination_rate", "ci95", "n_claims", "n_notes", "tiers", "sections"):
            assert key in judge
        assert judge["parse_failures"] == 0 and judge["n_notes"] == 2
    assert [row["id"] for row in report["per_item"]] == ["e1", "e2"]
    assert report["per_item"][0]["lexical"]["n_claims"] > 0
    verdicts = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    assert {v["judge"] for v in verdicts} == {"lexical", "inference-aware"}
    # the same claims on both sides
    by_judge = {
        j: [(v["id"], v["claim_id"], v["start"]) for v in verdicts if v["judge"] == j]
        for j in ("lexical", "inference-aware")
    }
    assert by_judge["lexical"] == by_judge["inference-aware"]
    for png in ("rates.png", "tiers.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the flipped laterality in e2 is flagged by both judges
    e2 = [v for v in verdicts if v["id"] == "e2" and "left knee" in v["text"]]
    assert e2 and all(v["tier"] == 5 for v in e2)
    # resume: nothing is judged again
    before = (out / "runs" / "lexical.jsonl").read_text()
    again = run(*args)
    assert again.exit_code == 0, again.output
    assert (out / "runs" / "lexical.jsonl").read_text() == before
    assert json.loads((out / "report.json").read_text())["judges"] == report["judges"]
    # the run is rendered again without judging, in any format
    (out / "report.md").unlink()
    rendered = run("report", out, "--format", "json")
    assert rendered.exit_code == 0, rendered.output
    headlines = {(r["judge"], r["metric"]): r for r in json.loads(rendered.stdout)}
    for name in ("lexical", "inference-aware"):
        rate = report["judges"][name]["hallucination_rate"]
        assert headlines[(name, "hallucination_rate")]["value"] == rate
    assert (out / "report.md").exists()
    assert (out / "runs" / "lexical.jsonl").read_text() == before
    # a run that would mix two datasets is refused, naming what differs
    changed = tmp_path / "changed.csv"
    changed.write_text(Path(dataset).read_text().replace("mild", "severe"))
    refused = run("compare", changed, "--out", out, "--backend", "offline")
    assert_one_line_error(refused, "item 'e1' has other text than the run judged")


def test_a_finished_run_grows_by_a_judge_and_items(dataset, tmp_path):
    out = tmp_path / "run"
    first = run("compare", dataset, "--out", out, "--judges", "lexical", "--limit", "1")
    assert first.exit_code == 0, first.output
    lexical = (out / "runs" / "lexical.jsonl").read_text()
    grown = run("compare", dataset, "--out", out, "--judges", "lexical,inference-aware")
    assert grown.exit_code == 0, grown.output
    assert (out / "runs" / "lexical.jsonl").read_text().startswith(lexical)  # e1 kept as is
    report = json.loads((out / "report.json").read_text())
    assert report["judges"]["inference-aware"]["n_notes"] == 2
    assert report["judges"]["lexical"]["n_notes"] == 2
    # the judges rate the same claims, the first one's included
    verdicts = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    claims = {
        j: sorted((v["id"], v["claim_id"]) for v in verdicts if v["judge"] == j)
        for j in ("lexical", "inference-aware")
    }
    assert claims["lexical"] == claims["inference-aware"]
    # one judge may be reported alone; a judge the run never had is refused by name
    alone = run("report", out, "--judges", "lexical", "--format", "tsv")
    assert alone.exit_code == 0 and "inference-aware" not in alone.stdout
    assert_one_line_error(run("report", out, "--judges", "cef"), "no judge 'cef' in the run")
    assert_one_line_error(run("report", tmp_path / "nowhere"), "no such run directory")


def test_compare_bad_input_is_one_line_exit_2(tmp_path, dataset):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,text\n1,hello\n")
    assert_one_line_error(run("compare", bad, "--out", tmp_path / "o"), "column")
    assert_one_line_error(run("compare", tmp_path / "missing.csv", "--out", tmp_path / "o"), "")
    assert_one_line_error(
        run("compare", dataset, "--out", tmp_path / "o", "--judges", "lexical,magic"), "magic"
    )


def test_compare_on_the_llm_backend_records_model_and_prompts(
    dataset, tmp_path, openai_stub, monkeypatch
):
    """compare over HTTP with the real ChatOpenAI: verdicts for valid replies, a parse failure
    per claim for prose, provenance without the key, and a cached re-run with no request.

    Three runs in one process (three event loops) also guard against a chat model whose HTTP
    client outlives its event loop ("Event loop is closed")."""
    import re

    def reply(request):
        text = "\n".join(str(m.get("content", "")) for m in request["messages"])
        ids = list(dict.fromkeys(re.findall(r'"id":\s*"(c\d+)"', text)))
        if "c1" in ids:
            return "no JSON here, sorry"
        verdicts = [
            {"claim_id": i, "tier": 1, "subtype": "restatement", "rationale": "ok", "evidence": []}
            for i in ids
        ]
        return json.dumps({"verdicts": verdicts})

    openai_stub.script(reply)
    monkeypatch.setenv("CLINJUDGE_MODEL", "stub-judge")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-test-key")
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    out = tmp_path / "llm"
    args = ("compare", dataset, "--out", out, "--backend", "llm", "--claims", "split")
    result = run(*args, "--judges", "inference-aware")
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    judge = report["judges"]["inference-aware"]
    assert judge["backend"] == "llm"
    assert judge["parse_failures"] == 2  # c1 of each note: prose however small its batch
    assert judge["n_claims"] + judge["parse_failures"] == sum(
        1 for line in (out / "verdicts.jsonl").read_text().splitlines()
    )
    provenance = json.dumps(report["provenance"])
    assert "stub-judge" in provenance and "soap.inference_aware" in provenance
    assert "sk-secret-test-key" not in provenance
    assert "sk-secret-test-key" not in (out / "report.md").read_text()
    sent = len(openai_stub.requests)
    kept = run(*args, "--judges", "inference-aware", "--no-retry-failed")  # keeps the failures
    assert kept.exit_code == 0, kept.output
    assert len(openai_stub.requests) == sent
    again = run(*args, "--judges", "inference-aware")  # resume: only the failed batches again
    assert again.exit_code == 0, again.output
    # in each of the 2 notes, the batch holding c1 is asked and re-asked as it is halved down
    # to c1 alone (8, 4, 2, 1 claims); the halves without c1 come from the cache
    assert len(openai_stub.requests) - sent == 2 * 4 * 2
    assert "judged again by the next run" in again.output
    sent = len(openai_stub.requests)
    fresh = (
        "compare",
        dataset,
        "--out",
        tmp_path / "llm2",
        "--backend",
        "llm",
        "--claims",
        "split",
    )
    third = run(*fresh, "--judges", "inference-aware")  # new run, same cache
    assert third.exit_code == 0, third.output
    # only the batches holding c1 are asked again (ask + re-ask, 8, 4, 2 and 1 claims):
    # failures are not cached
    assert len(openai_stub.requests) - sent == 2 * 4 * 2
    assert (
        json.loads((tmp_path / "llm2" / "report.json").read_text())["judges"]["inference-aware"][
            "errors"
        ]
        == 0
    )


def test_compare_reads_columns_named_on_the_command_line(tmp_path):
    path = tmp_path / "scored.jsonl"
    dialogue = "Doctor: Any fever?\nPatient: No.\nDoctor: Any cough?\nPatient: Yes, for two weeks."
    row = {"row": 7, "dialogue": dialogue, "automatic_summary": "Two-week cough. No fever."}
    path.write_text(json.dumps(row) + "\n")
    out = tmp_path / "out"
    args = ("compare", path, "--judges", "cef", "--backend", "offline", "--out", out)
    assert_one_line_error(run(*args), "automatic_summary")
    result = run(*args, "--text-column", "automatic_summary", "--id-column", "row")
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["per_item"][0]["id"] == "7" and "coverage" in report["per_item"][0]["cef"]


def test_compare_whose_every_call_fails_exits_1_naming_the_endpoint(dataset, tmp_path, monkeypatch):
    """An unreachable endpoint: every claim is a call error, the report still lists them
    (excluded), and the command exits 1 with one line naming the endpoint and the error."""
    dead = "http://127.0.0.1:9/v1"
    monkeypatch.setenv("CLINJUDGE_MODEL", "stub-judge")
    monkeypatch.setenv("OPENAI_BASE_URL", dead)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    out = tmp_path / "dead"
    result = run(
        "compare",
        dataset,
        "--out",
        out,
        "--backend",
        "llm",
        "--claims",
        "split",
        "--judges",
        "inference-aware",
    )
    assert result.exit_code == 1, result.output
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: inference-aware: every model call to " + dead + " failed: ")
    assert last.endswith("; the same command asks again")
    assert result.stdout.strip() == ""  # the one line only: no table of judges that judged nothing
    report = json.loads((out / "report.json").read_text())
    assert report["judges"]["inference-aware"]["n_claims"] == 0
    assert report["failures"]["inference-aware"]["by_reason"][0]["kind"] == "error"
    assert sorted(report["items_to_retry"]["inference-aware"]) == ["e1", "e2"]


def test_a_note_that_is_not_english_gets_a_one_line_warning(tmp_path):
    from clinjudge.text.language import looks_english

    spanish = (
        "El paciente refiere dolor torácico desde hace dos días, sin fiebre ni tos. "
        "Toma lisinopril diez miligramos al día y niega alergias conocidas."
    )
    assert not looks_english(spanish)
    assert looks_english("Pt c/o CP x2d, no SOB. HTN on lisinopril 10mg qd. PMH: DM2, HLD.")
    transcript = tmp_path / "t.txt"
    transcript.write_text("[doctor] any chest pain ?\n[patient] yes , for two days .\n")
    note = tmp_path / "n.txt"
    note.write_text(spanish)
    result = run("judge", "--transcript", transcript, "--note", note)
    assert result.exit_code == 0, result.output
    text = result.stderr if hasattr(result, "stderr") else result.output
    warnings = [line for line in text.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "the note" in warnings[0] and "the transcript" not in warnings[0]


def test_single_item_commands_whose_every_call_fails_exit_1_naming_the_endpoint(
    tmp_path, monkeypatch
):
    dead = "http://127.0.0.1:9/v1"
    use_model(monkeypatch, dead, tmp_path, OPENAI_API_KEY="sk-test")
    transcript, note = chest_pain_visit(tmp_path, "HPI: Chest pain for two days.\n")
    args = ("--transcript", transcript, "--note", note, "--backend", "llm", "--claims", "split")
    cef = ("cef", "--source", transcript, "--summary", note, "--backend", "llm")
    factcheck = ("factcheck", "--answer", note, "--backend", "llm")
    fixtures = Path(__file__).parent / "fixtures"
    pairs = fixtures / "meta_eval" / "pairs.jsonl"
    meta_eval = ("meta-eval", pairs, "--judge", "lexical", "--backend", "llm", "--limit", 1)
    detect = ("detect", fixtures / "medec" / "medec_pairs_sample.jsonl", "--limit", 2)
    runs = [(("judge", *args), ((), ("--json",))), ((cef), ((), ("--json",)))]
    runs += [(factcheck, ((), ("--json",))), (meta_eval, (("--out", tmp_path / "m"),))]
    runs += [(detect, (("--out", tmp_path / "d"),))]
    for command, variants in runs:
        for extra in variants:
            result = run(*command, *extra)
            assert result.exit_code == 1, (command, result.output)
            last = result.stderr.strip().splitlines()[-1]
            assert f"every model call to {dead} failed: " in last, last
            assert last.startswith("error: "), last
            assert "refused" in last.lower(), last  # the cause, not only "Connection error."
            if command[0] in ("judge", "meta-eval") and "--json" not in extra:
                assert result.stdout.strip() == "", result.stdout  # no table of nothing judged


def test_judge_prints_tsv_or_jsonl_and_writes_the_claim_viewer(tmp_path):
    from clinjudge.report.html_report import data_of_page

    transcript = tmp_path / "t.txt"
    transcript.write_text("[doctor] any chest pain ?\n[patient] yes , for two days .\n")
    note = tmp_path / "n.txt"
    note.write_text("HPI: Chest pain for two days. Denies fever.\n")
    page = tmp_path / "one.html"
    tsv = run(
        "judge", "--transcript", transcript, "--note", note, "--format", "tsv", "--html", page
    )
    assert tsv.exit_code == 0, tsv.output
    lines = [line for line in tsv.stdout.splitlines() if line]
    assert lines[0].split("\t") == [
        "id",
        "section",
        "tier",
        "subtype",
        "severity",
        "text",
        "rationale",
    ]
    assert all(len(line.split("\t")) == 7 for line in lines) and len(lines) == 3
    jsonl = run("judge", "--transcript", transcript, "--note", note, "--format", "jsonl")
    rows = [json.loads(line) for line in jsonl.stdout.splitlines() if line]
    assert [r["text"] for r in rows] == [line.split("\t")[5] for line in lines[1:]]
    data = data_of_page(page.read_text(encoding="utf-8"))
    assert [c["text"] for c in data["notes"][0]["claims"]] == [r["text"] for r in rows]
    from clinjudge import __version__

    assert data["version"] == __version__  # was blank
    (judge,) = data["judges"].values()
    low, high = judge["headline"]["hallucination_rate"]["ci95"]  # a one-note interval, not n/a
    assert 0 <= low <= judge["headline"]["hallucination_rate"]["value"] <= high <= 1
    bad = run("judge", "--transcript", transcript, "--note", note, "--format", "xml")
    assert_one_line_error(bad, "--format must be one of")


def test_a_long_note_prints_its_flagged_claims_and_says_how_to_see_all(tmp_path):
    transcript = tmp_path / "t.txt"
    transcript.write_text("[doctor] any chest pain ?\n[patient] yes , for two days .\n")
    note = tmp_path / "n.txt"
    note.write_text(
        "HPI: Chest pain for two days.\n"
        + "".join(f"Item {i}: the patient keeps {i} goldfish named Rex.\n" for i in range(130))
    )
    result = run("judge", "--transcript", transcript, "--note", note)
    assert result.exit_code == 0, result.output
    assert "showing 100 of 131 claims (the flagged ones first)" in result.stdout
    assert "Chest pain for two days." not in result.stdout  # a supported claim, left out


def test_compare_prints_its_headlines_as_tsv_or_json(tmp_path):
    data = tmp_path / "notes.jsonl"
    row = {
        "id": "a",
        "transcript": "[doctor] any chest pain ?\n[patient] yes .",
        "note": "Chest pain.",
    }
    data.write_text(json.dumps(row) + "\n")
    tsv = run("compare", data, "--judges", "lexical", "--out", tmp_path / "o", "--format", "tsv")
    assert tsv.exit_code == 0, tsv.output
    lines = tsv.stdout.strip().splitlines()
    assert lines[0].split("\t") == [
        "judge", "system", "metric", "value", "ci95_low", "ci95_high", "n", "n_notes"
    ]  # fmt: skip
    assert [line.split("\t")[:3] for line in lines[1:3]] == [
        ["lexical", "all", "hallucination_rate"],
        ["lexical", "all", "major_rate"],
    ]
    assert [line.split("\t")[2] for line in lines[3:]] == [
        "cost.calls", "cost.cache_hits", "cost.prompt_tokens", "cost.cached_prompt_tokens",
        "cost.completion_tokens", "cost.seconds",
    ]  # fmt: skip
    again = run("compare", data, "--judges", "lexical", "--out", tmp_path / "o", "--format", "json")
    headline = json.loads(again.stdout)[0]
    assert headline["metric"] == "hallucination_rate"
    assert str(headline["value"]) == lines[1].split("\t")[3] and headline["n"] == 1


def test_compare_says_what_the_omission_judge_counts(tmp_path):
    data = tmp_path / "notes.jsonl"
    row = {"id": "a", "transcript": "[doctor] any chest pain ?\n[patient] yes .", "note": "Well."}
    data.write_text(json.dumps(row) + "\n")
    result = run("compare", data, "--judges", "omission", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert "Omission: facts the visits state" in " ".join(result.stdout.split())


def test_judge_shows_a_long_notes_progress_and_the_api_counts_every_claim(tmp_path, monkeypatch):
    import clinjudge.cli.progress as progress
    from clinjudge.api import judge_note

    transcript = (FIXTURES / "transcript.txt").read_text()
    note = ((FIXTURES / "note.txt").read_text() + "\n\n") * 8  # 80 claims: two batches
    (tmp_path / "note.txt").write_text(note)
    seen: dict[str, list[int]] = {"found": [], "judged": []}

    class Recorder:
        def found(self, claims: int) -> None:
            seen["found"].append(claims)

        def judged(self, claims: int) -> None:
            seen["judged"].append(claims)

    result = judge_note(transcript, note, backend="offline", progress=Recorder())
    n_claims = len(result.rows())
    assert seen["found"] == [n_claims] and sum(seen["judged"]) == n_claims
    assert len(seen["judged"]) > 1  # told batch by batch, not once at the end

    args = ("judge", "--transcript", FIXTURES / "transcript.txt", "--note", tmp_path / "note.txt")
    monkeypatch.setattr(progress, "LONG_NOTE_CLAIMS", n_claims - 1)
    shown = run(*args)
    assert shown.exit_code == 0, shown.output
    assert "judging the note's claims" in shown.stderr and f"{n_claims}/{n_claims}" in shown.stderr
    monkeypatch.setattr(progress, "LONG_NOTE_CLAIMS", n_claims)
    quiet = run(*args)
    assert "judging the note's claims" not in quiet.stderr


def test_compare_skips_an_empty_note_lists_it_and_judges_the_rest(tmp_path):
    """ACI-Bench's ChatGPT D2N179 note is empty: one such row no longer refuses the run."""
    path = tmp_path / "ChatGPT_test3.csv"
    transcript = (FIXTURES / "transcript.txt").read_text()
    note = (FIXTURES / "note.txt").read_text()
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["Dialogues", "note", "encounter_id"])
        writer.writeheader()
        writer.writerow({"Dialogues": transcript, "note": note, "encounter_id": "D2N178"})
        writer.writerow({"Dialogues": transcript, "note": "", "encounter_id": "D2N179"})
    out = tmp_path / "run"
    args = ("compare", path, "--judges", "inference-aware", "--backend", "offline", "--out", out)
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert "skipped data row 2 (line " in result.stderr and "id D2N179: empty note" in result.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["n_items"] == 1 and report["skipped_items"][0]["id"] == "D2N179"
    assert report["provenance"]["dataset"]["n_skipped"] == 1
    assert "1 row of the dataset was skipped" in (out / "report.md").read_text()
    assert_one_line_error(run(*args, "--strict-items"), "column 'note': empty note")


def test_compare_rejects_a_missing_dataset_before_loading_any_judge():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from clinjudge.cli import app\n"
        "r = CliRunner().invoke(app, ['compare', 'no/such.csv', '--out', 'x'])\n"
        "assert r.exit_code == 2, r.output\n"
        "heavy = [m for m in ('torch', 'langgraph', 'faiss') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    ("sent", "code", "by"), [("SIGINT", 130, "Ctrl-C"), ("SIGTERM", 143, "SIGTERM")]
)
def test_a_stopped_run_says_what_it_keeps_also_when_started_from_a_script(tmp_path, sent, code, by):
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    command = [
        str(Path(sys.executable).with_name("clinjudge")), "compare", "aci-demo",
        "--judges", "inference-aware", "--backend", "offline", "--out", str(out),
    ]  # fmt: skip
    process = subprocess.Popen(  # as a script's background job: SIGINT inherited as ignored
        command,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    rows = out / "runs" / "inference-aware.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (rows.is_file() and rows.read_text().strip()):
        time.sleep(0.2)
    process.send_signal(getattr(signal, sent))
    _, err = process.communicate(timeout=600)  # generous: a loaded 2-core machine is slow
    assert process.returncode == code, err
    kept = len(rows.read_text().splitlines())
    assert f"interrupted ({by}): {out} keeps inference-aware {kept} of 10 items judged" in err
    assert "the same command resumes" in err and "Traceback" not in err
    assert not (out / ".writer.lock").exists()


def test_judge_answers_a_second_run_from_the_response_cache(tmp_path, openai_stub, monkeypatch):
    import re

    def reply(request):
        text = request["messages"][0]["content"]
        ids = dict.fromkeys(re.findall(r'"id":\s*"(c\d+)"', text.split("<claims>")[-1]))
        verdicts = [{"claim_id": i, "tier": 1, "rationale": "said"} for i in ids]
        return json.dumps({"verdicts": verdicts})

    openai_stub.script(reply)
    use_model(monkeypatch, openai_stub.base_url, tmp_path)
    transcript, note = chest_pain_visit(tmp_path, "HPI: Chest pain for two days. Denies fever.\n")
    args = ("judge", "--transcript", transcript, "--note", note, "--backend", "llm", "--json")
    first = run(*args)
    assert first.exit_code == 0, first.output
    sent = len(openai_stub.requests)
    assert sent > 0
    again = run(*args)
    assert again.exit_code == 0 and len(openai_stub.requests) == sent
    assert json.loads(again.stdout)["usage"]["cache_hits"] > 0


def test_python_dash_m_runs_the_command_line():
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "clinjudge", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "compare" in done.stdout
