"""The ``clinjudge label`` server trusts only its user (issue 35, items 4 and 5): the token of
the printed URL is exchanged for an HttpOnly, SameSite=Strict cookie and nothing is served
without it; a request is judged by its head before any body is read (token, Content-Length,
Origin, Host, content type); bad JSON is a 400 with a reason; every answer carries the framing,
content-security and caching headers; and hundreds of half-open connections do not keep the
command from stopping.

The HTTP tests speak to the server only through the URL it prints, as a user's browser or a
script would. The run is a copy of the agreement fixture (two aci-demo notes)."""

from __future__ import annotations

import http.client
import json
import shutil
import signal
import socket
import threading
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from label_helpers import label_process, serving, session

FIXTURE = Path(__file__).parent / "fixtures" / "agreement"
NOTE_TEXT = "Ms. Hill is a 41-year-old female"  # D2N005's note: must never leak
LABEL = {"encounter": "D2N005", "system": "reference", "unit": 6, "label": "unsupported"}
TOKEN_HEADER = "X-Clinjudge-Token"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE / "run", tmp_path / "run"))


class Answer:
    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body
        self.text = body.decode("utf-8", "replace")

    def error(self) -> str:
        return json.loads(self.text)["error"]


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname, parts.port


def origin_of(url: str) -> str:
    return f"http://{urlsplit(url).netloc}"


def token_of(url: str) -> str | None:
    return parse_qs(urlsplit(url).query).get("token", [None])[0]


def call(url: str, method: str = "GET", path: str = "/", body: bytes | None = None, **headers):
    """One request on a fresh connection; ``headers`` with ``_`` for ``-``; no redirect followed,
    no cookie kept. A body is sent with its Content-Length."""
    connection = http.client.HTTPConnection(*address(url), timeout=10)
    try:
        sent = {name.replace("_", "-"): value for name, value in headers.items()}
        connection.request(method, path, body=body, headers=sent)
        answer = connection.getresponse()
        return Answer(answer.status, answer.headers, answer.read())
    finally:
        connection.close()


def signed_in(url: str) -> str:
    """The cookie the printed URL's token is exchanged for (``name=value``)."""
    answer = call(url, path=urlsplit(url).path + "?" + urlsplit(url).query)
    assert answer.status == 303, answer.text
    return answer.headers["Set-Cookie"].split(";")[0]


def raw(url: str, head: bytes, wait: float = 5.0) -> tuple[bytes, float]:
    """Send the bytes of a request head (and no body); what comes back within ``wait`` seconds
    (until the server closes or the answer is complete), and how long it took."""
    started = time.monotonic()
    with socket.create_connection(address(url), timeout=wait) as s:
        s.sendall(head)
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
                head_end = got.find(b"\r\n\r\n")
                if head_end >= 0:
                    length = [
                        int(line.split(b":", 1)[1])
                        for line in got[:head_end].split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ]
                    if length and len(got) >= head_end + 4 + length[0]:
                        break
        except TimeoutError:
            pass
    return got, time.monotonic() - started


def status_of(reply: bytes) -> int | None:
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.1 ") else None


def post_head(url: str, *lines: str) -> bytes:
    host = urlsplit(url).netloc
    head = ["POST /label HTTP/1.1", f"Host: {host}", "Content-Type: application/json", *lines]
    return ("\r\n".join(head) + "\r\n\r\n").encode()


