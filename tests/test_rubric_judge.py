"""The rubric judge (issue 39 items 2 and 4): ``rubric:FILE`` offline (fact criteria by the
omission reading, the rest "needs a model"), on a model over HTTP (criteria batched under one
shared prefix, a criterion missing from the reply asked again once, then a parse failure), in
a compare run that resumes, from Python, and a bad rubric on the command line (exit 2)."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from cli_helpers import assert_one_line_error, run
from openai_stub import Reply

from clinjudge.api import evaluate
from clinjudge.compare import run_compare_sync
from clinjudge.datasets import load_items
from clinjudge.datasets.items import Item
from clinjudge.errors import ConfigError
from clinjudge.evaluators import BuildOptions, build_evaluator, parse_judge_names
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings

VISIT = """[doctor] what brings you in today ?
[patient] i've had chest pain for two days , and some nausea .
[doctor] any fever ?
[patient] no .
[doctor] what do you take ?
[patient] i take metformin 500 milligrams twice a day .
[doctor] call us or go to the emergency room if the chest pain gets worse .
"""
NOTE = """HPI: Chest pain for two days with nausea. Reports fever.
MEDICATIONS: Metformin 850 mg twice daily.
PLAN: Return to the ER if chest pain worsens.
"""
RUBRIC = """---
name: visit-check
reads: [transcript, note]
criteria:
  - {id: chest-pain, fact: chest pain, points: 5, critical: true}
  - {id: no-fever, fact: no fever, points: 2}
  - {id: fever-flip, fact: no fever, kind: contradicts, points: -3}
  - {id: dose, fact: metformin 500 mg, points: 3}
  - {id: precautions, fact: return precautions, points: 2}
  - {id: tone, text: The note is written in a neutral professional tone., points: 1}
