"""Tolerant reply parsing and the plain-text path of StructuredCaller (no HTTP)."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models import FakeListChatModel
from pydantic import BaseModel, Field, ValidationError

from clinjudge.llm import StructuredCaller
from clinjudge.llm_replies import brief_error, describe_exception, parse_tolerant, strip_reply
from clinjudge.prompts import Prompt
from clinjudge.types import ParseFailure


class Item(BaseModel):
    claim_id: str
    tier: int = Field(ge=1, le=5)
    rationale: str = ""


class Out(BaseModel):
    verdicts: list[Item]


VALID = {"verdicts": [{"claim_id": "c1", "tier": 1, "rationale": "said {so} in turn 3 }"}]}


def test_plain_json_reply() -> None:
    parsed, error = parse_tolerant(json.dumps(VALID), Out)
    assert parsed is not None and error == ""
    assert parsed.verdicts[0].rationale == "said {so} in turn 3 }"


def test_braces_inside_strings_and_nesting_are_respected() -> None:
    text = 'Verdict below {see "}" note}: ' + json.dumps(VALID) + " trailing }"
    parsed, _ = parse_tolerant(text, Out)
    assert parsed is not None and parsed.verdicts[0].claim_id == "c1"


def test_wrapper_object_yields_the_nested_valid_object() -> None:
    text = json.dumps({"answer": VALID, "note": "wrapped"})
    parsed, _ = parse_tolerant(text, Out)
    assert parsed is not None and len(parsed.verdicts) == 1


def test_first_object_that_validates_wins() -> None:
    other = {"verdicts": [{"claim_id": "c9", "tier": 4}]}
    text = '{"draft": true} then ' + json.dumps(VALID) + " and " + json.dumps(other)
    parsed, _ = parse_tolerant(text, Out)
    assert parsed is not None and parsed.verdicts[0].claim_id == "c1"


def test_truncated_json_is_rejected_not_repaired() -> None:
    text = json.dumps(VALID)[:-3]
    parsed, error = parse_tolerant(text, Out)
    assert parsed is None
    assert error.startswith("invalid JSON") or error.startswith("schema mismatch")


def test_schema_mismatch_reason_names_the_field() -> None:
    parsed, error = parse_tolerant('{"verdicts": [{"claim_id": "c1", "tier": 7}]}', Out)
    assert parsed is None and "verdicts.0.tier" in error


def test_no_json_at_all() -> None:
    assert parse_tolerant("supported, clearly", Out) == (None, "no JSON object in the reply")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<think>{"verdicts": []}</think>{"a": 1}', '{"a": 1}'),
        ('reasoning {"x": 2}</think>{"a": 1}', '{"a": 1}'),  # opening tag dropped by the server
        ('<think>never finished {"verdicts": []}', ""),  # unclosed: nothing after it is an answer
        ('```json\n{"a": 1}\n```', '{"a": 1}'),
        ('```\n{"a": 1}\n```', '{"a": 1}'),
    ],
)
def test_strip_reply(text: str, expected: str) -> None:
    assert strip_reply(text) == expected


def test_think_block_json_is_not_taken_as_the_answer() -> None:
    decoy = json.dumps({"verdicts": [{"claim_id": "c1", "tier": 5}]})
    parsed, _ = parse_tolerant(f"<think>{decoy}</think>\n{json.dumps(VALID)}", Out)
    assert parsed is not None and parsed.verdicts[0].tier == 1


def test_brief_error_lists_at_most_three_errors() -> None:
    bad = {"verdicts": [{"tier": 0}, {"tier": 9}, {}]}
    with pytest.raises(ValidationError) as info:
        Out.model_validate(bad)
    text = brief_error(info.value)
    assert text.startswith("schema mismatch: ") and text.count(";") == 2 and "more)" in text


def test_describe_exception_is_one_short_line() -> None:
    text = describe_exception(RuntimeError("first line " + "x" * 500 + "\nsecond line"))
    assert text.startswith("RuntimeError: first line") and "second" not in text
    assert len(text) <= len("RuntimeError: ") + 200
    assert describe_exception(TimeoutError()) == "TimeoutError"


def test_describe_exception_names_the_innermost_cause() -> None:
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as inner:
            raise RuntimeError("Connection error.") from inner
    except RuntimeError as exc:
        text = describe_exception(exc)
    cause = "(ConnectionRefusedError: [Errno 111] Connection refused)"
    assert text == f"RuntimeError: Connection error. {cause}"
    assert describe_exception(RuntimeError("x"), limit=5) == "Runt…"
    try:
        try:
            raise RuntimeError("Event loop is closed")
        except RuntimeError as inner:
            raise RuntimeError("Event loop is closed") from inner
    except RuntimeError as exc:
        assert describe_exception(exc) == "RuntimeError: Event loop is closed"  # said once


async def test_chat_model_without_structured_output_uses_plain_path() -> None:
    """Any LangChain chat model works: one lacking json_schema output is asked in plain text."""
    model = FakeListChatModel(responses=["no json here", "ok: " + json.dumps(VALID)])
    caller = StructuredCaller(model, cache=None, model_id="fake", decoding={})
    prompt = Prompt(name="t", version="1", text="Judge {{claims}}", sha256="0" * 64)
    result = await caller.call(prompt, {"claims": "[]"}, Out, key="c1")
    assert isinstance(result, Out) and caller.output_mode == "text"
    assert caller.usage.calls == 2  # first reply had no JSON -> one re-ask


async def test_parse_failure_after_reask_on_plain_model() -> None:
    model = FakeListChatModel(responses=["nope", "still nope"])
    caller = StructuredCaller(model, cache=None, model_id="fake", decoding={})
    prompt = Prompt(name="t", version="1", text="Judge", sha256="0" * 64)
    result = await caller.call(prompt, {}, Out, key="c7")
    assert isinstance(result, ParseFailure)
    assert result.claim_id == "c7" and result.raw == "still nope"
    assert "first reply" in result.reason and "after re-ask" in result.reason


async def test_missing_prompt_variable_is_a_programming_error() -> None:
    caller = StructuredCaller(
        FakeListChatModel(responses=["{}"]), cache=None, model_id="f", decoding={}
    )
    prompt = Prompt(name="t", version="1", text="Judge {{claims}}", sha256="0" * 64)
    with pytest.raises(KeyError, match="claims"):
        await caller.call(prompt, {}, Out, key="c1")
