"""Progress on stderr: a bar per judge of a dataset run, and a bar for one long note."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from clinjudge.cli.common import stderr


@contextmanager
def progress_bars():
    """A rich progress bar per judge on stderr, with the time left; yields
    ``progress(name, total) -> advance``."""
    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=stderr,
        transient=False,
    )

    def start(name: str, total: int) -> Callable[[], None]:
        task = bars.add_task(f"{name:>16}", total=total)
        return lambda: bars.advance(task)

    with bars:
        yield start


#: A note with more claims than this shows a progress bar of its own (``judge``).
LONG_NOTE_CLAIMS = 200


class ClaimBar:
    """One note's progress on stderr (a ``ClaimProgress``): a bar with an estimate once the
    note turns out to have more than :data:`LONG_NOTE_CLAIMS` claims, nothing for shorter
    notes (they take seconds)."""

    def __init__(self) -> None:
        self._bars: Progress | None = None
        self._task = None

    def found(self, claims: int) -> None:
        if claims <= LONG_NOTE_CLAIMS or self._bars is not None:
            return
        self._bars = Progress(
            TextColumn("judging the note's claims"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=stderr,
        )
        self._bars.start()
        self._task = self._bars.add_task("claims", total=claims)

    def judged(self, claims: int) -> None:
        if self._bars is not None and self._task is not None:
            self._bars.advance(self._task, claims)

    def close(self) -> None:
        if self._bars is not None:
            self._bars.stop()


@contextmanager
def claim_bar():
    """A :class:`ClaimBar`, stopped on the way out."""
    bar = ClaimBar()
    try:
        yield bar
    finally:
        bar.close()
