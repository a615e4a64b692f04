"""``--option rubric.KEY=VALUE`` (issue 39): criteria per model call (``batch_size``) and fact
criteria graded by the knowledge reading or by the model (``offline_facts``), checked on build
(exit 2, one line) and part of the judge's identity."""

from __future__ import annotations

import asyncio

import pytest
import test_rubric_judge as base
from cli_helpers import assert_one_line_error, run

from clinjudge.cli.common import judge_options
from clinjudge.datasets.items import Item
from clinjudge.errors import ConfigError
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture
def rubric_file(tmp_path):
    path = tmp_path / "visit.rubric.md"
    path.write_text(base.RUBRIC, encoding="utf-8")
    return path


def on_model(stub, path, kb=None, **options):
    settings = LLMSettings(model="stub-rubric", base_url=stub.base_url, max_retries=0)
    build = BuildOptions(backend="llm", settings=settings, knowledge=kb, options=options)
    return build_evaluator(f"rubric:{path}", build)


def test_an_option_named_rubric_reaches_every_rubric_judge():
    names = ["rubric:a.md", "lexical", "rubric:b.md"]
    parsed = judge_options(["rubric.batch_size=4", "rubric.offline_facts=on"], names)
    assert parsed == {
        "rubric:a.md": {"batch_size": 4, "offline_facts": "on"},
        "rubric:b.md": {"batch_size": 4, "offline_facts": "on"},
    }


def test_batch_size_sets_the_criteria_per_call(openai_stub, rubric_file):
    openai_stub.script(base.grading_server(skip=set()))
    judge = on_model(openai_stub, rubric_file, batch_size=4)
    row = asyncio.run(judge.evaluate(Item(id="v", transcript=base.VISIT, note=base.NOTE)))
    assert len(openai_stub.requests) == 2 and row["graded_by"] == {"llm": 6}
    assert judge.identity()["options"] == {"batch_size": 4}
    other = on_model(openai_stub, rubric_file, batch_size=1)
    assert other.identity() != judge.identity()  # a run is not resumed under other settings


def test_offline_facts_on_a_model_grades_facts_by_knowledge_and_asks_only_the_rest(
    openai_stub, rubric_file, kb
):
    openai_stub.script(base.grading_server(skip=set()))
    judge = on_model(openai_stub, rubric_file, kb=kb, offline_facts="on")
    item = Item(id="v", transcript=base.VISIT, note=base.NOTE)
    planned, _ = judge.planned_prompts(item)
    row = asyncio.run(judge.evaluate(item))
    assert len(openai_stub.requests) == len(planned) == 1
    assert "- tone:" in openai_stub.requests[0]["messages"][-1]["content"]
    assert "- dose:" not in openai_stub.requests[0]["messages"][-1]["content"]
    assert row["graded_by"] == {"knowledge": 5, "llm": 1}
    got = {c["id"]: c for c in row["criteria"]}
    assert got["dose"]["met"] is False and got["dose"]["graded_by"] == "knowledge"  # 850 ≠ 500
    assert "knowledge" in judge.provenance()


def test_offline_facts_off_offline_leaves_every_criterion_to_a_model(rubric_file, kb):
    build = BuildOptions(backend="offline", knowledge=kb, options={"offline_facts": "off"})
    judge = build_evaluator(f"rubric:{rubric_file}", build)
    row = asyncio.run(judge.evaluate(Item(id="v", transcript=base.VISIT, note=base.NOTE)))
    assert row["n_needs_model"] == 6 and row["n_graded"] == 0 and row["score"] is None


@pytest.mark.parametrize(
    ("option", "needle"),
    [
        ("rubric.batch_size=0", "rubric.batch_size must be a whole number ≥ 1, got 0"),
        ("rubric.batch_size=two", "rubric.batch_size must be a whole number ≥ 1, got 'two'"),
        ("rubric.offline_facts=maybe", "rubric.offline_facts must be on or off, got 'maybe'"),
        ("rubric.batch=4", "unknown rubric option 'batch': use batch_size, file, offline_facts"),
    ],
)
def test_a_bad_rubric_option_is_exit_2_and_one_line(tmp_path, rubric_file, option, needle):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "v", "transcript": "[doctor] hi", "note": "Hi."}\n')
    judges = f"rubric:{rubric_file}"
    result = run("compare", data, "--judges", judges, "--option", option, "--out", tmp_path / "out")
    assert_one_line_error(result, needle)
    with pytest.raises(ConfigError):
        key, _, value = option.partition("=")
        build_evaluator(judges, BuildOptions(options={key.split(".")[1]: value}))
