"""Web search backends over HTTP (SPEC §3 step 3): SearXNG, Brave, Tavily and Serper.

Each backend speaks its API's real request and response format:

============  ==========================================  =====================================
backend       request                                     results read
============  ==========================================  =====================================
``searxng``   ``GET {url}/search?q=…&format=json``        ``results[].{url,title,content}``
``brave``     ``GET …/res/v1/web/search?q=…&count=k``,    ``web.results[].{url,title,description}``
              header ``X-Subscription-Token``
``tavily``    ``POST …/search`` JSON ``{api_key, query,   ``results[].{url,title,content,score}``
              max_results}``
``serper``    ``POST …/search`` JSON ``{q, num}``,        ``organic[].{link,title,snippet}``
              header ``X-API-KEY``
============  ==========================================  =====================================

Keys come from the environment (``BRAVE_API_KEY``, ``TAVILY_API_KEY``, ``SERPER_API_KEY``), the
SearXNG address from ``--search-url`` or ``SEARXNG_URL``; every base URL can be overridden (tests
point them at 127.0.0.1). A missing key or URL is a :class:`~clinjudge.errors.ConfigError`.

Transport rules: ``httpx.AsyncClient`` with a timeout per request; HTTP 429, 5xx, timeouts and
connection errors are retried by ``tenacity`` up to ``max_attempts`` with exponential backoff
``backoff · 2^(attempt−1)`` (capped at ``max_backoff``), or the server's ``Retry-After`` when it
sends one (capped at ``max_retry_after``); other 4xx and unreadable bodies fail at once. What still
fails raises :class:`~clinjudge.search.base.SearchError`. A per-run in-memory cache keyed by
``(query, k)`` makes a repeated query — even one issued concurrently — cost one HTTP request.
"""

from __future__ import annotations

import asyncio
import email.utils
import html
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from clinjudge.errors import ConfigError
from clinjudge.redact import public_url
from clinjudge.search.base import Passage, SearchError

_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class WebSearchConfig:
    """Timeouts and retry policy of a web backend (seconds)."""

    timeout: float = 15.0
    max_attempts: int = 4
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 30.0


