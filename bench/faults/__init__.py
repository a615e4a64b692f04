"""The attacks of ``bench/bench_faults.py`` (issue 35), one module per surface.

Each module defines ``ATTACKS``: a list of :class:`Attack`. An attack runs the product as a
user would (the ``clinjudge`` command in its own process, or the label server over HTTP) in a
fresh working directory and says whether the product held, with one line of detail (what it
did, the number that decides). ``bench_faults.py`` times each one and prints the table.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: The ``clinjudge`` command of the interpreter running the bench. Children started as
#: ``python -P -c …`` (-P: no working directory on ``sys.path``) import the clinjudge that
#: PYTHONPATH names, so ``PYTHONPATH=<old checkout>`` attacks the old code from any directory.
CLI = str(Path(sys.executable).with_name("clinjudge"))


@dataclass(frozen=True)
class Outcome:
    held: bool
    detail: str


@dataclass(frozen=True)
class Attack:
    """``item``: the issue's item number (1–8); ``run(workdir)`` → :class:`Outcome`."""

    item: int
    name: str
    run: Callable[[Path], Outcome]


def clinjudge(
    args: list[str], *, cwd: Path | None = None, timeout: float = 600, **kw
) -> subprocess.CompletedProcess:
    """``clinjudge ARGS`` in its own process (stdout and stderr captured as text)."""
    return subprocess.run(
        [CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout, **kw
    )


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:160] if lines else ""
