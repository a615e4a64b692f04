"""A page of a report in headless Chromium (Debian's, driven by Playwright) for the viewer
tests: skipped with its reason when Chromium is missing, a failure instead when
``CLINJUDGE_REQUIRE_BROWSER`` is set (as ``.ci/run`` does); no page error and no
content-security-policy violation may occur."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def open_page(html: Path, *, ready: bool = True) -> Iterator:
    """The loaded page (``body[data-ready='1']``, unless ``ready`` is false: whatever the
    address answered); asserts no page error and no CSP violation on the way out."""
    binary = chromium()
    if binary is None:
        if os.environ.get("CLINJUDGE_REQUIRE_BROWSER"):
            pytest.fail("no chromium on PATH (CI installs Debian's chromium)")
        pytest.skip("no chromium on PATH: install Debian's chromium to run the browser tests")
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=binary, args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        tab.on("pageerror", lambda e: errors.append(str(e)))
        tab.on(
            "console",
            lambda m: "Content Security Policy" in m.text and errors.append(m.text),
        )
        tab.goto(html.as_uri())
        if ready:
            tab.wait_for_selector("body[data-ready='1']")
        yield tab
        browser.close()
    assert errors == [], errors
