"""CEF's LLM path for real over HTTP: the real ChatOpenAI against the loopback OpenAI-compatible
server, scripted per prompt kind (generation of each side, self-check, cross-examination), in
both prompt layouts. Questions the generator labels anything but YES, or that their own text
does not answer YES, must never reach the cross-examination (asserted on the recorded
requests); unreadable answers and malformed JSON are counted parse failures, never NO. The
shared layout: every call of an item opens with the same bytes, up to the request; the focused
one: the prompts of before it, byte for byte."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path

import pytest
from openai_stub import HttpError, Reply

from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.llm import LLMSettings

FIXTURES = Path(__file__).parent / "fixtures" / "cef"
DIALOGUE = (FIXTURES / "dialogue.txt").read_text()
SUMMARY = (FIXTURES / "automatic_summary.txt").read_text()

SOURCE_QUESTIONS = [
    ("Does the patient have left hip pain?", "YES", "left hip pain and shoulder pain"),
    ("Does the patient have leg swelling?", "YES", "leg swelling from last couple weeks"),
    ("Does the patient have THYROID dysfunction?", "NO", "What about thyroid dysfunction?"),
    ("Does the patient have HEADACHES daily?", "IDK", ""),
    ("Does the patient deny new skin lesions?", "Yes, she does", "No."),
]
SUMMARY_QUESTIONS = [
    ("Does the patient have shoulder pain?", "YES", "shoulder pain"),
    ("Are there no new skin lesions on the legs?", "YES", "no new skin lesions on the legs"),
]
#: Replies per question (by question text): from its own text, and from the other text.
OWN = {"Does the patient have leg swelling?": "IDK, the text does not say NOT"}
CROSS = {
    "Does the patient have left hip pain?": "Yes — clearly",
    "Does the patient deny new skin lesions?": "No.",
    "Does the patient have shoulder pain?": "Maybe",
    "Are there no new skin lesions on the legs?": "yes",
}


def prompt_text(request: dict) -> str:
    return "\n".join(str(m.get("content", "")) for m in request["messages"])


def between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def about(text: str) -> str:
    """The side a request is about, ``d`` or ``s``: the text the shared layout names ("text A
    alone"), else the one text the focused layout shows."""
    if named := re.search(r"text ([AB]) alone", text):
        return "d" if named.group(1) == "A" else "s"
    return "d" if "Doctor:" in between(text, "<<<", ">>>") else "s"


def kind_of(request: dict) -> str:
    text = prompt_text(request)
    if re.search(r"Write \d+ questions", text):
        return "generate"
    ids = re.findall(r'"id":\s*"([ds]\d+)",\s*"question"', text)
    return "self" if ids and ids[0][0] == about(text) else "cross"


def script(request: dict):
    text = prompt_text(request)
    kind = kind_of(request)
    if kind == "generate":
        items = SOURCE_QUESTIONS if about(text) == "d" else SUMMARY_QUESTIONS
        body = {"questions": [{"question": q, "answer": a, "quote": c} for q, a, c in items]}
        return Reply(json.dumps(body))
    asked = json.loads(re.search(r"[Qq]uestions:\n<<<\n(.*?)\n>>>", text, re.S).group(1))
    table = OWN if kind == "self" else CROSS
    answers = [{"id": q["id"], "answer": table.get(q["question"], "YES")} for q in asked]
    return Reply(json.dumps({"answers": answers}))


def evaluator(stub, **options):
    settings = LLMSettings(model="stub-cef", base_url=stub.base_url, timeout=5.0, max_retries=0)
    return build_evaluator("cef", BuildOptions(backend="llm", settings=settings, options=options))


def evaluate(judge) -> dict:
    return asyncio.run(judge.evaluate(Item(id="mts-16", transcript=DIALOGUE, note=SUMMARY)))


@pytest.mark.parametrize("layout", ["shared", "focused"])
def test_llm_exam_over_http(openai_stub, layout):
    openai_stub.script(script)
    judge = evaluator(openai_stub, layout=layout)
    row = evaluate(judge)
    assert not openai_stub.script_errors
    by_text = {q["question"]: q for q in row["questions"]}

    # the generator's NO / IDK labels: kept in the result, never asked of either text
    for dropped in (
        "Does the patient have THYROID dysfunction?",
        "Does the patient have HEADACHES daily?",
    ):
        assert by_text[dropped]["status"] == "dropped_label"
    asked_prompts = [prompt_text(r) for r in openai_stub.requests if kind_of(r) != "generate"]
    assert asked_prompts and not any("THYROID" in p or "HEADACHES" in p for p in asked_prompts)
    # "Yes, she does" opens with YES: a YES label
    assert by_text["Does the patient deny new skin lesions?"]["status"] == "asked"

    # own answer "IDK, the text does not say NOT" is IDK (not NO): dropped before the exam
    swelling = by_text["Does the patient have leg swelling?"]
    assert swelling["own_answer"] == "IDK" and swelling["status"] == "dropped_self"
    cross_prompts = [prompt_text(r) for r in openai_stub.requests if kind_of(r) == "cross"]
    assert not any("leg swelling?" in p for p in cross_prompts)

    # cross answers: first token decides; "Maybe" is a parse failure, excluded and counted
    assert by_text["Does the patient have left hip pain?"]["cross_answer"] == "YES"
    assert by_text["Does the patient deny new skin lesions?"]["cross_answer"] == "NO"
    shoulder = by_text["Does the patient have shoulder pain?"]
    assert shoulder["status"] == "parse_failure" and shoulder["cross_answer"] is None
    assert row["parse_failures"] == 1
    assert (row["n_source_questions"], row["n_summary_questions"]) == (2, 1)
    assert row["coverage"] == 100.0 and row["conformity"] == 50.0 and row["consistency"] == 100.0
    assert (row["dropped_label_source"], row["dropped_self_source"]) == (2, 1)
    assert row["generated_source"] == 5 and row["generated_summary"] == 2

    # spans: each quote anchored in its own text
    hip = by_text["Does the patient have left hip pain?"]
    assert DIALOGUE[hip["span"][0] : hip["span"][1]] == "left hip pain and shoulder pain"
    assert by_text["Does the patient have HEADACHES daily?"]["span"] is None

    # calls: 2 generations + 2 self-checks + 2 cross batches ≤ 4 + ⌈(10 + 10)/10⌉
    assert len(openai_stub.requests) == 6 <= 4 + math.ceil(20 / 10)
    assert judge.usage()["calls"] == 6
    schema = openai_stub.requests[-1]["response_format"]["json_schema"]["schema"]
    assert "YES" in json.dumps(schema) and "IDK" in json.dumps(schema)  # the enum is sent
    assert row["retry"] is False


def test_malformed_json_is_a_counted_parse_failure_retried_next_run(openai_stub):
    def broken_cross(request):
        if kind_of(request) == "cross":
            return Reply('{"answers": [{"id": "d1", "answer": "YES"')  # truncated JSON
        return script(request)

    openai_stub.script(broken_cross)
    row = evaluate(evaluator(openai_stub))
    asked = [q for q in row["questions"] if q["status"] not in ("dropped_label", "dropped_self")]
    assert asked and all(q["status"] == "parse_failure" for q in asked)
    assert row["parse_failures"] == len(asked) == 4  # d1, d5, s1, s2
    assert row["coverage"] is None and row["consistency"] is None and row["overall"] is None
    # each cross batch: the first reply and one re-ask
    assert sum(1 for r in openai_stub.requests if kind_of(r) == "cross") == 4
    assert row["retry"] is True  # a reply that never parsed is asked again by the next run


def test_failed_calls_are_errors_and_mark_the_row_for_retry(openai_stub):
    def failing(request):
        return HttpError(500) if kind_of(request) == "cross" else script(request)

    openai_stub.script(failing)
    row = evaluate(evaluator(openai_stub, n_source=2, n_summary=1))
    assert row["generated_source"] == 2 and row["generated_summary"] == 1
    assert row["errors"] == row["n_source"] + row["n_summary"] - row["dropped_self_source"]
    assert row["retry"] is True and row["coverage"] is None
