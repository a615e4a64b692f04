"""The labelling session of the bundled agreement fixture's run, its server in a thread, and the
``clinjudge label`` command in a process of its own, for the ``clinjudge label`` tests (without
and with a browser)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

from clinjudge.agreement.labelling import LabelSession, open_session
from clinjudge.agreement.labelling_server import TOKEN_HEADER, LabelServer
from clinjudge.agreement.runs import read_run
from clinjudge.datasets import load_items
from clinjudge.datasets.items import Item

ACI_DEMO = Path(__file__).resolve().parents[1] / "eval_sets" / "aci-demo" / "data.jsonl"


def session(
    run_dir: Path, reviewer: str = "alice", show: bool = False, items: list[Item] | None = None
) -> LabelSession:
    """The session over ``items`` (default: the two aci-demo notes the fixture's run records)."""
    if items is None:
        items = load_items("aci-demo", limit=2).items
    return open_session(read_run(run_dir), items, reviewer, show_verdicts=show)


@contextmanager
def serving(
    run_dir: Path, show: bool = False, items: list[Item] | None = None, **options: Any
) -> Iterator[LabelServer]:
    """A server over ``session(run_dir, items=items)`` answering in a thread (``options`` go to
    :class:`LabelServer`); its ``url`` is the one the command prints (token included)."""
    server = LabelServer(session(run_dir, show=show, items=items), **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.wait_started(timeout=30)
    try:
        yield server
    finally:
        server.stop()
        thread.join(timeout=30)
        assert not thread.is_alive()


def label_command(run_dir: Path, reviewer: str) -> list[str]:
    clinjudge = str(Path(sys.executable).with_name("clinjudge"))
    return [clinjudge, "label", str(run_dir), "--reviewer", reviewer, "--no-browser"]


@contextmanager
def label_process(run_dir: Path, reviewer: str = "alice") -> Iterator[tuple[subprocess.Popen, str]]:
    """``clinjudge label RUN_DIR --reviewer REVIEWER`` in a process started as a script in the
    background starts it (SIGINT ignored), with the URL it printed; stopped with SIGTERM on the
    way out unless the test stopped it."""
    proc = subprocess.Popen(
        label_command(run_dir, reviewer),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read()
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)


def many_notes_run(root: Path, count: int) -> tuple[Path, list[Item]]:
    """A run directory of ``count`` notes (``root/run``) and its dataset items: the aci-demo
    rows in turn, encounter ``S001``…, each note ending in ``Synthetic copy NNN of ENCOUNTER.``
    so that no two notes read the same; one offline judge that judged every note (no claims)."""
    source = [json.loads(line) for line in ACI_DEMO.read_text("utf-8").splitlines() if line]
    data, rows = root / "data.jsonl", []
    for k in range(count):
        row = dict(source[k % len(source)])
        row["note"] = (
            row["note"].rstrip() + f"\n\nSynthetic copy {k + 1:03d} of {row['encounter_id']}."
        )
        row["encounter_id"] = f"S{k + 1:03d}"
        rows.append(row)
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    run_dir = root / "run"
    (run_dir / "runs").mkdir(parents=True)
    ids = [r["encounter_id"] for r in rows]
    manifest = {
        "items": dict.fromkeys(ids, "synthetic"),
        "judges": {"lexical": {"backend": "offline", "mode": "lexical"}},
        "command": {"dataset": str(data), "judges": "lexical", "load": {}},
    }
    (run_dir / "run.json").write_text(json.dumps(manifest), "utf-8")
    judged = "".join(json.dumps({"id": i, "claims": [], "verdicts": []}) + "\n" for i in ids)
    (run_dir / "runs" / "lexical.jsonl").write_text(judged, "utf-8")
    return run_dir, load_items(data).items


class Served:
    """The page's address for :func:`browser_helpers.open_page`, which opens ``as_uri()``."""

    def __init__(self, url: str) -> None:
        self.url = url

    def as_uri(self) -> str:
        return self.url


def press(tab, *keys: str) -> None:
    for key in keys:
        tab.keyboard.press(key)
    tab.wait_for_selector("body[data-pending='0']")  # no eval: the page's CSP forbids it
    assert "NOT SAVED" not in tab.locator("#status").inner_text()


def current(tab) -> str:
    return tab.locator("#note-text .unit.current").get_attribute("data-unit")


def request(server, path, body=None, token=True, headers=None):
    """``path`` of the server as a script asks it (the token in a header; ``body`` JSON posted):
    the status and the text answered."""
    data = None if body is None else json.dumps(body).encode()
    sent = {"Content-Type": "application/json"} | (headers or {})
    if token:  # as a script sends it: the token of the printed URL in a header
        sent[TOKEN_HEADER] = parse_qs(urlsplit(server.url).query)["token"][0]
    req = urllib.request.Request(urljoin(server.url, path), data=data, headers=sent)
    try:
        with urllib.request.urlopen(req, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
