"""Web search backends against a loopback server answering in each API's real format: results,
empty results, 429 then success (Retry-After honoured), 500s exhausting retries, a timeout, a
cache hit costing no request, and missing keys or URLs."""

from __future__ import annotations

import asyncio
import time

import pytest
from search_stub import (
    Delay,
    Json,
    SearchStub,
    Status,
    brave_reply,
    searxng_reply,
    sequence,
    serper_reply,
    tavily_reply,
)

from clinjudge.errors import ConfigError
from clinjudge.search import SearchError, WebSearchConfig, make_search
from clinjudge.search.web import BraveSearch, SearxngSearch, SerperSearch, TavilySearch

FAST = WebSearchConfig(timeout=1.0, max_attempts=3, backoff=0.01, max_backoff=0.05)
HITS = [
    (
        "https://a.example/aspirin",
        "Aspirin <strong>dosing</strong>",
        "Low-dose aspirin 75&amp;100 mg",
    ),
    ("https://b.example/stroke", "Stroke", "Secondary prevention of stroke."),
]


@pytest.fixture
def stub():
    server = SearchStub().start()
    try:
        yield server
    finally:
        server.stop()


def run(coro):
    return asyncio.run(coro)


def test_searxng_request_and_results(stub):
    stub.script(lambda r: searxng_reply(HITS))
    engine = SearxngSearch(stub.base_url, config=FAST, env={})
    passages = run(engine.search("aspirin stroke", 5))
    request = stub.requests[0]
    assert (request["method"], request["path"]) == ("GET", "/search")
    assert request["query"] == {"q": "aspirin stroke", "format": "json"}
    assert [p.url for p in passages] == [h[0] for h in HITS]
    assert passages[0].id == passages[0].url and passages[0].source == "searxng"
    assert passages[0].title == "Aspirin dosing"  # tags dropped
    assert passages[0].text == "Low-dose aspirin 75&100 mg"  # entities unescaped


def test_searxng_url_from_environment_and_missing(stub):
    stub.script(lambda r: searxng_reply(HITS[:1]))
    engine = make_search("searxng", env={"SEARXNG_URL": stub.base_url + "/"}, config=FAST)
    assert len(run(engine.search("x", 3))) == 1
    with pytest.raises(ConfigError, match="SEARXNG_URL"):
        make_search("searxng", env={})


def test_brave_header_count_and_description(stub):
    stub.script(lambda r: brave_reply(HITS))
    engine = BraveSearch(stub.base_url, env={"BRAVE_API_KEY": "brave-key"}, config=FAST)
    passages = run(engine.search("aspirin", 1))
    request = stub.requests[0]
    assert request["path"] == "/res/v1/web/search"
    assert request["headers"]["x-subscription-token"] == "brave-key"
    assert request["query"]["count"] == "1"
    assert len(passages) == 1 and passages[0].text.startswith("Low-dose aspirin")


def test_brave_without_web_section_is_empty(stub):
    stub.script(lambda r: Json({"type": "search", "query": {"original": "zzz"}}))
    engine = BraveSearch(stub.base_url, env={"BRAVE_API_KEY": "k"}, config=FAST)
    assert run(engine.search("zzz", 5)) == []


def test_tavily_body_and_scores(stub):
    stub.script(lambda r: tavily_reply(HITS))
    engine = TavilySearch(stub.base_url, env={"TAVILY_API_KEY": "tv-key"}, config=FAST)
    passages = run(engine.search("aspirin", 5))
    body = stub.requests[0]["json"]
    assert stub.requests[0]["method"] == "POST" and stub.requests[0]["path"] == "/search"
    assert body["api_key"] == "tv-key" and body["query"] == "aspirin" and body["max_results"] == 5
    assert [p.score for p in passages] == [0.9, 0.8]


def test_serper_header_and_organic(stub):
    stub.script(lambda r: serper_reply(HITS))
    engine = SerperSearch(stub.base_url, env={"SERPER_API_KEY": "sp-key"}, config=FAST)
    passages = run(engine.search("stroke", 5))
    request = stub.requests[0]
    assert request["headers"]["x-api-key"] == "sp-key"
    assert request["json"] == {"q": "stroke", "num": 5}
    assert passages[1].url == "https://b.example/stroke"
    assert passages[1].text == "Secondary prevention of stroke."


