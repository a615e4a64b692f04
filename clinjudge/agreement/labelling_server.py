"""The local server of ``clinjudge label`` (issues 26 and 35): the labelling page and the label
saves of one :class:`~clinjudge.agreement.labelling.LabelSession`, on 127.0.0.1 only, built on
Starlette and served by uvicorn.

- ``GET /`` — the page: the run's notes by id and the progress, no note text (a reload shows
  the labels saved so far).
- ``GET /note/N`` — note N (from 0, dataset order) as JSON, fetched by the page when it opens
  it (:meth:`LabelSession.note_data`); 404 when there is no such note.
- ``GET /labels`` — the reviewer's label rows as JSON.
- ``POST /label`` — one label, a JSON object (:meth:`LabelSession.save`); answers
  ``{"row": …, "progress": …}``, or ``{"error": reason}`` with 400 (not JSON, nested too
  deeply, not UTF-8, a field of the wrong format), 404 (no such text unit) or 500 (the label
  file cannot be written).
- ``GET /favicon.ico`` — nothing (204).

**Only its user.** The server draws a token; the command prints and opens
``http://127.0.0.1:PORT/?token=TOKEN``. A GET of that address answers 303 to ``/`` and sets
the token as an ``HttpOnly; SameSite=Strict; Path=/`` cookie, so the token leaves the address
bar. Every request must carry that cookie, or the token in ``X-Clinjudge-Token`` (scripts);
anything else is refused with 403 and a one-line reason, before any route runs: no note text.
The cookie's name holds the port (browsers do not keep cookies apart by port, and two servers
must not overwrite each other's). Another page open in the same browser cannot post a label:
the cookie is not sent from another site, a foreign ``Origin`` is refused, a label must be a
JSON body (another site cannot send one without a CORS pre-flight this server never grants),
and the ``Host`` must name this server (a DNS-rebound name is refused).

**Judged by its head.** A request is refused before one byte of its body is read: the checks
above, then for a POST a ``Content-Length`` (411 when missing or chunked, 413 over
:data:`MAX_BODY`). uvicorn's HTTP parser (h11) itself answers 400 to a length that is not a
number (``-1``, ``abc``). The body is read within :data:`BODY_TIMEOUT` seconds.

**Connections.** One event loop, no thread per connection (saves run in anyio's bounded worker
threads). A connection must send a whole request head within ``head_timeout`` seconds of
opening it or of its last answer; an idle one is closed after :data:`KEEP_ALIVE` seconds; at
most :data:`MAX_CONNECTIONS` are answered at once (503 beyond); stopping waits at most
:data:`STOP_GRACE` seconds for answers in flight. So half-open connections neither pile up
nor keep Ctrl-C or SIGTERM from stopping the command.

**Every answer** — pages, refusals and the parser's own 400s — carries ``X-Frame-Options:
DENY``, a ``Content-Security-Policy`` (``default-src 'none'``; the page's inline script and
style sheets allowed by their SHA-256 hashes; ``connect-src 'self'``; ``frame-ancestors``,
``base-uri`` and ``form-action`` ``'none'``), ``X-Content-Type-Options: nosniff``,
``Cache-Control: no-store`` and ``Referrer-Policy: no-referrer``.
"""

from __future__ import annotations

import re
import secrets
import socket
import time
from typing import Any

import anyio
import h11
import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from clinjudge.agreement.labelling import LabelSession
from clinjudge.agreement.labelling_store import BadLabel, UnknownUnit
from clinjudge.files.jsonl import parse_line
from clinjudge.report.label_page import inline_hashes, render_label_page

HOST = "127.0.0.1"
TOKEN_HEADER = "X-Clinjudge-Token"
#: A label is a few tens of kilobytes at most (a 4,000-character comment, escaped); a body
#: declared longer than this is refused unread.
MAX_BODY = 1024 * 1024
BODY_TIMEOUT = 10.0
HEAD_TIMEOUT = 10.0
KEEP_ALIVE = 5
MAX_CONNECTIONS = 64
STOP_GRACE = 1
_DIGITS = re.compile(r"[0-9]+")


