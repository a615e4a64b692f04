"""A small, real search-API server on 127.0.0.1 for the web-search tests (no internet).

Answers every ``GET``/``POST`` from a background thread (stdlib ``ThreadingHTTPServer``) with what a
script ``reply(request) -> Action`` returns; ``request`` is a dict with ``method``, ``path``,
``query`` (first value per parameter), ``headers`` (lower-case names) and ``json`` (the decoded
body or ``None``). Actions: ``Json(data, status=200, headers={})``, ``Status(code, body="",
headers={})`` and ``Delay(seconds, then)``. Every request is recorded in ``requests``.

The ``*_reply`` helpers build bodies in each API's real format: SearXNG ``results[].{url,title,
content}``, Brave ``web.results[].{url,title,description}``, Tavily ``results[].{url,title,content,
score}``, Serper ``organic[].{link,title,snippet}``.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Json:
    data: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Status:
    code: int
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Delay:
    seconds: float
    then: Action = field(default_factory=lambda: Json({}))


Action = Json | Status | Delay
Script = Callable[[dict[str, Any]], Action]


def sequence(*actions: Action) -> Script:
    """Answer ``actions`` in order, then repeat the last one."""
    lock = threading.Lock()
    it = iter(actions)
    last: list[Action] = [actions[-1]]

    def reply(_request: dict[str, Any]) -> Action:
        with lock:
            last[0] = next(it, last[0])
            return last[0]

    return reply


def searxng_reply(hits: list[tuple[str, str, str]]) -> Json:
    return Json(
        {
            "query": "q",
            "number_of_results": len(hits),
            "results": [
                {"url": u, "title": t, "content": c, "engine": "stub", "score": 1.0}
                for u, t, c in hits
            ],
        }
    )


def brave_reply(hits: list[tuple[str, str, str]]) -> Json:
    return Json(
        {
            "type": "search",
            "query": {"original": "q"},
            "web": {
                "type": "search",
                "results": [
                    {"url": u, "title": t, "description": d, "type": "search_result"}
                    for u, t, d in hits
                ],
            },
        }
    )


def tavily_reply(hits: list[tuple[str, str, str]]) -> Json:
    return Json(
        {
            "query": "q",
            "results": [
                {"url": u, "title": t, "content": c, "score": round(0.9 - 0.1 * i, 2)}
                for i, (u, t, c) in enumerate(hits)
            ],
            "response_time": 0.1,
        }
    )


def serper_reply(hits: list[tuple[str, str, str]]) -> Json:
    return Json(
        {
            "searchParameters": {"q": "q", "type": "search"},
            "organic": [
                {"title": t, "link": u, "snippet": s, "position": i + 1}
                for i, (u, t, s) in enumerate(hits)
            ],
        }
    )


class SearchStub:
    def __init__(self, script: Script | None = None) -> None:
        self._script: Script = script or (lambda _r: Json({"results": []}))
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._counter = itertools.count()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.stub = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, fn: Script) -> None:
        self._script = fn

    def start(self) -> SearchStub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def handle(self, request: dict[str, Any]) -> Action:
        with self._lock:
            self.requests.append(request)
        return self._script(request)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        self._serve(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        self._serve(body)

    def _serve(self, body: Any) -> None:
        parts = urlsplit(self.path)
        request = {
            "method": self.command,
            "path": parts.path,
            "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "json": body,
        }
        action = self.server.stub.handle(request)  # type: ignore[attr-defined]
        while isinstance(action, Delay):
            time.sleep(action.seconds)
            action = action.then
        if isinstance(action, Json):
            payload = json.dumps(action.data).encode()
            status, headers = action.status, {"content-type": "application/json", **action.headers}
        else:
            payload = action.body.encode()
            status, headers = action.code, {"content-type": "text/plain", **action.headers}
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            self.close_connection = True
