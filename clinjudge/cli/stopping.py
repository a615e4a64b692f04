"""Stopping a long command: Ctrl-C and SIGTERM, from a terminal or from a script.

A shell script that starts a command in the background (``clinjudge compare … &``) starts it
with SIGINT ignored, and Python then never turns Ctrl-C (or ``kill -INT``) into
``KeyboardInterrupt``; SIGTERM, what ``kill``, ``timeout`` and job schedulers send, kills a
Python process on the spot. :func:`stop_signals` gives every long command one behaviour for
both, however it was started: SIGINT is Python's Ctrl-C again, and SIGTERM is handled as a
Ctrl-C (so ``asyncio.run`` cancels the run gracefully and rows already written stay) whose exit
code is 143 instead of 130. :func:`interrupt_keeps` turns either into one line saying what the
run directory keeps.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import typer

#: Exit codes of a run stopped by SIGINT (Ctrl-C) and by SIGTERM (128 + the signal number).
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


class _Stopped:
    """What stopped the run (``None`` while it runs)."""

    by: str | None = None


@contextmanager
def stop_signals() -> Iterator[None]:
    """Within the block, SIGINT raises ``KeyboardInterrupt`` (also when it was inherited as
    ignored) and SIGTERM is turned into a SIGINT (module docstring); the handlers of before are
    put back after it. Outside the main thread it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum: int, frame: object) -> None:
        _Stopped.by = "SIGTERM"
        os.kill(os.getpid(), signal.SIGINT)

    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    _Stopped.by = None
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def stopped_by() -> str:
    """``SIGTERM`` when SIGTERM stopped the run, else ``Ctrl-C``."""
    return _Stopped.by or "Ctrl-C"


def exit_code() -> int:
    """130 for Ctrl-C (SIGINT), 143 for SIGTERM."""
    return EXIT_TERMINATED if _Stopped.by == "SIGTERM" else EXIT_INTERRUPTED


@contextmanager
def stopped_keeps(kept: Callable[[], str]) -> Iterator[None]:
    """Ctrl-C or SIGTERM (:func:`stop_signals` in force): one line, ``interrupted (BY): `` and
    ``kept()`` (what stays on disk and how to resume), then exit code 130 or 143 (no
    traceback)."""
    with stop_signals():
        try:
            yield
        except KeyboardInterrupt:
            print(f"interrupted ({stopped_by()}): {kept()}", file=sys.stderr)
            raise typer.Exit(exit_code()) from None


def interrupt_keeps(out: Path, total: int) -> AbstractContextManager[None]:
    """:func:`stopped_keeps` for a run directory: what it keeps of each judge."""

    def kept() -> str:
        from clinjudge.run_dir import RunDir

        told = ", ".join(f"{j} {n} of {total}" for j, n in RunDir(out).kept().items()) or "nothing"
        return f"{out} keeps {told} items judged; the same command resumes"

    return stopped_keeps(kept)
