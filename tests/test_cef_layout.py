"""CEF's prompt layouts (issue 38) over HTTP, the real ChatOpenAI against the loopback server:
``shared`` opens every call of an item with the same bytes -- instructions, both texts -- and
names at the end the one text a call is about; ``focused`` sends the prompts of before the
layouts, byte for byte; a bad layout is a one-line error with exit code 2."""

from __future__ import annotations

import json
import os
import re

import pytest
from cli_helpers import assert_one_line_error, run
from openai_stub import Reply
from test_cef_llm import (
    DIALOGUE,
    SUMMARY,
    about,
    evaluate,
    evaluator,
    kind_of,
    prompt_text,
    script,
)

from clinjudge.cef.llm_backend import stand_in_questions
from clinjudge.datasets.items import Item
from clinjudge.errors import ConfigError
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.prompts import load_prompt

#: sha256 of the CEF prompt files before the layouts (main at 728aa0c): ``focused`` sends them.
FOCUSED_FILES = {
    "cef.generate_questions": "5b17ce8b7b9b0b7395c38dd81efecd17f8fdd7d0cbcd76b93671d49f1fc3e041",
    "cef.answer_questions": "30a7020846f76445b177a5d32e2382a3c1bf114913fe1b617cf39fcf45492aed",
}


def shared_prefix(texts: list[str]) -> str:
    return os.path.commonprefix(texts)


def test_every_call_of_an_item_opens_with_the_same_instructions_and_both_texts(openai_stub):
    openai_stub.script(script)
    judge = evaluator(openai_stub, layout="shared")
    row = evaluate(judge)
    assert not openai_stub.script_errors and row["n_source_questions"] == 2
    prompts = [prompt_text(r) for r in openai_stub.requests]
    kinds = [kind_of(r) for r in openai_stub.requests]
    assert sorted(kinds) == ["cross", "cross", "generate", "generate", "self", "self"]

    prefix = shared_prefix(prompts)
    # both texts whole (the data ends its block) and every instruction before the request
    assert DIALOGUE in prefix and SUMMARY in prefix
    assert prefix.index(DIALOGUE) < prefix.index(SUMMARY) < prefix.rindex(">>>")
    assert '{"questions": [' in prefix and '{"answers": [' in prefix
    assert prefix.endswith("Request, task ")
    for text in prompts:
        tail = text[len(prefix) :]
        assert len(tail) < 0.2 * len(text)  # what differs is small and last
        assert DIALOGUE.strip()[:200] not in tail and SUMMARY.strip()[:200] not in tail

    # each call names the one text it is about: its own for generation and self-check, the
    # other for the cross-examination
    named = sorted(
        (kind, (re.findall(r'"id": "([ds])\d+", "question"', text) or ["-"])[0], name)
        for text, kind in zip(prompts, kinds, strict=True)
        for name in re.findall(r"text ([AB]) alone", text)[-1:]
    )
    assert named == [
        ("cross", "d", "B"),  # source questions answered from the summary
        ("cross", "s", "A"),
        ("generate", "-", "A"),
        ("generate", "-", "B"),
        ("self", "d", "A"),
        ("self", "s", "B"),
    ]
    refs = {p["name"] for p in judge.provenance()["prompts"]}
    assert refs == {"cef.shared_generate", "cef.shared_answer"}
    assert judge.provenance()["layout"] == "shared"


def test_focused_layout_sends_the_prompts_of_before_byte_for_byte(openai_stub):
    openai_stub.script(script)
    judge = evaluator(openai_stub, layout="focused")
    evaluate(judge)
    refs = {p["name"]: p["sha256"] for p in judge.provenance()["prompts"]}
    assert refs == FOCUSED_FILES
    prompts = [prompt_text(r) for r in openai_stub.requests]
    generate = load_prompt("cef.generate_questions")
    kind = "source text (for example a doctor–patient conversation or a clinical document)"
    assert generate.render(kind=kind, n=10, text=DIALOGUE) in prompts
    # a self-check of the source questions: the old indented JSON list, the dialogue alone
    asked = [
        {"id": "d1", "question": "Does the patient have left hip pain?"},
        {"id": "d2", "question": "Does the patient have leg swelling?"},
        {"id": "d5", "question": "Does the patient deny new skin lesions?"},
    ]
    answer = load_prompt("cef.answer_questions")
    expected = answer.render(text=DIALOGUE, questions=json.dumps(asked, indent=1))
    assert expected in prompts
    assert not any(SUMMARY.strip()[:200] in p and DIALOGUE.strip()[:200] in p for p in prompts)


