"""A small, real OpenAI-compatible HTTP server on 127.0.0.1 for tests (no LLM anywhere).

Serves ``POST /v1/chat/completions`` and ``GET /v1/models`` from a background thread
(stdlib ``ThreadingHTTPServer``). What it answers is scripted by a function
``reply(request_json) -> Action``:

- ``Reply(content)`` or a plain ``str``: a ``chat.completion`` with ``usage`` (cached prompt
  tokens too when ``cached_tokens`` is set);
- ``HttpError(status)``: an OpenAI-style error body (``rate_limited()`` gives a 429 with
  ``retry-after: 0``);
- ``Delay(seconds, then)``: sleep, then answer ``then`` (for client timeouts).

Every request body is recorded in ``requests`` (so tests count calls and read ``response_format``).
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


@dataclass
class Reply:
    content: str
    prompt_tokens: int = 10
    completion_tokens: int = 5
    finish_reason: str = "stop"
    #: Reported as OpenAI does (``usage.prompt_tokens_details.cached_tokens``) when set.
    cached_tokens: int | None = None


@dataclass
class HttpError:
    status: int
    message: str = "stub error"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Delay:
    seconds: float
    then: Action = field(default_factory=lambda: Reply("{}"))


Action = Reply | HttpError | Delay | str
Script = Callable[[dict[str, Any]], Action]


def rate_limited() -> HttpError:
    """A 429 asking to retry at once (``retry-after-ms`` keeps the SDK's wait at 1 ms)."""
    return HttpError(429, "rate limited", {"retry-after": "0", "retry-after-ms": "1"})


#: What llama-cpp-python's server (0.3.36) answers to ``response_format: json_schema``, byte for
#: byte but for the traceback's path: HTTP 500 with a pydantic validation error.
LLAMA_CPP_JSON_SCHEMA_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/srv/llama_cpp/server/"
    'app.py", line 376, in create_chat_completion\n    POST /v1/chat/completions'
)


def llama_cpp_server(then: Script) -> Script:
    """A script that answers as llama-cpp-python's server does: ``json_schema`` refused with
    its HTTP 500, anything else answered by ``then``."""

    def reply(request: dict[str, Any]) -> Action:
        if (request.get("response_format") or {}).get("type") == "json_schema":
            return HttpError(500, LLAMA_CPP_JSON_SCHEMA_500)
        return then(request)

    return reply


def sequence(*actions: Action) -> Script:
    """A script answering ``actions`` in order, then repeating the last one."""
    lock = threading.Lock()
    it = iter(actions)
    last: list[Action] = [actions[-1]]

    def reply(_request: dict[str, Any]) -> Action:
        with lock:
            last[0] = next(it, last[0])
            return last[0]

    return reply


class _Server(ThreadingHTTPServer):
    #: Connections waiting to be accepted: the default 5 refuses a burst of concurrent calls.
    request_queue_size = 256


class OpenAIStub:
    """Start with :meth:`start`, stop with :meth:`stop`; ``base_url`` ends in ``/v1``."""

    def __init__(self, script: Script | None = None) -> None:
        self._script: Script = script or (lambda _r: HttpError(500, "no script set"))
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.script_errors: list[str] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ control
    def script(self, fn: Script) -> None:
        self._script = fn

    @property
    def base_url(self) -> str:
        assert self._server is not None, "stub not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> OpenAIStub:
        handler = type("StubHandler", (_Handler,), {"stub": self})
        server = _Server(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        server.block_on_close = False  # sleeping handlers must not hold up stop()
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ serving
    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> Action:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
        try:
            return self._script(body)
        except Exception as exc:  # a broken script must show up in the test, not hang it
            self.script_errors.append(repr(exc))
            return HttpError(500, f"script error: {exc!r}")

    def completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": reply.prompt_tokens + reply.completion_tokens,
        }
        if reply.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
        return {
            "id": f"chatcmpl-stub-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": usage,
        }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    stub: OpenAIStub

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send_json(
        self, status: int, payload: object, headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            self.close_connection = True

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send_json(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(400, {"error": {"message": "body is not JSON"}})
            return
        action = self.stub._record(body, {k.lower(): v for k, v in self.headers.items()})
        self._answer(body, action)

    def _answer(self, body: dict[str, Any], action: Action) -> None:
        if isinstance(action, Delay):
            time.sleep(action.seconds)
            self._answer(body, action.then)
        elif isinstance(action, HttpError):
            error = {"message": action.message, "type": "stub_error", "code": action.status}
            self._send_json(action.status, {"error": error}, action.headers)
        else:
            reply = Reply(action) if isinstance(action, str) else action
            self._send_json(200, self.stub.completion(body, reply))