def test_the_url_token_is_exchanged_for_a_strict_http_only_cookie(run_dir):
    with serving(run_dir) as server:
        token = token_of(server.url)
        assert token and len(token) >= 24
        answer = call(server.url, path=f"/?token={token}")
        assert answer.status == 303 and answer.headers["Location"] == "/"
        assert NOTE_TEXT not in answer.text
        cookie = answer.headers["Set-Cookie"]
        attributes = {a.strip().lower() for a in cookie.split(";")[1:]}
        assert {"httponly", "samesite=strict", "path=/"} <= attributes
        assert cookie.split(";")[0].split("=", 1)[1] == token
        page = call(server.url, Cookie=cookie.split(";")[0])
        assert page.status == 200 and "D2N005" in page.text
        note = call(server.url, path="/note/0", Cookie=cookie.split(";")[0])
        assert note.status == 200 and NOTE_TEXT in note.text
        assert token not in page.text  # the page no longer carries the token
        assert call(server.url, path="/labels", Cookie=cookie.split(";")[0]).text == "[]"
        saved = call(
            server.url,
            "POST",
            "/label",
            json.dumps(LABEL).encode(),
            Cookie=cookie.split(";")[0],
            Content_Type="application/json",
            Origin=origin_of(server.url),
        )
        assert saved.status == 200, saved.text
        assert json.loads(saved.text)["row"]["unit"] == 6


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/?token=not-the-token"),
        ("GET", "/labels"),
        ("GET", "/note/0"),
        ("GET", "/favicon.ico"),
        ("GET", "/nowhere"),
        ("POST", "/label"),
    ],
)
def test_nothing_is_served_without_the_cookie(run_dir, method, path):
    with serving(run_dir) as server:
        body = json.dumps(LABEL).encode() if method == "POST" else None
        answer = call(server.url, method, path, body, Content_Type="application/json")
        name = signed_in(server.url).split("=")[0]
        wrong_cookie = call(server.url, method, path, body, Cookie=f"{name}=guess")
    for refused in (answer, wrong_cookie):
        assert refused.status == 403, refused.text
        assert NOTE_TEXT not in refused.text and "D2N005" not in refused.text
        assert len(refused.error().splitlines()) == 1
    assert not (run_dir / "labels" / "alice.jsonl").exists()


def test_a_script_may_send_the_token_as_a_header(run_dir):
    with serving(run_dir) as server:
        token = token_of(server.url)
        assert call(server.url, path="/labels", X_Clinjudge_Token=token).status == 200
        saved = call(
            server.url,
            "POST",
            "/label",
            json.dumps(LABEL).encode(),
            X_Clinjudge_Token=token,
            Content_Type="application/json",
        )
        assert saved.status == 200, saved.text
        wrong = call(server.url, path="/labels", X_Clinjudge_Token=token[:-1] + "x")
        assert wrong.status == 403


def test_another_site_another_host_or_a_form_cannot_save(run_dir):
    with serving(run_dir) as server:
        cookie = signed_in(server.url)
        body = json.dumps(LABEL).encode()
        json_type = {"Cookie": cookie, "Content-Type": "application/json"}

        def post(**headers):
            return call(server.url, "POST", "/label", body, **json_type, **headers)

        assert post(Origin="http://evil.example").status == 403
        assert post(Origin="null").status == 403
        assert post(Host="evil.example").status == 403  # a DNS-rebound name
        assert post(Host=f"evil.example:{address(server.url)[1]}").status == 403
        form = call(server.url, "POST", "/label", body, Cookie=cookie, Content_Type="text/plain")
        assert form.status == 415 and "JSON" in form.error()
        assert not (run_dir / "labels" / "alice.jsonl").exists()
        assert post(Origin=origin_of(server.url)).status == 200


def test_the_token_is_checked_before_the_body_is_read(run_dir):
    with serving(run_dir) as server:
        reply, seconds = raw(server.url, post_head(server.url, "Content-Length: 50000000"))
    assert status_of(reply) == 403, reply[:200]
    assert seconds < 2


@pytest.mark.parametrize(
    ("length", "status"),
    [(None, 411), ("-1", 400), ("abc", 400), ("50000000", 413), ("1 000", 400)],
)
def test_bad_content_lengths_are_refused_at_once_without_reading_a_body(run_dir, length, status):
    with serving(run_dir) as server:
        lines = [f"{TOKEN_HEADER}: {token_of(server.url)}"]
        if length is not None:
            lines.append(f"Content-Length: {length}")
        reply, seconds = raw(server.url, post_head(server.url, *lines))
    assert status_of(reply) == status, reply[:300]
    assert seconds < 2
    assert b"Traceback" not in reply


