"""Replicas of one endpoint (``OPENAI_BASE_URL`` listing several URLs): round-robin to the least
busy, a bound on requests in flight to each, a requests-per-second budget, waiters served in
order and never leaking a slot (clinjudge.llm_endpoints); against two loopback servers."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from openai_stub import OpenAIStub, Reply
from pydantic import BaseModel

from clinjudge.llm import LLMSettings, StructuredCaller
from clinjudge.llm_endpoints import Replicas, split_urls
from clinjudge.prompts import Prompt

PROMPT = Prompt(name="t", version="1", text="Judge {{x}}", sha256="c" * 64)


class Out(BaseModel):
    verdicts: list


def test_split_urls_reads_a_comma_list():
    assert split_urls("http://a/v1, http://b/v1,") == ["http://a/v1", "http://b/v1"]
    assert split_urls(None) == [None] and split_urls(" ") == [None]


async def test_requests_go_round_robin_to_the_least_busy_replica():
    replicas = Replicas(3)
    taken = [await replicas.acquire() for _ in range(6)]
    assert taken == [0, 1, 2, 0, 1, 2]  # all equally busy: round-robin
    replicas.release(1)
    replicas.release(1)
    assert await replicas.acquire() == 1  # the least busy first


async def test_the_bound_per_replica_holds_and_waiters_are_served_in_order():
    replicas = Replicas(2, max_concurrent=1)
    first, second = await replicas.acquire(), await replicas.acquire()
    assert {first, second} == {0, 1}
    served: list[str] = []

    async def wait(name: str) -> int:
        index = await replicas.acquire()
        served.append(name)
        return index

    a, b = asyncio.create_task(wait("a")), asyncio.create_task(wait("b"))
    await asyncio.sleep(0.01)
    assert served == [] and replicas.in_flight == [1, 1]
    replicas.release(second)
    assert await a == second and served == ["a"]
    replicas.release(first)
    assert await b == first and served == ["a", "b"]
    assert replicas.most == [1, 1]


async def test_a_cancelled_waiter_leaks_no_slot():
    replicas = Replicas(1, max_concurrent=1)
    held = await replicas.acquire()
    waiter = asyncio.create_task(replicas.acquire())
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    replicas.release(held)
    assert replicas.in_flight == [0]
    assert await asyncio.wait_for(replicas.acquire(), 1) == 0


async def test_requests_per_second_spaces_the_grants_of_each_replica():
    replicas = Replicas(1, per_second=20.0)  # a burst of 20, then one per 50 ms
    started = time.monotonic()
    for _ in range(25):
        replicas.release(await replicas.acquire())
    assert 5 / 20.0 * 0.8 <= time.monotonic() - started < 2.0


def two_servers_answering(counts: dict[str, list[int]], delay: float):
    """Scripts for two stubs that count the requests each has in flight (now, most, total)."""
    lock = threading.Lock()

    def script(name: str):
        def reply(_request: dict) -> Reply:
            with lock:
                counts[name][0] += 1
                counts[name][1] = max(counts[name][:2])
                counts[name][2] += 1
            time.sleep(delay)
            with lock:
                counts[name][0] -= 1
            return Reply(json.dumps({"verdicts": []}))

        return reply

    return script


async def test_a_caller_spreads_its_calls_over_every_url_within_their_bounds():
    counts = {"a": [0, 0, 0], "b": [0, 0, 0]}
    script = two_servers_answering(counts, delay=0.1)
    with OpenAIStub(script("a")) as a, OpenAIStub(script("b")) as b:
        settings = LLMSettings(
            model="stub-judge",
            base_url=f"{a.base_url},{b.base_url}",
            max_retries=0,
            timeout=5.0,
            max_concurrent_calls=2,
        )
        one, two = (StructuredCaller.from_settings(settings) for _ in range(2))
        results = await asyncio.gather(
            *(c.call(PROMPT, {"x": i}, Out, key="k") for i, c in enumerate([one, two] * 6))
        )
    assert all(isinstance(r, Out) for r in results)
    assert counts["a"][2] == counts["b"][2] == 6  # round-robin over the two URLs
    assert counts["a"][1] == counts["b"][1] == 2  # the bound holds per URL, over both callers
