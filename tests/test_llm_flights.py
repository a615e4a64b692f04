"""Identical calls in flight at once are sent once (clinjudge.llm_flights): a run that judges
one visit's notes side by side asks their identical calls together, before the response cache
holds the first reply."""

from __future__ import annotations

import asyncio
import json

from openai_stub import Delay
from test_llm import GOOD, PROMPT, Out, caller_for

from clinjudge.llm_cache import ResponseCache
from clinjudge.types import ParseFailure


async def ask(caller, key: str, claims: str = "[c1]"):
    return await caller.call(PROMPT, {"claims": claims}, Out, key=key)


async def test_identical_calls_at_once_send_one_request(openai_stub, tmp_path) -> None:
    openai_stub.script(lambda _r: Delay(0.3, json.dumps(GOOD)))
    caller = caller_for(openai_stub, cache=ResponseCache(tmp_path / "c.sqlite"))
    first, second, other = await asyncio.gather(
        ask(caller, "a"), ask(caller, "b"), ask(caller, "c", claims="[c2]")
    )
    assert len(openai_stub.requests) == 2  # "[c1]" once, "[c2]" once
    assert first == second and first is not second  # each item gets its own copy
    assert caller.usage.calls == 2 and caller.usage.cache_hits == 1
    assert isinstance(other, Out)


async def test_a_shared_failure_is_recorded_under_each_callers_key(openai_stub, tmp_path) -> None:
    openai_stub.script(lambda _r: Delay(0.2, "prose only"))
    caller = caller_for(openai_stub, cache=ResponseCache(tmp_path / "c.sqlite"))
    first, second = await asyncio.gather(ask(caller, "item-1"), ask(caller, "item-2"))
    assert isinstance(first, ParseFailure) and isinstance(second, ParseFailure)
    assert (first.claim_id, second.claim_id) == ("item-1", "item-2")
    assert len(openai_stub.requests) == 2  # one call and its re-ask, not two of each


async def test_without_a_cache_every_call_is_sent(openai_stub) -> None:
    openai_stub.script(lambda _r: Delay(0.2, json.dumps(GOOD)))
    caller = caller_for(openai_stub)
    await asyncio.gather(ask(caller, "a"), ask(caller, "b"))
    assert len(openai_stub.requests) == 2


async def test_a_waiter_whose_call_is_cancelled_sends_its_own(openai_stub, tmp_path) -> None:
    openai_stub.script(lambda _r: Delay(0.3, json.dumps(GOOD)))
    caller = caller_for(openai_stub, cache=ResponseCache(tmp_path / "c.sqlite"))
    owner = asyncio.create_task(ask(caller, "a"))
    await asyncio.sleep(0.05)
    waiter = asyncio.create_task(ask(caller, "b"))
    await asyncio.sleep(0.05)
    owner.cancel()
    result = await waiter
    assert isinstance(result, Out) and owner.cancelled()
    assert caller.usage.cache_hits == 0  # it was answered by its own request
