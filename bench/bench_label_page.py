"""What the first page of ``clinjudge label`` costs on a run of many notes (issue 37, item 7):
a synthetic run of N notes (the aci-demo notes in turn, each made unique; ``tests/label_helpers``
builds it), served by :class:`clinjudge.agreement.labelling_server.LabelServer` in a thread.

Prints the seconds to open the session (units cut and written), the bytes and seconds of the
first ``GET /``, and — when Chromium is installed — the seconds from opening the printed URL in
headless Chromium to the page being ready (``body[data-ready='1']``: the first note shown).

Usage: ``python bench/bench_label_page.py [--notes 300] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from label_helpers import many_notes_run  # noqa: E402

from clinjudge.agreement.labelling import open_session  # noqa: E402
from clinjudge.agreement.labelling_server import TOKEN_HEADER, LabelServer  # noqa: E402
from clinjudge.agreement.runs import read_run  # noqa: E402


def first_page(url: str) -> tuple[int, float]:
    """The bytes of ``GET /`` (signed in by the token header) and the seconds it took."""
    token = parse_qs(urlsplit(url).query)["token"][0]
    request = urllib.request.Request(url.split("?")[0], headers={TOKEN_HEADER: token})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=60) as answer:
        size = len(answer.read())
    return size, time.perf_counter() - started


def first_render(url: str) -> float | None:
    """Seconds from opening ``url`` in headless Chromium to the page being ready, or ``None``
    without Chromium."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        return None
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=binary, args=["--no-sandbox"])
        tab = browser.new_page()
        started = time.perf_counter()
        tab.goto(url)
        tab.wait_for_selector("body[data-ready='1']", timeout=120_000)
        took = time.perf_counter() - started
        browser.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir, items = many_notes_run(Path(tmp), args.notes)
        started = time.perf_counter()
        session = open_session(read_run(run_dir), items, "bench")
        opened = time.perf_counter() - started
        server = LabelServer(session)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        server.wait_started(timeout=30)
        try:
            pages = [first_page(server.url) for _ in range(args.repeat)]
            renders = [first_render(server.url) for _ in range(args.repeat)]
        finally:
            server.stop()
            thread.join(timeout=30)
    print(f"notes: {args.notes}; session opened in {opened:.2f} s")
    best = min(s for _, s in pages)
    print(f"first page: {pages[0][0]:,} bytes; GET / in {best:.3f} s (best of {args.repeat})")
    if renders[0] is None:
        print("first render: no chromium on PATH")
    else:
        print(f"first render: {min(renders):.2f} s (best of {args.repeat}, headless Chromium)")


if __name__ == "__main__":
    main()