---
"""


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture
def rubric_file(tmp_path):
    path = tmp_path / "visit.rubric.md"
    path.write_text(RUBRIC, encoding="utf-8")
    return path


def judge_of(path, kb=None, **options):
    return build_evaluator(f"rubric:{path}", BuildOptions(knowledge=kb, **options))


def test_offline_grades_fact_criteria_by_the_omission_reading_and_nothing_else(rubric_file, kb):
    judge = judge_of(rubric_file, kb, backend="offline")
    row = asyncio.run(judge.evaluate(Item(id="v", transcript=VISIT, note=NOTE)))
    got = {c["id"]: c for c in row["criteria"]}
    assert got["chest-pain"]["met"] is True and got["chest-pain"]["turns"] == [2]
    assert got["no-fever"]["met"] is False and got["fever-flip"]["met"] is True  # "Reports fever"
    assert got["dose"]["met"] is False and "850 mg" in got["dose"]["reason"]
    assert got["precautions"]["met"] is True
    assert got["tone"]["status"] == "needs_model" and "met" not in got["tone"]
    assert (row["n_graded"], row["n_needs_model"], row["graded_by"]) == (5, 1, {"knowledge": 5})
    assert row["score"] == pytest.approx((5 + 2 - 3) / 12) and not row["retry"]
    [(start, end)] = judge.flagged_spans(row)  # the error found: where the note makes it
    assert NOTE[start:end] == "Reports fever."
    lines = judge.verdict_lines(row)
    assert len(lines) == 6 and lines[0]["judge"] == f"rubric:{rubric_file}"


def test_a_judge_name_needs_its_file_and_other_judges_take_none(rubric_file):
    assert parse_judge_names(f"lexical,rubric:{rubric_file}") == [
        "lexical",
        f"rubric:{rubric_file}",
    ]
    with pytest.raises(ConfigError, match="needs a FILE: rubric:FILE"):
        parse_judge_names("rubric")
    with pytest.raises(ConfigError, match="takes no argument"):
        parse_judge_names("omission:x.md")


def grading_server(skip: set[str], level: int | None = None):
    """Replies grading every criterion the request lists, but those in ``skip``."""

    def reply(request: dict) -> Reply:
        text = request["messages"][-1]["content"]
        listed = re.findall(r"^- ([\w-]+):", text.split("Criteria:")[-1], re.M)
        grades = []
        for cid in listed:
            if cid in skip:
                continue
            verdict = {"level": level} if level is not None else {"met": cid != "dose"}
            grades.append({"id": cid, **verdict, "reason": f"read {cid}", "turns": [2, 99]})
        return Reply(json.dumps({"grades": grades}))

    return reply


def llm_judge(stub, path, batch: int = 2):
    settings = LLMSettings(model="stub-rubric", base_url=stub.base_url, max_retries=0)
    judge = judge_of(path, backend="llm", settings=settings)
    judge._context.batch = batch
    return judge


def test_the_model_grades_batches_under_one_shared_prefix(openai_stub, rubric_file):
    openai_stub.script(grading_server(skip=set()))
    judge = llm_judge(openai_stub, rubric_file, batch=2)
    item = Item(id="v", transcript=VISIT, note=NOTE)
    planned, _ = judge.planned_prompts(item)  # what --dry-run counts
    row = asyncio.run(judge.evaluate(item))
    assert len(openai_stub.requests) == len(planned) == 3  # 6 criteria, 2 per call
    assert openai_stub.requests[0]["messages"][-1]["content"] in planned
    prompts = [r["messages"][-1]["content"] for r in openai_stub.requests]
    prefixes = {p.split("Criteria:")[0] for p in prompts}
    assert len(prefixes) == 1 and "T2 [patient] i've had chest pain" in prefixes.pop()
    got = {c["id"]: c for c in row["criteria"]}
    assert got["tone"]["met"] is True and got["tone"]["graded_by"] == "llm"
    assert got["dose"]["met"] is False and got["dose"]["turns"] == [2]  # turn 99 is not there
    assert row["graded_by"] == {"llm": 6} and row["failures"] == [] and not row["retry"]
    assert judge.provenance()["rubric"]["sha256"] == judge.rubric.sha256


def test_a_criterion_missing_from_the_reply_is_asked_again_then_a_parse_failure(
    openai_stub, rubric_file
):
    openai_stub.script(grading_server(skip={"tone"}))
    judge = llm_judge(openai_stub, rubric_file, batch=3)
    row = asyncio.run(judge.evaluate(Item(id="v", transcript=VISIT, note=NOTE)))
    asked_again = openai_stub.requests[-1]["messages"][-1]["content"].split("Criteria:")[-1]
    assert len(openai_stub.requests) == 3 and re.findall(r"^- ([\w-]+):", asked_again, re.M) == [
        "tone"
    ]
    tone = next(c for c in row["criteria"] if c["id"] == "tone")
    assert tone["status"] == "parse_failure" and "met" not in tone
    assert row["n_failed"] == 1 and row["retry"] and row["failures"][0]["id"] == "v:tone"
    assert row["score"] is not None  # the graded criteria still score, the failure is counted


def test_a_criterion_given_on_the_second_asking_is_graded(openai_stub, rubric_file):
    calls = {"n": 0}
    full = grading_server(skip=set())
    shy = grading_server(skip={"tone"})

    def reply(request):
        calls["n"] += 1
        return shy(request) if calls["n"] == 1 else full(request)

    openai_stub.script(reply)
    row = asyncio.run(
        llm_judge(openai_stub, rubric_file, batch=6).evaluate(
            Item(id="v", transcript=VISIT, note=NOTE)
        )
    )
    assert calls["n"] == 2 and row["n_failed"] == 0 and row["n_graded"] == 6


def test_a_level_out_of_range_is_never_kept(openai_stub, tmp_path):
    path = tmp_path / "q.yaml"
    path.write_text(
        "name: q\nmode: scale\nreads: [note]\nscale: {1: bad, 2: fair, 3: good}\n"
        "criteria: [{id: clarity, text: The note is clear}]\n",
        encoding="utf-8",
    )
    openai_stub.script(grading_server(skip=set(), level=7))
    row = asyncio.run(llm_judge(openai_stub, path).evaluate(Item(id="n", transcript="", note=NOTE)))
    assert row["criteria"][0]["status"] == "parse_failure" and row["mean_level"] is None
    openai_stub.script(grading_server(skip=set(), level=3))
    row = asyncio.run(llm_judge(openai_stub, path).evaluate(Item(id="n", transcript="", note=NOTE)))
    assert row["mean_level"] == 3 and row["score"] == 1.0


def test_a_compare_run_resumes_and_judges_again_only_what_failed(openai_stub, tmp_path):
    rubric = tmp_path / "r.md"
    rubric.write_text(RUBRIC.replace("criteria:\n", "criteria_column: own\ncriteria:\n"), "utf-8")
    rows = [
        {
            "id": f"v{i}",
            "transcript": VISIT,
            "note": NOTE,
            "own": json.dumps([{"id": f"x{i}", "text": "t"}]),
        }
        for i in range(3)
    ]
    data_path = tmp_path / "data.jsonl"
    data_path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    data = load_items(data_path)
    openai_stub.script(grading_server(skip={"x1"}))
    judges = {f"rubric:{rubric}": llm_judge(openai_stub, rubric, batch=8)}
    first = run_compare_sync(data, judges, tmp_path / "run")
    summary = first.report["judges"][f"rubric:{rubric}"]
    assert summary["criteria"]["failed"] == 1 and summary["criteria"]["graded_by"] == {"llm": 20}
    assert "parse_failure" in json.dumps(first.report["failures"][f"rubric:{rubric}"])
    before = len(openai_stub.requests)
    openai_stub.script(grading_server(skip=set()))
    again = run_compare_sync(
        data, {f"rubric:{rubric}": llm_judge(openai_stub, rubric, batch=8)}, tmp_path / "run"
    )
    assert len(openai_stub.requests) - before == 1  # only v1, whose criterion x1 failed
    assert again.report["judges"][f"rubric:{rubric}"]["criteria"]["failed"] == 0
    files = {p.name for p in (tmp_path / "run" / "runs").iterdir()}
    assert len(files) == 1 and "/" not in files.pop()


def test_python_evaluate_takes_a_rubric_judge(rubric_file, kb):
    row = evaluate(
        f"rubric:{rubric_file}",
        NOTE,
        source=VISIT,
        options=BuildOptions(backend="offline", knowledge=kb),
    )
    assert row["n_graded"] == 5 and row["score"] == pytest.approx(4 / 12)


def test_a_bad_rubric_on_the_command_line_is_exit_2_and_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: r\ncriteria: [{id: a, text: x, points: lots}]\n", encoding="utf-8")
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "a", "transcript": VISIT, "note": NOTE}) + "\n")
    out = tmp_path / "o"
    result = run("compare", data, "--judges", f"rubric:{bad}", "--backend", "offline", "--out", out)
    assert_one_line_error(result, "criteria[0].points: Input should be a valid number")


def test_the_bundled_rubrics_run_offline_end_to_end_and_reports_show_the_criteria(tmp_path):
    from clinjudge.datasets.loader import eval_sets_dir

    root = eval_sets_dir()
    visit = root / "rubric-visit-demo" / "visit_facts.rubric.md"
    out = tmp_path / "visit"
    result = run(
        "compare",
        root / "rubric-visit-demo",
        "--judges",
        f"rubric:{visit}",
        "--backend",
        "offline",
        "--out",
        out,
    )
    assert result.exit_code == 0, result.output
    assert "criteria graded by knowledge" in result.output
    report = json.loads((out / "report.json").read_text())
    summary = report["judges"][f"rubric:{visit}"]
    assert summary["criteria"]["graded_by"]["knowledge"] > 0 and summary["headline"]["score"]["n"]
    assert "criteria graded by knowledge" in (out / "report.md").read_text()
    csv_text = (out / "claims.csv").read_text()
    assert "met: contradicted: the visit gave metformin" in csv_text
    assert (
        f'"criteria": {{"rubric:{visit}": [{{"id": "no-invented-allergy"'
        in (out / "report.html").read_text()
    )  # the viewer's data: each note's criteria with verdict, reason, turns
    scale = root / "rubric-scale-demo" / "quality.rubric.yaml"
    out = tmp_path / "scale"
    result = run(
        "compare",
        root / "rubric-scale-demo",
        "--judges",
        f"rubric:{scale}",
        "--backend",
        "offline",
        "--out",
        out,
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "report.json").read_text())["judges"][f"rubric:{scale}"]
    assert summary["criteria"]["needs_model"] == summary["criteria"]["n"] == 15
    assert summary["headline"]["score"]["value"] is None  # nothing graded: nothing guessed


def test_malformed_criteria_of_a_row_stop_the_run_in_one_line(tmp_path, rubric_file):
    rubric = tmp_path / "own.md"
    rubric.write_text(RUBRIC.replace("criteria:\n", "criteria_column: own\ncriteria:\n"), "utf-8")
    row = {"id": "a", "transcript": VISIT, "note": NOTE, "own": '[{"id": "z", "points": 1}]'}
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    out = tmp_path / "o"
    result = run(
        "compare", data, "--judges", f"rubric:{rubric}", "--backend", "offline", "--out", out
    )
    assert_one_line_error(result, "item 'a', column 'own', criterion 0: a criterion needs 'text'")


def test_a_rubric_brings_its_own_grader_prompt_and_its_hash(openai_stub, tmp_path):
    (tmp_path / "grader.md").write_text(
        "Grade strictly.\n{{note}}\n{{transcript}}\nCriteria:\n{{criteria}}\n", encoding="utf-8"
    )
    path = tmp_path / "r.md"
    path.write_text(RUBRIC.replace("name: visit-check", "name: visit-check\nprompt: grader.md"))
    openai_stub.script(grading_server(skip=set()))
    judge = llm_judge(openai_stub, path, batch=6)
    row = asyncio.run(judge.evaluate(Item(id="v", transcript=VISIT, note=NOTE)))
    assert openai_stub.requests[0]["messages"][-1]["content"].startswith("Grade strictly.")
    assert row["n_graded"] == 6
    [ref] = judge.provenance()["prompts"]
    assert ref["path"] == str(tmp_path / "grader.md") and ref["version"] == "custom"
    (tmp_path / "grader.md").write_text("{{note}} {{mood}}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="prompt: .*unknown placeholder"):
        llm_judge(openai_stub, path)


def test_a_question_answer_rubric_reads_the_question_and_needs_it(openai_stub, tmp_path):
    path = tmp_path / "qa.yaml"
    path.write_text(
        "name: qa\nreads: [question, answer]\n"
        "criteria: [{id: direct, text: The answer answers the question asked}]\n",
        encoding="utf-8",
    )
    openai_stub.script(grading_server(skip=set()))
    judge = llm_judge(openai_stub, path)
    assert not judge.needs_source
    item = Item(id="q", transcript="", note="Take it with food.", meta={"question": "How?"})
    row = asyncio.run(judge.evaluate(item))
    sent = openai_stub.requests[0]["messages"][-1]["content"]
    assert "How?" in sent and "Answer to grade:" in sent and row["n_graded"] == 1
    data = tmp_path / "qa.jsonl"
    data.write_text(json.dumps({"id": "q", "answer": "Take it with food."}) + "\n")
    result = run("compare", data, "--judges", f"rubric:{path}", "--out", tmp_path / "o")
    assert_one_line_error(result, "has no question (a question, Question, prompt column)")


def test_the_server_is_asked_for_the_batch_ids_and_a_verdict_each(openai_stub, rubric_file):
    openai_stub.script(grading_server(skip=set()))
    judge = llm_judge(openai_stub, rubric_file, batch=4)
    asyncio.run(judge.evaluate(Item(id="v", transcript=VISIT, note=NOTE)))
    schemas = [r["response_format"]["json_schema"]["schema"] for r in openai_stub.requests]
    asked = sorted(s["$defs"]["ReplyGrade"]["properties"]["id"]["enum"] for s in schemas)
    assert asked == [["chest-pain", "no-fever", "fever-flip", "dose"], ["precautions", "tone"]]
    assert sorted(s["properties"]["grades"]["maxItems"] for s in schemas) == [2, 4]
    grade = schemas[0]["$defs"]["ReplyGrade"]
    assert grade["required"] == ["id", "met"] and "level" not in grade["properties"]
