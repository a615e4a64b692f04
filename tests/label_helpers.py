"""The labelling session of the bundled agreement fixture's run, and its server in a thread,
for the ``clinjudge label`` tests (without and with a browser)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from clinjudge.agreement.labelling import LabelSession, open_session
from clinjudge.agreement.labelling_server import LabelServer
from clinjudge.agreement.runs import read_run
from clinjudge.datasets import load_items


def session(run_dir: Path, reviewer: str = "alice", show: bool = False) -> LabelSession:
    items = load_items("aci-demo", limit=2).items  # the dataset the fixture's run.json records
    return open_session(read_run(run_dir), items, reviewer, show_verdicts=show)


@contextmanager
def serving(run_dir: Path, show: bool = False) -> Iterator[LabelServer]:
    server = LabelServer(session(run_dir, show=show))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