def test_a_bad_layout_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="layout must be shared or focused"):
        build_evaluator("cef", BuildOptions(backend="offline", options={"layout": "wide"}))
    result = run(
        "compare", "mts-demo", "--judges", "cef", "--backend", "offline", "--limit", "1",
        "--option", "cef.layout=wide", "--out", tmp_path / "run",
    )  # fmt: skip
    assert_one_line_error(result, "layout must be shared or focused (got 'wide')")


def test_shared_layout_reply_shapes_stay_small(openai_stub):
    """The answer schema is sent as a JSON schema (YES/NO/IDK enum) and asks no echo: an
    answer is an id and a label."""
    openai_stub.script(script)
    evaluate(evaluator(openai_stub))
    answer_calls = [r for r in openai_stub.requests if kind_of(r) != "generate"]
    schema = answer_calls[0]["response_format"]["json_schema"]["schema"]
    item = schema["$defs"]["AnswerItem"]["properties"]
    assert set(item) == {"id", "answer"} and item["answer"]["enum"] == ["YES", "NO", "IDK"]


@pytest.mark.parametrize(("backend", "layout"), [("local", "focused"), ("llm", "focused")])
def test_default_layout_is_focused_on_every_backend(backend, layout):
    """On the local 1.5B model the shared layout let the source answer for the summary, and on
    a hosted API it costs more (:data:`clinjudge.cef.llm_backend.DEFAULT_LAYOUT`); an explicit
    layout wins."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from clinjudge.cef.factory import build_cef

    model = FakeListChatModel(responses=["{}"])
    setup = build_cef(backend, chat_model=model)
    assert setup.provenance["layout"] == layout and setup.backend.layout == layout
    names = {p.name for p in setup.prompts}
    assert names == ({"cef.generate_questions", "cef.answer_questions"} if layout == "focused"
                     else {"cef.shared_generate", "cef.shared_answer"})  # fmt: skip
    other = "shared" if layout == "focused" else "focused"
    assert build_cef(backend, chat_model=model, layout=other).provenance["layout"] == other


def stand_in_script(request: dict):
    """Every question the generator is asked for, worded as the estimate's stand-ins for its
    text and labelled YES; every answer YES: the run an estimate bounds."""
    text = prompt_text(request)
    if kind_of(request) == "generate":
        n = int(re.search(r"Write (\d+) questions", text).group(1))
        own = DIALOGUE if about(text) == "d" else SUMMARY
        asked = [{"question": q, "answer": "YES"} for q in stand_in_questions(own, n)]
        return Reply(json.dumps({"questions": asked}))
    asked = re.findall(r'"id":\s*"([ds]\d+)"', text)
    return Reply(json.dumps({"answers": [{"id": i, "answer": "YES"} for i in asked]}))


@pytest.mark.parametrize("layout", ["shared", "focused"])
def test_the_estimate_builds_the_prompts_of_a_run_that_keeps_every_question(openai_stub, layout):
    """``compare --dry-run`` for CEF: its bound is the run in which every question is kept and
    confirmed; when the model's questions read as the stand-in, the prompts are the same."""
    openai_stub.script(stand_in_script)
    judge = evaluator(openai_stub, layout=layout, n_source=12, n_summary=3)
    item = Item(id="mts-16", transcript=DIALOGUE, note=SUMMARY)
    planned, caveat = judge.planned_prompts(item)
    row = evaluate(judge)
    assert not openai_stub.script_errors and row["n_source_questions"] == 12
    sent = [prompt_text(r) for r in openai_stub.requests]
    assert len(planned) == 2 + 2 + 2 + 1  # generations, self-checks, ⌈12/10⌉ + ⌈3/10⌉ cross
    assert sorted(planned) == sorted(sent)
    assert "upper bound" in caveat


def test_an_offline_cef_plans_no_prompt():
    judge = build_evaluator("cef", BuildOptions(backend="offline"))
    assert judge.planned_prompts(Item(id="x", transcript=DIALOGUE, note=SUMMARY)) is None