def test_a_chunked_body_is_refused(run_dir):
    with serving(run_dir) as server:
        head = post_head(
            server.url, f"{TOKEN_HEADER}: {token_of(server.url)}", "Transfer-Encoding: chunked"
        )
        reply, seconds = raw(server.url, head)
    assert status_of(reply) == 411 and seconds < 2


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"encounter": "D2N005", "reason": "\xff\xfe"}', "not UTF-8"),
        (b'{"encounter": ', "invalid JSON"),
        (b"[1, 2]", "a JSON object"),
        (b"", "invalid JSON"),
    ],
)
def test_bad_json_is_a_400_with_a_reason(run_dir, body, reason):
    with serving(run_dir) as server:
        answer = call(
            server.url,
            "POST",
            "/label",
            body,
            X_Clinjudge_Token=token_of(server.url),
            Content_Type="application/json",
        )
    assert answer.status == 400, answer.text
    assert reason in answer.error() and "Traceback" not in answer.text


SECURITY = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}
CSP = ("default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'")


def headers_of(reply: bytes) -> dict[str, str]:
    head = reply.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
    return {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in head)}


def test_every_answer_carries_the_framing_and_content_security_headers(run_dir):
    with serving(run_dir) as server:
        token = token_of(server.url)
        host = f"Host: {urlsplit(server.url).netloc}"
        cookie = f"Cookie: {signed_in(server.url).strip()}"
        heads = {
            "page": f"GET / HTTP/1.1\r\n{host}\r\n{cookie}\r\n\r\n",
            "exchange": f"GET /?token={token} HTTP/1.1\r\n{host}\r\n\r\n",
            "refused": f"GET / HTTP/1.1\r\n{host}\r\n\r\n",
            "not found": f"GET /nowhere HTTP/1.1\r\n{host}\r\n{cookie}\r\n\r\n",
            "bad length (the HTTP parser's own 400)": post_head(
                server.url, "Content-Length: -1"
            ).decode(),
            "no length": post_head(server.url, cookie).decode(),
            "too long": post_head(server.url, cookie, "Content-Length: 50000000").decode(),
            "not HTTP": "\x16\x03\x01 hello\r\n\r\n",
        }
        replies = {name: raw(server.url, head.encode())[0] for name, head in heads.items()}
    for name, reply in replies.items():
        got = headers_of(reply)
        for header, value in SECURITY.items():
            assert got.get(header.lower()) == value, (name, header, reply[:400])
        policy = got.get("content-security-policy", "")
        assert all(part in policy for part in CSP), (name, policy)
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    page_policy = headers_of(replies["page"])["content-security-policy"]
    assert "connect-src 'self'" in page_policy and "script-src 'sha256-" in page_policy


def test_hundreds_of_half_open_connections_do_not_keep_the_command_from_stopping(run_dir):
    with label_process(run_dir) as (proc, url):
        opened: list[socket.socket] = []

        def connect(i: int) -> None:
            try:
                s = socket.create_connection(address(url), timeout=20)
                if i % 2:  # half of them begin a request and never finish its head
                    s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                opened.append(s)
            except OSError:
                pass

        threads = [threading.Thread(target=connect, args=(i,)) for i in range(320)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(opened) >= 300
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        seconds = time.monotonic() - started
        for s in opened:
            s.close()
    assert proc.returncode == 0, err
    assert seconds < 3, f"{seconds:.1f} s to stop"
    assert "stopped:" in err and "Traceback" not in err


def test_a_connection_that_never_finishes_its_head_is_closed(run_dir):
    with serving(run_dir, head_timeout=1) as server:
        silent = socket.create_connection(address(server.url), timeout=10)
        slow = socket.create_connection(address(server.url), timeout=10)
        started = time.monotonic()
        try:  # a head begun, then a byte now and then: closed all the same
            slow.sendall(b"GET / HTTP/1.1\r\n")
            while time.monotonic() - started < 5:
                time.sleep(0.2)
                slow.sendall(b"X")
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert time.monotonic() - started < 3
        assert silent.recv(100) == b""  # closed by the server, having sent nothing
        assert time.monotonic() - started < 3
        silent.close()
        slow.close()


def test_the_policy_allows_the_inline_script_and_styles_of_every_page(run_dir):
    from clinjudge.report.label_page import inline_hashes, render_label_page

    blind = inline_hashes(render_label_page(session(run_dir).page_data()))
    shown = inline_hashes(render_label_page(session(run_dir, "bob", show=True).page_data()))
    assert blind == shown  # the data changes; the script and style sheets do not
    assert len(blind["script"]) == 1 and len(blind["style"]) == 2
