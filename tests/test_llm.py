"""StructuredCaller, ResponseCache and settings, driving the real ChatOpenAI against the loopback
OpenAI-compatible stub (tests/openai_stub.py). No LLM, no network beyond 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from openai_stub import (
    Delay,
    HttpError,
    OpenAIStub,
    Reply,
    llama_cpp_server,
    rate_limited,
    sequence,
)
from pydantic import BaseModel, Field

from clinjudge.llm import LLMSettings, StructuredCaller, make_chat_model
from clinjudge.llm_cache import ResponseCache
from clinjudge.prompts import Prompt, load_prompt
from clinjudge.types import CallError, ParseFailure

KEY = "sk-test-SECRET-0123456789"
GOOD = {"verdicts": [{"claim_id": "c1", "tier": 2, "rationale": "Zestril is lisinopril {brand}"}]}


class Item(BaseModel):
    claim_id: str
    tier: int = Field(ge=1, le=5)
    rationale: str


class Out(BaseModel):
    verdicts: list[Item]


PROMPT = Prompt(name="test.judge", version="1", text="Judge {{claims}} now.", sha256="a" * 64)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CLINJUDGE_MODEL", "CLINJUDGE_SEED"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path / "default-cache"))


def settings_for(stub: OpenAIStub, **overrides: object) -> LLMSettings:
    values: dict[str, object] = {
        "model": "stub-model",
        "base_url": stub.base_url,
        "timeout": 5.0,
        "max_retries": 0,
    }
    values.update(overrides)
    return LLMSettings(**values)


def caller_for(stub: OpenAIStub, cache: ResponseCache | None = None, **overrides: object):
    return StructuredCaller.from_settings(settings_for(stub, **overrides), cache=cache)


async def call(caller: StructuredCaller, prompt: Prompt = PROMPT, claims: str = "[c1]"):
    return await caller.call(prompt, {"claims": claims}, Out, key="c1")


async def test_valid_json_is_parsed_with_schema_first(openai_stub: OpenAIStub) -> None:
    openai_stub.script(lambda _r: json.dumps(GOOD))
    caller = caller_for(openai_stub)
    result = await call(caller)
    assert isinstance(result, Out)
    assert result.verdicts[0].tier == 2
    assert result.verdicts[0].rationale.endswith("{brand}")
    (request,) = openai_stub.requests
    assert request["response_format"]["type"] == "json_schema"
    assert "verdicts" in json.dumps(request["response_format"]["json_schema"]["schema"])
    assert request["messages"][-1]["content"] == "Judge [c1] now."
    assert caller.usage.as_dict() == {
        "calls": 1,
        "cache_hits": 0,
        "input_tokens": 10,
        "cached_input_tokens": 0,
        "output_tokens": 5,
        "parse_failures": 0,
        "errors": 0,
        "output_modes": {"json_schema": 1},
    }


async def test_prose_with_embedded_json_parsed_by_tolerant_path(openai_stub: OpenAIStub) -> None:
    reply = (
        '<think>maybe {"verdicts": []} ... no</think>Sure! Here is my answer {not json}:\n'
        "```json\n" + json.dumps(GOOD) + "\n```\nHope this helps {:}."
    )
    openai_stub.script(lambda _r: reply)
    caller = caller_for(openai_stub)
    result = await call(caller)
    assert isinstance(result, Out) and result.verdicts[0].claim_id == "c1"
    assert len(openai_stub.requests) == 1  # no re-ask needed


async def test_prose_without_json_reasks_once_then_parse_failure(openai_stub: OpenAIStub) -> None:
    openai_stub.script(lambda _r: "The claim looks supported to me.")
    caller = caller_for(openai_stub)
    result = await call(caller)
    assert isinstance(result, ParseFailure)
    assert result.claim_id == "c1"
    assert result.raw == "The claim looks supported to me."
    assert "no JSON object" in result.reason
    assert len(openai_stub.requests) == 2
    reask = openai_stub.requests[1]["messages"]
    assert [m["role"] for m in reask] == ["user", "assistant", "user"]
    assert "only one JSON object" in reask[-1]["content"]
    assert '"verdicts"' in reask[-1]["content"]  # the schema is quoted
    assert caller.usage.calls == 2 and caller.usage.parse_failures == 1


async def test_reask_can_recover(openai_stub: OpenAIStub) -> None:
    openai_stub.script(sequence("no idea", json.dumps(GOOD)))
    caller = caller_for(openai_stub)
    assert isinstance(await call(caller), Out)
    assert len(openai_stub.requests) == 2 and caller.usage.parse_failures == 0


@pytest.mark.parametrize(
    "reply",
    [
        '{"verdicts": [{"claim_id": "c1", "tier": 2, "rationale": "cut off',  # truncated
        '{"verdicts": [{"claim_id": "c1", "tier": 9, "rationale": "x"}]}',  # tier out of range
        "{'verdicts': []}",  # not JSON (python repr)
    ],
)
async def test_malformed_or_truncated_json_gives_parse_failure(
    openai_stub: OpenAIStub, reply: str
) -> None:
    openai_stub.script(lambda _r: reply)
    result = await call(caller_for(openai_stub))
    assert isinstance(result, ParseFailure)
    assert result.raw == reply
    assert len(openai_stub.requests) == 2


async def test_raw_of_parse_failure_is_capped(openai_stub: OpenAIStub) -> None:
    openai_stub.script(lambda _r: "x" * 5000)
    result = await call(caller_for(openai_stub))
    assert isinstance(result, ParseFailure) and len(result.raw) == 2000


async def test_429_then_success_is_retried_by_the_sdk(openai_stub: OpenAIStub) -> None:
    openai_stub.script(sequence(rate_limited(), json.dumps(GOOD)))
    caller = caller_for(openai_stub, max_retries=1)
    assert isinstance(await call(caller), Out)
    assert len(openai_stub.requests) == 2
    assert caller.usage.calls == 1  # SDK retries are below the caller's accounting


async def test_persistent_500_gives_call_error(openai_stub: OpenAIStub) -> None:
    openai_stub.script(lambda _r: HttpError(500, "boom"))
    caller = caller_for(openai_stub, max_retries=1)
    result = await call(caller)
    assert isinstance(result, CallError)
    assert result.claim_id == "c1"
    assert "Error" in result.reason and "500 - boom" in result.reason
    assert len(openai_stub.requests) == 2  # first try + one SDK retry
    assert caller.usage.errors == 1 and caller.usage.parse_failures == 0


async def test_delay_longer_than_timeout_gives_call_error_quickly(openai_stub: OpenAIStub) -> None:
    openai_stub.script(lambda _r: Delay(3.0, json.dumps(GOOD)))
    caller = caller_for(openai_stub, timeout=0.5, max_retries=0)
    started = time.perf_counter()
    result = await call(caller)
    elapsed = time.perf_counter() - started
    assert isinstance(result, CallError)
    assert "TimeoutError" in result.reason
    assert elapsed < 2.0


def response_format(request: dict) -> str | None:
    return (request.get("response_format") or {}).get("type")


async def test_llama_cpp_server_500_moves_to_json_object_with_the_schema(
    openai_stub: OpenAIStub,
) -> None:
    """llama-cpp-python answers json_schema with HTTP 500 naming response_format: the caller
    asks again with json_object + schema, and the endpoint keeps that dialect."""
    openai_stub.script(llama_cpp_server(lambda _r: json.dumps(GOOD)))
    caller = caller_for(openai_stub, max_retries=1)
    assert isinstance(await call(caller, claims="[a]"), Out)
    assert isinstance(await call(caller, claims="[b]"), Out)
    sent = [response_format(r) for r in openai_stub.requests]
    assert sent == ["json_schema", "json_schema", "json_object", "json_object"]  # 1 SDK retry
    assert openai_stub.requests[-1]["response_format"]["schema"] == Out.model_json_schema()
    assert '"verdicts"' in openai_stub.requests[-1]["messages"][-1]["content"]  # schema in prompt
    assert caller.output_mode == "json_object"
    assert caller.usage.output_modes == {"json_object": 2}
    assert caller.usage.calls == 3 and caller.usage.errors == 0
    other = caller_for(openai_stub)  # another judge on the same endpoint asks right away
    assert isinstance(await call(other, claims="[c]"), Out)
    assert response_format(openai_stub.requests[-1]) == "json_object"


async def test_a_prompts_schema_slot_keeps_the_schema_in_the_shared_prefix(
    openai_stub: OpenAIStub,
) -> None:
    """Issue 38: a prompt with the schema slot gets the schema there (before its data, in the
    prefix its calls share), in the first ask and in the re-ask's history alike; in the
    json_schema dialect the slot is removed."""
    slotted = Prompt(
        name="test.slot", version="1", text="Judge.\n[[answer schema]]\n{{claims}}", sha256="c" * 64
    )
    replies = iter(["not json", json.dumps(GOOD)])
    openai_stub.script(llama_cpp_server(lambda _r: next(replies, json.dumps(GOOD))))
    caller = caller_for(openai_stub)
    assert isinstance(await call(caller, slotted, claims="[a]"), Out)
    first, reask = [r["messages"] for r in openai_stub.requests if response_format(r)][-2:]
    for messages in (first, reask):
        text = messages[0]["content"]
        assert "[[answer schema]]" not in text
        assert text.index('"verdicts"') < text.index("[a]")  # the schema before the data
        assert text.endswith("[a]")
    assert caller.rendered(slotted, {"claims": "[b]"}, Out.model_json_schema()).endswith("[b]")
    openai_stub.script(lambda _r: json.dumps(GOOD))
    other = caller_for(openai_stub, model="another")
    assert isinstance(await call(other, slotted, claims="[c]"), Out)
    assert openai_stub.requests[-1]["messages"][0]["content"] == "Judge.\n\n[c]"


async def test_server_refusing_every_response_format_is_asked_in_plain_text(
    openai_stub: OpenAIStub,
) -> None:
    def reply(request: dict) -> object:
        if "response_format" in request:
            return HttpError(400, f"response_format {response_format(request)} is not supported")
        return "Verdicts follow: " + json.dumps(GOOD)

    openai_stub.script(reply)
    caller = caller_for(openai_stub)
    assert isinstance(await call(caller, claims="[a]"), Out)
    assert isinstance(await call(caller, claims="[b]"), Out)
    sent = [response_format(r) for r in openai_stub.requests]
    assert sent == ["json_schema", "json_object", None, None]  # the fallback is remembered
    plain = openai_stub.requests[-1]["messages"][-1]["content"]
    assert plain.startswith("Judge [b] now.") and '"verdicts"' in plain  # the schema, in words
    assert caller.output_mode == "text" and caller.usage.output_modes == {"text": 2}


async def test_a_422_naming_response_format_moves_on_too(openai_stub: OpenAIStub) -> None:
    """A server that knows only JSON mode (text-generation-inference's wording)."""

    def reply(request: dict) -> object:
        if response_format(request) == "json_schema":
            return HttpError(
                422,
                "Failed to deserialize the JSON body into the target type: response_format: "
                "unknown variant `json_schema`, expected `json_object`",
            )
        return json.dumps(GOOD)

    openai_stub.script(reply)
    caller = caller_for(openai_stub)
    assert isinstance(await call(caller), Out)
    assert [response_format(r) for r in openai_stub.requests] == ["json_schema", "json_object"]


@pytest.mark.parametrize("status", [400, 422, 500])
async def test_an_error_not_naming_response_format_keeps_the_dialect(
    openai_stub: OpenAIStub, status: int
) -> None:
    openai_stub.script(lambda _r: HttpError(status, "context length exceeded"))
    caller = caller_for(openai_stub)
    result = await call(caller)
    assert isinstance(result, CallError) and f"{status} - context length" in result.reason
    assert caller.output_mode == "json_schema"  # not blamed on response_format
    assert [response_format(r) for r in openai_stub.requests] == ["json_schema"]


async def test_a_reply_cut_off_at_the_token_limit_is_a_parse_failure(
    openai_stub: OpenAIStub,
) -> None:
    cut = Reply('{"verdicts": [{"claim_id": "c1", "tier": 2, "rat', finish_reason="length")
    openai_stub.script(lambda _r: cut)
    caller = caller_for(openai_stub)
    result = await call(caller)
    assert isinstance(result, ParseFailure)
    assert "cut off at the token limit" in result.reason and result.raw == cut.content
    assert caller.usage.errors == 0 and len(openai_stub.requests) == 2  # with its re-ask


async def test_cache_hit_sends_no_request(openai_stub: OpenAIStub, tmp_path: Path) -> None:
    openai_stub.script(lambda _r: json.dumps(GOOD))
    cache = ResponseCache(tmp_path / "c.sqlite")
    first = caller_for(openai_stub, cache=cache)
    assert isinstance(await call(first), Out)
    assert len(openai_stub.requests) == 1 and len(cache) == 1
    # a new caller over the same file (a re-run): served from the cache
    again = caller_for(openai_stub, cache=ResponseCache(tmp_path / "c.sqlite"))
    result = await call(again)
    assert (
        isinstance(result, Out) and result.verdicts[0].rationale == GOOD["verdicts"][0]["rationale"]
    )
    assert len(openai_stub.requests) == 1
    assert again.usage.cache_hits == 1 and again.usage.calls == 0


async def test_cache_misses_on_other_decoding_prompt_or_input(
    openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    openai_stub.script(lambda _r: json.dumps(GOOD))
    cache = ResponseCache(tmp_path / "c.sqlite")
    await call(caller_for(openai_stub, cache=cache))
    await call(caller_for(openai_stub, cache=cache, temperature=0.7))
    edited = PROMPT.model_copy(update={"sha256": "b" * 64})
    await call(caller_for(openai_stub, cache=cache), prompt=edited)
    await call(caller_for(openai_stub, cache=cache), claims="[c2]")
    await call(caller_for(openai_stub, cache=cache, model="other-model"))
    assert len(openai_stub.requests) == 5
    assert len(cache) == 5


async def test_failures_are_not_cached(openai_stub: OpenAIStub, tmp_path: Path) -> None:
    openai_stub.script(lambda _r: "prose only")
    cache = ResponseCache(tmp_path / "c.sqlite")
    caller = caller_for(openai_stub, cache=cache)
    assert isinstance(await call(caller), ParseFailure)
    assert isinstance(await call(caller), ParseFailure)
    assert len(cache) == 0
    assert len(openai_stub.requests) == 4


async def test_usage_adds_up_over_a_mixed_run(openai_stub: OpenAIStub, tmp_path: Path) -> None:
    def reply(request: dict) -> object:
        text = request["messages"][0]["content"]
        if "[bad]" in text:
            return Reply("nope", prompt_tokens=3, completion_tokens=1)
        if "[err]" in text:
            return HttpError(503, "down")
        return Reply(json.dumps(GOOD), prompt_tokens=20, completion_tokens=7)

    openai_stub.script(reply)
    caller = caller_for(openai_stub, cache=ResponseCache(tmp_path / "c.sqlite"))
    for claims in ["[ok]", "[ok]", "[bad]", "[err]", "[ok2]"]:
        await call(caller, claims=claims)
    assert caller.usage.as_dict() == {
        "calls": 2 + 2 + 1,  # ok, ok2; bad + re-ask; err
        "cache_hits": 1,
        "input_tokens": 20 + 20 + 3 + 3,
        "cached_input_tokens": 0,
        "output_tokens": 7 + 7 + 1 + 1,
        "parse_failures": 1,
        "errors": 1,
        "output_modes": {"json_schema": 4},  # replies received: ok, bad, its re-ask, ok2
    }
    assert len(openai_stub.requests) == caller.usage.calls


async def test_concurrent_calls_share_one_cache(openai_stub: OpenAIStub, tmp_path: Path) -> None:
    openai_stub.script(lambda r: Delay(0.05, json.dumps(GOOD)))
    cache = ResponseCache(tmp_path / "c.sqlite")
    caller = caller_for(openai_stub, cache=cache)
    results = await asyncio.gather(*(call(caller, claims=f"[{i}]") for i in range(8)))
    assert all(isinstance(r, Out) for r in results)
    assert len(cache) == 8
    await asyncio.gather(*(call(caller, claims=f"[{i}]") for i in range(8)))
    assert caller.usage.cache_hits == 8 and len(openai_stub.requests) == 8


async def test_builtin_prompt_round_trip(openai_stub: OpenAIStub) -> None:
    prompt = load_prompt("soap.lexical")
    openai_stub.script(lambda _r: json.dumps(GOOD))
    variables = {"transcript": "[patient] no chest pain", "note_sections": "{}", "claims": "[]"}
    result = await caller_for(openai_stub).call(prompt, variables, Out, key="c1")
    assert isinstance(result, Out)
    sent = openai_stub.requests[0]["messages"][0]["content"]
    assert "[patient] no chest pain" in sent and "{{" not in sent


async def test_decoding_settings_reach_the_wire(openai_stub: OpenAIStub) -> None:
    openai_stub.script(lambda _r: json.dumps(GOOD))
    caller = caller_for(openai_stub, temperature=0.2, top_p=0.9, seed=7, max_tokens=300)
    await call(caller)
    request = openai_stub.requests[0]
    assert request["model"] == "stub-model"
    assert (request["temperature"], request["top_p"], request["seed"]) == (0.2, 0.9, 7)
    assert 300 in (request.get("max_tokens"), request.get("max_completion_tokens"))


async def test_missing_key_with_base_url_sends_placeholder(openai_stub: OpenAIStub) -> None:
    openai_stub.script(lambda _r: json.dumps(GOOD))
    await call(caller_for(openai_stub))
    assert openai_stub.headers[0]["authorization"] == "Bearer not-needed"


def test_api_key_never_in_provenance_or_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("CLINJUDGE_MODEL", "gpt-x")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("CLINJUDGE_SEED", "11")
    settings = LLMSettings()
    assert settings.api_key is not None and settings.api_key.get_secret_value() == KEY
    assert settings.configured and settings.seed == 11
    assert settings.provenance() == {
        "model": "gpt-x",
        "base_url": "http://127.0.0.1:9/v1",
        "decoding": {"temperature": 0.0, "top_p": None, "seed": 11, "max_tokens": None},
    }
    for text in (repr(settings), str(settings), json.dumps(settings.provenance())):
        assert KEY not in text
    assert KEY not in repr(make_chat_model(settings))


def test_make_chat_model_requires_model_and_key_or_base_url() -> None:
    with pytest.raises(ValueError, match="CLINJUDGE_MODEL"):
        make_chat_model(LLMSettings())
    assert not LLMSettings().configured
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        make_chat_model(LLMSettings(model="gpt-x"))


def test_make_chat_model_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLINJUDGE_REQUESTS_PER_SECOND", "4")
    settings = LLMSettings(model="m", base_url="http://127.0.0.1:9/v1", timeout=7, max_retries=3)
    model = make_chat_model(settings)
    assert model.use_responses_api is False
    assert (model.request_timeout.read, model.max_retries) == (7, 3)
    assert model.rate_limiter is not None and model.rate_limiter.requests_per_second == 4
    monkeypatch.delenv("CLINJUDGE_REQUESTS_PER_SECOND")
    assert make_chat_model(LLMSettings(model="m", base_url="http://x/v1")).rate_limiter is None


def test_a_caller_built_from_settings_serves_one_asyncio_run_after_another(
    openai_stub: OpenAIStub,
) -> None:
    """A model's HTTP client belongs to the event loop of its first call: without a new model
    for the second loop, the second ``asyncio.run`` failed with "Event loop is closed"."""
    openai_stub.script(lambda _r: json.dumps(GOOD))
    caller = caller_for(openai_stub)
    first = asyncio.run(call(caller, claims="[c1]"))
    second = asyncio.run(call(caller, claims="[c2]"))  # another prompt: no cache hit
    assert isinstance(first, Out) and isinstance(second, Out), second
    assert len(openai_stub.requests) == 2 and caller.usage.errors == 0
