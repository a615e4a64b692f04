"""The local server of ``clinjudge label`` (issue 26): the labelling page and the label saves
of one :class:`~clinjudge.agreement.labelling.LabelSession`, on 127.0.0.1 only (the standard
library's ``ThreadingHTTPServer``).

- ``GET /`` — the page, rendered with the labels saved so far (a reload shows them).
- ``GET /labels`` — the reviewer's label rows as JSON.
- ``POST /label`` — one label, a JSON object (:meth:`LabelSession.save`); answers
  ``{"row": …, "progress": …}``, or ``{"error": reason}`` with 400 (a field of the wrong
  format), 403 (no session token, another host, not JSON), 404 (no such text unit) or 500
  (the label file cannot be written).

A save must carry the session's token (``X-Clinjudge-Token``, embedded in the page) as a JSON
body, and every request must name this server as its ``Host``: another web page open in the
same browser can neither read the page nor post a label (a custom header and a JSON body need a
CORS pre-flight this server never grants; a DNS-rebound name is refused).
"""

from __future__ import annotations

import json
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from clinjudge.agreement.labelling import LabelSession
from clinjudge.agreement.labelling_store import BadLabel, UnknownUnit
from clinjudge.report.label_page import render_label_page

HOST = "127.0.0.1"
TOKEN_HEADER = "X-Clinjudge-Token"
MAX_BODY = 64 * 1024


class LabelServer(ThreadingHTTPServer):
    """Serves one session on ``127.0.0.1:port`` (0: a free port). Raises ``OSError`` when the
    port cannot be bound."""

    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, session: LabelSession, port: int = 0) -> None:
        self.session = session
        super().__init__((HOST, port), _Handler)

    @property
    def port(self) -> int:
        return self.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"


class _Handler(BaseHTTPRequestHandler):
    server: LabelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Quiet: the terminal shows the URL and nothing per request."""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _host_ok(self) -> bool:
        allowed = {f"{HOST}:{self.server.port}", f"localhost:{self.server.port}"}
        if self.headers.get("Host") in allowed:
            return True
        self._json(HTTPStatus.FORBIDDEN, {"error": "requests must name this server as Host"})
        return False

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if not self._host_ok():
            return
        path = urlsplit(self.path).path
        session = self.server.session
        if path == "/":
            html = render_label_page(session.page_data())
            self._send(HTTPStatus.OK, html.encode("utf-8"), "text/html; charset=utf-8")
        elif path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        elif path == "/labels":
            self._json(HTTPStatus.OK, session.labels.ordered_rows())
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no page {path}"})

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        if not self._host_ok():
            return
        session = self.server.session
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, MAX_BODY + 1))
        if urlsplit(self.path).path != "/label":
            self._json(HTTPStatus.NOT_FOUND, {"error": "labels are posted to /label"})
            return
        if self.headers.get(TOKEN_HEADER) != session.token:
            self._json(HTTPStatus.FORBIDDEN, {"error": "not this session's page (no token)"})
            return
        if not (self.headers.get("Content-Type") or "").startswith("application/json"):
            self._json(HTTPStatus.FORBIDDEN, {"error": "a label is a JSON body"})
            return
        try:
            if length > MAX_BODY:
                raise BadLabel("the label is too long")
            payload = json.loads(body.decode("utf-8"))
            if not isinstance(payload, dict):
                raise BadLabel("a label is a JSON object")
            result = session.save(payload)
        except UnknownUnit as e:
            self._json(HTTPStatus.NOT_FOUND, {"error": str(e)})
        except (BadLabel, ValueError) as e:  # ValueError: not JSON, not UTF-8
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(e)})
        except OSError as e:  # the label file cannot be written: the page says so
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"not saved: {e}"})
        else:
            self._json(HTTPStatus.OK, result)