def content_security_policy(page: str) -> str:
    """The policy of every answer: nothing but the page's own inline script and styles (by
    hash) and requests back to this server."""
    hashes = inline_hashes(page)
    return "; ".join(
        [
            "default-src 'none'",
            "script-src " + " ".join(f"'{h}'" for h in hashes["script"]),
            "style-src " + " ".join(f"'{h}'" for h in hashes["style"]),
            "connect-src 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "form-action 'none'",
        ]
    )


def security_headers(policy: str) -> list[tuple[str, str]]:
    return [
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", policy),
        ("X-Content-Type-Options", "nosniff"),
        ("Cache-Control", "no-store"),
        ("Referrer-Policy", "no-referrer"),
    ]


def refused(status: int, reason: str) -> JSONResponse:
    """A one-line refusal; the connection is closed after it (a body may be left unread)."""
    return JSONResponse({"error": reason}, status, headers={"Connection": "close"})


class _Guard:
    """The checks every request passes on its head alone, before any route runs (module
    docstring): Host, Origin, the token exchange, the cookie or token header, and for a body
    its type and length."""

    def __init__(self, app: ASGIApp, *, token: str, port: int) -> None:
        self.app = app
        self.token = token.encode()
        self.cookie = f"clinjudge-label-{port}"
        self.hosts = {f"{HOST}:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    def _is_token(self, value: str | None) -> bool:
        return value is not None and secrets.compare_digest(
            value.encode("utf-8", "surrogateescape"), self.token
        )

    def answer(self, request: Request) -> Response | None:
        """The refusal (or the token exchange's redirect) for ``request``; ``None``: pass."""
        if request.headers.get("host") not in self.hosts:
            return refused(403, "requests must name this server as Host")
        origin = request.headers.get("origin")
        if origin is not None and origin not in self.origins:
            return refused(403, f"a request from another site ({origin[:80]}) is refused")
        if request.scope["path"] == "/" and "token" in request.query_params:
            if not self._is_token(request.query_params["token"]):
                return refused(403, "wrong token: open the URL clinjudge label printed")
            to_page = RedirectResponse("/", status_code=303)
            to_page.set_cookie(
                self.cookie, self.token.decode(), path="/", httponly=True, samesite="strict"
            )
            return to_page
        if not (
            self._is_token(request.cookies.get(self.cookie))
            or self._is_token(request.headers.get(TOKEN_HEADER))
        ):
            return refused(403, "not signed in: open the URL clinjudge label printed")
        if request.method in ("GET", "HEAD"):
            return None
        media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media_type != "application/json":
            return refused(415, "a label is a JSON body (Content-Type: application/json)")
        length = request.headers.get("content-length")
        if length is None or "transfer-encoding" in request.headers:
            return refused(411, "a label is sent with its Content-Length")
        if not _DIGITS.fullmatch(length):
            return refused(400, f"Content-Length {length[:20]!r} is not a number of bytes")
        if int(length) > MAX_BODY:
            return refused(413, f"a label is at most {MAX_BODY} bytes")
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            answer = self.answer(Request(scope))
            if answer is not None:
                await answer(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _body(request: Request) -> bytes | Response:
    """The request's body, at most :data:`MAX_BODY` bytes read within :data:`BODY_TIMEOUT`
    seconds, or the refusal."""
    chunks, size = [], 0
    try:
        with anyio.fail_after(BODY_TIMEOUT):
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY:
                    return refused(413, f"a label is at most {MAX_BODY} bytes")
                chunks.append(chunk)
    except TimeoutError:
        return refused(408, f"the label did not arrive within {BODY_TIMEOUT:g} s")
    except ClientDisconnect:
        return refused(400, "the connection closed before the label arrived")
    return b"".join(chunks)


def _routes(session: LabelSession) -> list[Route]:
    async def page(request: Request) -> Response:
        html = await run_in_threadpool(lambda: render_label_page(session.page_data()))
        return HTMLResponse(html)

    async def note(request: Request) -> Response:
        index = request.path_params["index"]
        try:
            return JSONResponse(await run_in_threadpool(session.note_data, index))
        except IndexError as e:
            return JSONResponse({"error": str(e)}, 404)

    async def labels(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(session.labels.ordered_rows))

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    async def save(request: Request) -> Response:
        body = await _body(request)
        if isinstance(body, Response):
            return body
        payload, problem = parse_line(body)
        if problem is not None:
            return JSONResponse({"error": f"the label is {problem}"}, 400)
        if not isinstance(payload, dict):
            return JSONResponse({"error": "a label is a JSON object"}, 400)
        try:
            result = await run_in_threadpool(session.save, payload)
        except UnknownUnit as e:
            return JSONResponse({"error": str(e)}, 404)
        except (BadLabel, ValueError) as e:
            return JSONResponse({"error": str(e)}, 400)
        except OSError as e:  # the label file cannot be written: the page says so
            return JSONResponse({"error": f"not saved: {e}"}, 500)
        return JSONResponse(result)

    return [
        Route("/", page, methods=["GET"]),
        Route("/note/{index:int}", note, methods=["GET"]),
        Route("/labels", labels, methods=["GET"]),
        Route("/label", save, methods=["POST"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
    ]


class _Connection(H11Protocol):
    """uvicorn's HTTP/1.1 connection with two additions (module docstring): a request head must
    arrive within ``head_timeout`` seconds of the connection opening or of its last answer
    (uvicorn times out only idle connections between requests), and the parser's own 400
    carries the headers of every answer. Subclassed per server (:meth:`LabelServer._protocol`)."""

    head_timeout: float = HEAD_TIMEOUT
    answer_headers: tuple[tuple[bytes, bytes], ...] = ()

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._await_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._await_head()

    def _await_head(self) -> None:
        self.loop.call_later(self.head_timeout, self._head_deadline, self.cycle)

    def _head_deadline(self, cycle_then: object) -> None:
        if self.cycle is cycle_then and not self.transport.is_closing():  # no new request
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
        event = h11.Response(status_code=400, headers=[*headers, *self.answer_headers])
        for part in (event, h11.Data(data=msg.encode("ascii")), h11.EndOfMessage()):
            self.transport.write(self.conn.send(part))
        self.transport.close()


class LabelServer:
    """Serves one session on ``127.0.0.1:port`` (0: a free port) until :meth:`stop` or, when run
    in the main thread, SIGINT or SIGTERM. Raises ``OSError`` when the port cannot be bound."""

    def __init__(
        self, session: LabelSession, port: int = 0, *, head_timeout: float = HEAD_TIMEOUT
    ) -> None:
        self.session = session
        self.token = secrets.token_urlsafe(32)
        headers = security_headers(content_security_policy(render_label_page(session.page_data())))
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._socket.bind((HOST, port))
            self._socket.listen(MAX_CONNECTIONS)  # the printed URL answers from now on
        except OSError:
            self._socket.close()
            raise
        self.port: int = self._socket.getsockname()[1]
        app = Starlette(
            routes=_routes(session),
            middleware=[Middleware(_Guard, token=self.token, port=self.port)],
        )
        config = uvicorn.Config(
            app,
            http=self._protocol(headers, head_timeout),
            ws="none",
            lifespan="off",
            loop="asyncio",
            headers=headers,
            server_header=False,
            timeout_keep_alive=KEEP_ALIVE,
            limit_concurrency=MAX_CONNECTIONS,
            timeout_graceful_shutdown=STOP_GRACE,
            log_config=None,
            log_level="error",
            access_log=False,
        )
        self._server = uvicorn.Server(config)

    @staticmethod
    def _protocol(headers: list[tuple[str, str]], head_timeout: float) -> type[_Connection]:
        encoded = tuple((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers)
        attributes = {"head_timeout": head_timeout, "answer_headers": encoded}
        return type("LabelConnection", (_Connection,), attributes)

    @property
    def url(self) -> str:
        """The address to open: the page, with the token the browser exchanges for its cookie."""
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def serve_forever(self) -> None:
        """Answer until stopped (module docstring); the socket is closed on return."""
        try:
            self._server.run(sockets=[self._socket])
        finally:
            self._socket.close()

    def stop(self) -> None:
        """Ask :meth:`serve_forever` to return (from a signal handler or another thread)."""
        self._server.should_exit = True

    def wait_started(self, timeout: float) -> None:
        """Block until the server answers (for a server run in another thread).

        Raises:
            TimeoutError: not within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the label server did not start within {timeout:g} s")
            time.sleep(0.02)

    def close(self) -> None:
        """Release the port of a server that will not be run."""
        self._socket.close()
