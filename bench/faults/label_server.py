"""Attacks on ``clinjudge label`` (issue 35, items 1, 4 and 5): a real label server, started
as a user starts it, attacked over HTTP by another local program.

Each attack copies one small run directory (two aci-demo notes judged offline by ``clinjudge
compare``, made once per bench process) and starts ``clinjudge label`` on it. The attacks speak
raw HTTP, so they run against any version of the server: where the printed URL holds no token
(the server before issue 35), the token is read from the page, which then carried it.
"""

from __future__ import annotations

import atexit
import http.client
import json
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from faults import CLI, Attack, Outcome, clinjudge, last_line

NOTE_TEXT = "Ms. Hill is a 41-year-old female"  # in D2N005's note: must never leak
LABEL = {"encounter": "D2N005", "system": "reference", "unit": 1, "label": "supported"}
TOKEN_HEADER = "X-Clinjudge-Token"
PROMPT = 2.0  # seconds within which a refusal must come
_RUNS: dict[str, Path] = {}


def _run_dir(workdir: Path) -> Path:
    """A copy, in ``workdir``, of the run every attack labels (compared once per process)."""
    if "run" not in _RUNS:
        home = Path(tempfile.mkdtemp(prefix="faults-label-run-"))
        atexit.register(shutil.rmtree, home, True)
        made = clinjudge(
            [
                "compare",
                "aci-demo",
                "--limit",
                "2",
                "--judges",
                "inference-aware",
                "--backend",
                "offline",
                "--out",
                str(home / "run"),
            ]
        )
        if made.returncode != 0:
            raise RuntimeError(f"compare failed: {last_line(made.stderr)}")
        _RUNS["run"] = home / "run"
    return Path(shutil.copytree(_RUNS["run"], workdir / "run"))


class Server:
    """A running ``clinjudge label`` process and what a client needs to speak to it."""

    def __init__(self, proc: subprocess.Popen, url: str) -> None:
        self.proc, self.url = proc, url
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
        self.netloc = parts.netloc
        self._token = parse_qs(parts.query).get("token", [None])[0]

    @property
    def token(self) -> str:
        """The session's token: in the URL, or (the server before issue 35) in the page."""
        if self._token is None:
            page = self.request("GET", "/")[2].decode()
            self._token = page.split('"token": "')[1].split('"')[0]
        return self._token

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            answer = connection.getresponse()
            return answer.status, dict(answer.headers), answer.read()
        finally:
            connection.close()

    def raw(self, head: str, wait: float = 5.0) -> tuple[int | None, float]:
        """Send a request head and no body; the status that comes back within ``wait`` seconds
        (``None``: none) and the seconds it took."""
        started = time.monotonic()
        with socket.create_connection((self.host, self.port), timeout=wait) as s:
            s.sendall(head.encode())
            try:
                first = s.recv(64)
            except TimeoutError:
                return None, time.monotonic() - started
        seconds = time.monotonic() - started
        if not first.startswith(b"HTTP/1.1 "):
            return None, seconds
        return int(first.split(b" ", 2)[1]), seconds

    def post_head(self, *lines: str) -> str:
        head = ["POST /label HTTP/1.1", f"Host: {self.netloc}", "Content-Type: application/json"]
        return "\r\n".join([*head, *lines]) + "\r\n\r\n"

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 120) -> tuple[float, str]:
        """Signal the process; the seconds it took to exit and its stderr."""
        started = time.monotonic()
        self.proc.send_signal(sig)
        try:
            _, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return time.monotonic() - started, err


def _command(run: Path, reviewer: str) -> list[str]:
    return [CLI, "label", str(run), "--reviewer", reviewer, "--no-browser"]