@pytest.mark.parametrize(
    ("cls", "env", "empty"),
    [
        (SearxngSearch, {}, Json({"results": []})),
        (TavilySearch, {"TAVILY_API_KEY": "k"}, Json({"results": []})),
        (SerperSearch, {"SERPER_API_KEY": "k"}, Json({"organic": []})),
    ],
)
def test_empty_results(stub, cls, env, empty):
    stub.script(lambda r: empty)
    assert run(cls(stub.base_url, env=env, config=FAST).search("nothing", 5)) == []


def test_429_then_success_honours_retry_after(stub):
    stub.script(sequence(Status(429, "slow down", {"Retry-After": "0.2"}), searxng_reply(HITS)))
    engine = SearxngSearch(stub.base_url, config=FAST, env={})
    started = time.perf_counter()
    passages = run(engine.search("aspirin", 5))
    assert len(passages) == 2 and len(stub.requests) == 2
    assert time.perf_counter() - started >= 0.2  # waited what the server asked, not 0.01 s
    assert engine.requests == 2


def test_500s_exhaust_retries_into_search_error(stub):
    stub.script(lambda r: Status(500, "boom"))
    engine = TavilySearch(stub.base_url, env={"TAVILY_API_KEY": "k"}, config=FAST)
    with pytest.raises(SearchError, match="HTTP 500 after 3 attempts"):
        run(engine.search("aspirin", 5))
    assert len(stub.requests) == 3


def test_client_error_is_not_retried(stub):
    stub.script(lambda r: Status(401, "bad key"))
    engine = SerperSearch(stub.base_url, env={"SERPER_API_KEY": "k"}, config=FAST)
    with pytest.raises(SearchError, match="HTTP 401: bad key"):
        run(engine.search("aspirin", 5))
    assert len(stub.requests) == 1


def test_timeout_is_retried_then_fails(stub):
    stub.script(lambda r: Delay(1.5, searxng_reply(HITS)))
    config = WebSearchConfig(timeout=0.4, max_attempts=2, backoff=0.01)
    engine = SearxngSearch(stub.base_url, config=config, env={})
    with pytest.raises(SearchError, match="Timeout"):
        run(engine.search("aspirin", 5))
    assert len(stub.requests) == 2


def test_unexpected_body_is_a_search_error(stub):
    stub.script(lambda r: Status(200, "<html>not json</html>"))
    engine = SearxngSearch(stub.base_url, config=FAST, env={})
    with pytest.raises(SearchError, match="unexpected response"):
        run(engine.search("aspirin", 5))


def test_cache_same_query_one_request_even_concurrently(stub):
    stub.script(lambda r: Delay(0.1, searxng_reply(HITS)))
    engine = SearxngSearch(stub.base_url, config=FAST, env={})

    async def many():
        first = await asyncio.gather(*(engine.search("aspirin  stroke", 5) for _ in range(4)))
        again = await engine.search("aspirin stroke", 5)
        return first, again

    first, again = run(many())
    assert len(stub.requests) == 1
    assert all(r == first[0] for r in first) and again == first[0]
    assert engine.cache_hits == 4
    run(engine.search("another query", 5))
    assert len(stub.requests) == 2


@pytest.mark.parametrize(
    ("name", "variable"),
    [("brave", "BRAVE_API_KEY"), ("tavily", "TAVILY_API_KEY"), ("serper", "SERPER_API_KEY")],
)
def test_missing_key_is_a_config_error(name, variable):
    with pytest.raises(ConfigError, match=variable):
        make_search(name, env={})


def test_unknown_backend_and_both_sources():
    with pytest.raises(ConfigError, match="unknown search backend 'bing'"):
        make_search("bing", env={})
    with pytest.raises(ConfigError, match="either"):
        make_search("brave", corpus="x.jsonl", env={})