class _Retryable(Exception):
    """A 429/5xx answer worth another attempt; ``retry_after`` from the server, if any."""

    def __init__(self, status: int, retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: a number of seconds or an HTTP date; ``None`` if absent/bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def clean_snippet(text: object) -> str:
    """Plain text of a result snippet: HTML tags dropped (Brave marks hits with ``<strong>``),
    entities unescaped, whitespace collapsed."""
    if not isinstance(text, str):
        return ""
    return " ".join(html.unescape(_TAG.sub("", text)).split())


class WebSearch:
    """Shared transport of the web backends; subclasses define the request and the parsing."""

    name = "web"
    default_base_url = ""
    key_env = ""  # environment variable holding the API key ("" = no key needed)
    url_env = ""  # environment variable holding the base URL, if any

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        config: WebSearchConfig | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if env is None else env
        url = base_url or (env.get(self.url_env) if self.url_env else None)
        self.base_url = (url or self.default_base_url).rstrip("/")
        if not self.base_url:
            where = f" or set {self.url_env}" if self.url_env else ""
            raise ConfigError(f"{self.name} search needs a URL: pass --search-url{where}")
        self.api_key = api_key if api_key is not None else env.get(self.key_env, "")
        if self.key_env and not self.api_key:
            raise ConfigError(f"{self.name} search needs an API key: set {self.key_env}")
        self.config = config or WebSearchConfig()
        self.requests = 0  # HTTP requests sent (retries included)
        self.cache_hits = 0
        self._cache: dict[tuple[str, int], list[Passage]] = {}
        self._inflight: dict[tuple[str, int], asyncio.Future[list[Passage]]] = {}
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- what subclasses define ----------------------------------------------------------------
    def request(self, query: str, k: int) -> dict[str, Any]:
        """Keyword arguments of ``httpx.AsyncClient.request``: method, url, params/json, headers."""
        raise NotImplementedError

    def parse(self, data: Any, k: int) -> list[Passage]:
        """Passages of a decoded JSON reply; raises ``KeyError``/``TypeError`` on a wrong shape."""
        raise NotImplementedError

    # -- the interface ---------------------------------------------------------------------------
    def describe(self) -> dict[str, object]:
        return {"backend": self.name, "base_url": public_url(self.base_url)}

    async def search(self, query: str, k: int) -> list[Passage]:
        key = (" ".join(query.split()), k)
        if key in self._cache:
            self.cache_hits += 1
            return list(self._cache[key])
        if key in self._inflight:  # the same query already on its way: share its answer
            self.cache_hits += 1
            return list(await asyncio.shield(self._inflight[key]))
        future: asyncio.Future[list[Passage]] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            passages = await self._fetch(key[0], k)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        else:
            self._cache[key] = passages
            future.set_result(passages)
            return list(passages)
        finally:
            del self._inflight[key]

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # -- transport -------------------------------------------------------------------------------
    def _http(self) -> httpx.AsyncClient:
        """One client per event loop (a client must not outlive the loop it was opened on)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = httpx.AsyncClient(timeout=self.config.timeout)
            self._loop = loop
        return self._client

    def _wait(self, state: RetryCallState) -> float:
        cfg = self.config
        exc = state.outcome.exception() if state.outcome else None
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            return min(retry_after, cfg.max_retry_after)
        return min(cfg.backoff * 2 ** (state.attempt_number - 1), cfg.max_backoff)

    async def _fetch(self, query: str, k: int) -> list[Passage]:
        client = self._http()
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.config.max_attempts),
            wait=self._wait,
            retry=retry_if_exception_type(
                (_Retryable, httpx.TimeoutException, httpx.TransportError)
            ),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    self.requests += 1
                    response = await client.request(**self.request(query, k))
                    status = response.status_code
                    if status == 429 or status >= 500:
                        retry_after = parse_retry_after(response.headers.get("retry-after"))
                        raise _Retryable(status, retry_after)
        except _Retryable as exc:
            raise SearchError(
                f"{self.name}: {exc} after {self.config.max_attempts} attempts"
            ) from None
        except httpx.HTTPError as exc:
            raise SearchError(
                f"{self.name}: {type(exc).__name__} after {self.config.max_attempts} attempts"
            ) from None
        if response.status_code >= 400:
            raise SearchError(f"{self.name}: HTTP {response.status_code}: {_brief(response)}")
        try:
            return self.parse(response.json(), k)[:k]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SearchError(f"{self.name}: unexpected response ({type(exc).__name__})") from None


def _brief(response: httpx.Response, limit: int = 120) -> str:
    text = " ".join(response.text.split())
    return text[:limit] or response.reason_phrase


def _passage(url: Any, title: Any, snippet: Any, source: str, score: Any = None) -> Passage:
    url = url if isinstance(url, str) else ""
    return Passage(
        id=url,
        text=clean_snippet(snippet),
        url=url,
        title=clean_snippet(title),
        score=float(score) if isinstance(score, int | float) else None,
        source=source,
    )


class SearxngSearch(WebSearch):
    """A self-hosted SearXNG instance (JSON output must be enabled in its ``settings.yml``)."""

    name = "searxng"
    url_env = "SEARXNG_URL"

    def request(self, query: str, k: int) -> dict[str, Any]:
        return {
            "method": "GET",
            "url": f"{self.base_url}/search",
            "params": {"q": query, "format": "json"},
            "headers": {"Accept": "application/json"},
        }

    def parse(self, data: Any, k: int) -> list[Passage]:
        results = data["results"]
        return [
            _passage(r.get("url"), r.get("title"), r.get("content"), self.name, r.get("score"))
            for r in results
            if isinstance(r, dict) and r.get("url")
        ]


class BraveSearch(WebSearch):
    """Brave Search API (web search endpoint)."""

    name = "brave"
    default_base_url = "https://api.search.brave.com"
    key_env = "BRAVE_API_KEY"

    def request(self, query: str, k: int) -> dict[str, Any]:
        return {
            "method": "GET",
            "url": f"{self.base_url}/res/v1/web/search",
            "params": {"q": query, "count": min(max(k, 1), 20)},
            "headers": {"Accept": "application/json", "X-Subscription-Token": self.api_key},
        }

    def parse(self, data: Any, k: int) -> list[Passage]:
        web = data.get("web") or {}  # no "web" key: no web results for this query
        return [
            _passage(r.get("url"), r.get("title"), r.get("description"), self.name)
            for r in web.get("results") or []
            if isinstance(r, dict) and r.get("url")
        ]


class TavilySearch(WebSearch):
    """Tavily search API."""

    name = "tavily"
    default_base_url = "https://api.tavily.com"
    key_env = "TAVILY_API_KEY"

    def request(self, query: str, k: int) -> dict[str, Any]:
        return {
            "method": "POST",
            "url": f"{self.base_url}/search",
            "json": {
                "api_key": self.api_key,
                "query": query,
                "max_results": max(k, 1),
                "search_depth": "basic",
            },
        }

    def parse(self, data: Any, k: int) -> list[Passage]:
        return [
            _passage(r.get("url"), r.get("title"), r.get("content"), self.name, r.get("score"))
            for r in data["results"]
            if isinstance(r, dict) and r.get("url")
        ]


class SerperSearch(WebSearch):
    """Serper (Google results) search API."""

    name = "serper"
    default_base_url = "https://google.serper.dev"
    key_env = "SERPER_API_KEY"

    def request(self, query: str, k: int) -> dict[str, Any]:
        return {
            "method": "POST",
            "url": f"{self.base_url}/search",
            "json": {"q": query, "num": max(k, 1)},
            "headers": {"X-API-KEY": self.api_key},
        }

    def parse(self, data: Any, k: int) -> list[Passage]:
        return [
            _passage(r.get("link"), r.get("title"), r.get("snippet"), self.name)
            for r in data.get("organic") or []
            if isinstance(r, dict) and r.get("link")
        ]


WEB_BACKENDS: dict[str, type[WebSearch]] = {
    cls.name: cls for cls in (SearxngSearch, BraveSearch, TavilySearch, SerperSearch)
}
