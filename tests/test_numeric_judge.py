"""The numeric-answer judge (SPEC §7), added through the judge kit: the offline reader of final
values, the 5% / exact checks, the registry and CLI help that list it, a compare run, and the
LLM path over HTTP with a reply that cannot be parsed."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from openai_stub import Reply, sequence
from typer.testing import CliRunner

from clinjudge.cli import app
from clinjudge.compare import run_compare_sync
from clinjudge.datasets import load_items
from clinjudge.datasets.items import Item
from clinjudge.errors import ConfigError
from clinjudge.evaluators import BuildOptions, build_evaluator, judge, registry
from clinjudge.judges.numeric_answer import find_answer, normalise_truth, target_kind
from clinjudge.llm import LLMSettings

CLEARANCE = (
    "Creatinine clearance = ((140 - 53) * 77.08 * 1) / (1.39 * 72) = 67.0 mL/min. "
    "Hence, the patient's creatinine clearance is 67.0 mL/min."
)


@pytest.mark.parametrize(
    ("text", "kind", "value", "how"),
    [
        (CLEARANCE, "number", "67.0", "marked"),
        ("One point for age. The CHA2DS2-VASc score is 3.", "number", "3", "marked"),
        ('{"step_by_step_thinking": "2 + 1 = 3", "answer": "4"}', "number", "4", "json"),
        ("Adding 2 weeks, conception was on 01/21/2017.", "date", "01/21/2017", "last"),
        ("Hence, the estimated due date is 12/02/2000.", "date", "12/02/2000", "marked"),
        ("The gestational age is 34 weeks and 3 days.", "weeks_days", "(34, 3)", "marked"),
        ("Total dose: 1,200 mg", "number", "1200", "marked"),
        ("Sodium corrected, then 131.5", "number", "131.5", "last"),
        ("Hence, the GFR is 36.95 mL/min/1.73 m².", "number", "36.95", "marked"),
        ("The BMI is 68 kg / (1.82 m)^2 = 20.53 kg/m^2.", "number", "20.53", "marked"),
    ],
)
def test_the_final_value_is_read_where_the_answer_states_it(text, kind, value, how):
    found = find_answer(text, kind)
    assert found is not None and (found.value, found.how) == (value, how)
    assert text[found.start : found.end].replace(",", "").startswith(value.strip("()")[:2])


def test_digits_inside_names_are_not_values_and_no_value_is_none():
    assert find_answer("The CHA2DS2-VASc score cannot be computed.", "number") is None
    assert target_kind("('34 weeks', '3 days')") == "weeks_days"
    assert normalise_truth("('34 weeks', '3 days')", "weeks_days") == "(34, 3)"
    assert target_kind("12/02/2000") == "date" and target_kind("2.5") == "number"


def numeric(**options):
    return build_evaluator("numeric", BuildOptions(backend="offline", options=options))


def judged(judge, note: str, truth: str, output_type: str | None = None) -> dict:
    meta = {"truth": truth} | ({"output_type": output_type} if output_type else {})
    return asyncio.run(judge.evaluate(Item(id="q", transcript="", note=note, meta=meta)))


def test_continuous_answers_pass_within_five_percent_and_discrete_ones_only_exactly():
    judge = numeric()
    assert judged(judge, CLEARANCE, "67.00495", "decimal")["correct"] is True
    assert judged(judge, "The clearance is 70.6 mL/min.", "67.00495", "decimal")["correct"] is False
    assert judged(judge, "The score is 3.", "2", "integer")["correct"] is False
    assert judged(judge, "The score is 2.", "2", "integer")["correct"] is True
    # a zero truth: the stated absolute tolerance (0.05), not a relative one
    assert judged(judge, "The change is 0.04.", "0.0", "decimal")["correct"] is True
    assert judged(numeric(rel_tol=0.10), "It is 70.6.", "67.0", "decimal")["correct"] is True


def test_a_wrong_answer_is_flagged_at_its_value_and_a_silent_one_is_wrong():
    judge = numeric()
    note = "Two points for hypertension. The CHA2DS2-VASc score is 5."
    row = judged(judge, note, "4", "integer")
    [(start, end)] = judge.flagged_spans(row)
    assert note[start:end] == "5"
    silent = judged(judge, "I cannot compute the score from this note.", "4", "integer")
    assert silent["correct"] is False and silent["answer"] is None
    summary = judge.summarize([row, silent, judged(judge, "It is 4.", "4")])
    assert summary["headline"]["accuracy"]["value"] == pytest.approx(1 / 3)
    assert summary["headline"]["accuracy"]["n"] == 3 and summary["excluded"] == 0


def test_bad_settings_and_missing_truth_are_one_line_errors():
    with pytest.raises(ConfigError, match="unknown numeric option 'tolerance'"):
        numeric(tolerance=0.1)
    with pytest.raises(ConfigError, match="needs a 'truth' column"):
        judged(numeric(), "It is 4.", "")


def test_the_registry_lists_every_judge_and_the_cli_help_is_generated_from_it():
    names = list(registry())
    assert names[:2] == ["lexical", "inference-aware"]
    assert {"cef", "factcheck", "numeric"} <= set(names)
    wide = {"COLUMNS": "2000", "TERMINAL_WIDTH": "2000"}
    output = CliRunner().invoke(app, ["compare", "--help"], env=wide).output
    help_text = " ".join(output.replace("│", " ").split())
    for name, entry in registry().items():  # a judge built from a file shows it: rubric:FILE
        shown = f"{name}:{entry.argument}" if entry.argument else name
        assert f"{shown} (" in help_text
    with pytest.raises(ValueError, match="registered twice"):
        judge("numeric", summary="another")(lambda options: None)


def test_listing_the_judges_loads_no_langgraph_nor_torch():
    code = (
        "import sys; from clinjudge.evaluators import registry; registry(); "
        "print(sorted(m for m in ('langgraph', 'torch', 'langchain_core') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_compare_reports_accuracy_over_a_medcalc_style_file(tmp_path):
    rows = [
        {
            "id": "a",
            "answer": CLEARANCE,
            "Ground Truth Answer": "67.00495",
            "Output Type": "decimal",
        },
        {
            "id": "b",
            "answer": "The score is 3.",
            "Ground Truth Answer": "2",
            "Output Type": "integer",
        },
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_items(path, require_source=False)
    run_compare_sync(data, {"numeric": numeric()}, tmp_path / "out", concurrency=1)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    accuracy = report["judges"]["numeric"]["headline"]["accuracy"]
    assert accuracy["value"] == 0.5 and accuracy["n"] == 2


def test_llm_path_reads_the_value_and_records_an_unparsable_reply(openai_stub):
    openai_stub.script(
        sequence(
            Reply(json.dumps({"answer": "67.0", "quote": "clearance is 67.0 mL/min"})),
            Reply("The final answer appears to be sixty-seven."),
            Reply("Still prose, no JSON."),
        )
    )
    settings = LLMSettings(model="stub-numeric", base_url=openai_stub.base_url, max_retries=0)
    judge = build_evaluator("numeric", BuildOptions(backend="llm", settings=settings))
    item = Item(id="q", transcript="", note=CLEARANCE, meta={"truth": "67.00495"})

    async def twice():  # one event loop: the HTTP client lives in it
        return await judge.evaluate(item), await judge.evaluate(item)

    good, bad = asyncio.run(twice())
    assert good["correct"] is True and good["answer"]["how"] == "llm"
    assert CLEARANCE[good["answer"]["start"] : good["answer"]["end"]] == "clearance is 67.0 mL/min"
    assert bad["correct"] is None and bad["retry"], bad["failure"]
    assert bad["failure"]["kind"] == "parse_failure"
    summary = judge.summarize([good, bad])
    accuracy = summary["headline"]["accuracy"]
    assert (accuracy["value"], accuracy["n"]) == (1.0, 1)
    assert summary["excluded"] == 1 and len(openai_stub.requests) == 3
    assert judge.provenance()["prompts"][0]["name"] == "numeric.final_answer"


def test_a_dataset_without_truth_is_refused_before_anything_is_judged(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"id": "a", "answer": "The score is 3."}) + "\n")
    data = load_items(path, require_source=False)
    with pytest.raises(ConfigError, match="item 'a' has no truth .* which judge 'numeric' needs"):
        run_compare_sync(data, {"numeric": numeric()}, tmp_path / "out", concurrency=1)
    assert not (tmp_path / "out").exists()