@contextmanager
def serving(run: Path, reviewer: str = "alice") -> Iterator[Server]:
    proc = subprocess.Popen(
        _command(run, reviewer), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    url = proc.stdout.readline().strip()
    if not url.startswith("http://"):
        proc.kill()
        raise RuntimeError(f"clinjudge label did not start: {last_line(proc.stderr.read())}")
    server = Server(proc, url)
    try:
        yield server
    finally:
        if proc.poll() is None:
            server.stop()


def page_without_token(workdir: Path) -> Outcome:
    with serving(_run_dir(workdir)) as server:
        status, _, body = server.request("GET", "/")
        note_status, _, note = server.request("GET", "/note/0")  # a note, as the page fetches it
    leaked = NOTE_TEXT in (body + note).decode("utf-8", "replace")
    told = f"{status} (a note: {note_status}), "
    told += f"the notes served ({len(body + note):,} bytes)" if leaked else "no note text"
    return Outcome(status == note_status == 403 and not leaked, told)


def post_without_token(workdir: Path) -> Outcome:
    run = _run_dir(workdir)
    with serving(run) as server:
        status, _, _ = server.request(
            "POST", "/label", json.dumps(LABEL).encode(), {"Content-Type": "application/json"}
        )
        huge, seconds = server.raw(server.post_head("Content-Length: 50000000"))
    saved = (run / "labels" / "alice.jsonl").exists()
    held = status == 403 and not saved and huge == 403 and seconds < PROMPT
    told = f"valid label: {status}{', saved' if saved else ''}; declaring 50 MB, no body: "
    told += f"{huge} in {seconds:.1f} s" if huge else f"no answer in {seconds:.1f} s (reading it)"
    return Outcome(held, told)


def _bad_length(workdir: Path, line: str | None, expected: int) -> Outcome:
    with serving(_run_dir(workdir)) as server:
        lines = [f"{TOKEN_HEADER}: {server.token}"] + ([line] if line else [])
        status, seconds = server.raw(server.post_head(*lines))
    if status is None:
        return Outcome(False, f"no answer in {seconds:.1f} s: the server waits for a body")
    held = 400 <= status < 500 and seconds < PROMPT
    return Outcome(held, f"{status} in {seconds:.2f} s (expected {expected})")


def length_negative(workdir: Path) -> Outcome:
    return _bad_length(workdir, "Content-Length: -1", 400)


def length_missing(workdir: Path) -> Outcome:
    return _bad_length(workdir, None, 411)


def length_huge(workdir: Path) -> Outcome:
    return _bad_length(workdir, "Content-Length: 50000000", 413)


def deep_json(workdir: Path) -> Outcome:
    body = b"[" * 20_000 + b"]" * 20_000
    with serving(_run_dir(workdir)) as server:
        headers = {TOKEN_HEADER: server.token, "Content-Type": "application/json"}
        try:
            status, _, answer = server.request("POST", "/label", body, headers)
        except (ConnectionError, http.client.HTTPException) as exc:
            status, answer = None, type(exc).__name__.encode()
        _, err = server.stop()
    traceback = "Traceback" in err
    if status == 400 and not traceback:
        return Outcome(True, f"400: {json.loads(answer)['error'][:60]}")
    told = f"{status or 'no answer'}" + ("; a traceback on stderr" if traceback else "")
    return Outcome(False, told)


def half_open_then_sigterm(workdir: Path) -> Outcome:
    with serving(_run_dir(workdir)) as server:
        opened: list[socket.socket] = []

        def connect(i: int) -> None:
            try:
                s = socket.create_connection((server.host, server.port), timeout=30)
                if i % 2:
                    s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                opened.append(s)
            except OSError:
                pass

        threads = [threading.Thread(target=connect, args=(i,), daemon=True) for i in range(800)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(40)
        seconds, err = server.stop()
        for s in opened:
            s.close()
    code = server.proc.returncode
    held = seconds < 3 and code == 0
    return Outcome(held, f"{len(opened)} open, exit {code} {seconds:.2f} s after SIGTERM")


def two_servers_one_reviewer(workdir: Path) -> Outcome:
    run = _run_dir(workdir)
    with serving(run) as first:
        proc = subprocess.Popen(
            _command(run, "alice"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        url = proc.stdout.readline().strip()  # a URL: it serves; nothing: it exited
        if url:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    if not url and proc.returncode == 2 and f"pid {first.proc.pid}" in err:
        return Outcome(True, f"the second exits 2 naming the first (pid {first.proc.pid})")
    return Outcome(False, f"a second server ran at {url or '?'}: two writers of one file")


def stale_lock(workdir: Path) -> Outcome:
    run = _run_dir(workdir)
    gone = subprocess.Popen(["true"])
    gone.wait()
    holder = {"pid": gone.pid, "host": socket.gethostname(), "command": "clinjudge label"}
    (run / "labels").mkdir(exist_ok=True)
    (run / "labels" / ".alice.lock").write_text(json.dumps(holder))
    with serving(run) as server:
        _, err = server.stop(signal.SIGINT)
    if f"took over the lock left by pid {gone.pid}" in err:
        return Outcome(True, f"served after: took over the lock left by pid {gone.pid}")
    return Outcome(False, "served without a word: no lock to take over (two could write)")


def frame_and_csp_headers(workdir: Path) -> Outcome:
    with serving(_run_dir(workdir)) as server:
        auth = {TOKEN_HEADER: server.token}
        answers = {
            "page": server.request("GET", "/", headers=auth)[1],
            "404": server.request("GET", "/nowhere", headers=auth)[1],
            "403": server.request("POST", "/label", b"{}", {"Content-Type": "text/plain"})[1],
        }
    missing = []
    for name, headers in answers.items():
        lower = {k.lower(): v for k, v in headers.items()}
        policy = lower.get("content-security-policy", "")
        if lower.get("x-frame-options") != "DENY":
            missing.append(f"{name}: no X-Frame-Options")
        if "frame-ancestors 'none'" not in policy or "unsafe-inline" in policy:
            missing.append(f"{name}: no CSP" if not policy else f"{name}: a weak CSP")
    if missing:
        return Outcome(False, "; ".join(missing[:3]))
    return Outcome(True, "DENY and a hash-based CSP on the page, a 404 and a 403")


def line_separator_comment(workdir: Path) -> Outcome:
    run = _run_dir(workdir)
    reason = "pasted from a PDF:\u2028second line\u2029third"
    with serving(run) as server:
        headers = {TOKEN_HEADER: server.token, "Content-Type": "application/json"}
        body = json.dumps(LABEL | {"label": "unsupported", "reason": reason}).encode()
        status, _, _ = server.request("POST", "/label", body, headers)
    if status != 200:
        return Outcome(False, f"the save was answered {status}")
    try:
        with serving(run) as again:
            auth = {TOKEN_HEADER: again.token}
            rows = json.loads(again.request("GET", "/labels", headers=auth)[2])
    except RuntimeError as exc:
        return Outcome(False, f"the next session does not start: {str(exc)[-90:]}")
    labels = run / "labels" / "alice.jsonl"
    out = workdir / "agreement"
    scored = clinjudge(["agreement", str(run), "--labels", str(labels), "--out", str(out)])
    if rows and rows[0]["reason"] == reason and scored.returncode == 0:
        return Outcome(True, "saved, read by the next session and by agreement")
    return Outcome(False, f"read back {rows[:1]}, agreement exit {scored.returncode}")


ATTACKS = [
    Attack(5, "label: page without token or cookie", page_without_token),
    Attack(5, "label: post without token (valid; 50 MB declared)", post_without_token),
    Attack(5, "label: Content-Length -1", length_negative),
    Attack(5, "label: Content-Length missing", length_missing),
    Attack(5, "label: Content-Length 50 MB, no body", length_huge),
    Attack(5, "label: JSON nested 20,000 deep", deep_json),
    Attack(5, "label: 800 half-open connections, then SIGTERM", half_open_then_sigterm),
    Attack(5, "label: framing and content-security headers", frame_and_csp_headers),
    Attack(4, "label: two servers on one reviewer's file", two_servers_one_reviewer),
    Attack(4, "label: a stale lock of a dead process", stale_lock),
    Attack(1, "label: a comment holding U+2028 saved and read back", line_separator_comment),
]
