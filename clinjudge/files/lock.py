"""One writer at a time: a lock file naming its holder.

Two processes writing one run directory both judge everything (twice the cost, rows doubled);
two label servers on one reviewer's file overwrite each other's labels. A :class:`WriterLock`
prevents both. Its file holds the holder's pid, host, command and start time, and is held with
``flock`` — which the kernel releases the moment the holder exits, however it exits — so:

- a second writer finds the lock held and is refused (:class:`LockHeld`, a one-line reason
  naming the holder: the CLI prints it and exits with 2);
- a lock file left by a writer that died (``kill -9``, a power cut) is not held: the next
  writer takes it over and says whose it was (:attr:`WriterLock.took_over`);
- on release the file is removed, so a finished run leaves no lock behind.

Between taking the ``flock`` and writing its name, a writer checks that the file it locked is
still the one at the path (another writer may have removed it on release in between), and
starts again if not.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

from clinjudge.errors import ConfigError


class LockHeld(ConfigError):
    """Another live process holds the lock (the message names it)."""


def _holder_line(holder: dict[str, Any]) -> str:
    """``pid 1234 on host h, `clinjudge compare …`, since 2026-12-04T07:10:22+00:00``."""
    parts = [f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}"]
    if holder.get("command"):
        parts.append(f"`{holder['command']}`")
    if holder.get("since"):
        parts.append(f"since {holder['since']}")
    return ", ".join(parts)


def _read_holder(fd: int) -> dict[str, Any]:
    os.lseek(fd, 0, os.SEEK_SET)
    blob = os.read(fd, 65536)
    try:
        found = json.loads(blob.decode("utf-8")) if blob.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        found = {"pid": "?", "host": "?"}
    return found if isinstance(found, dict) else {}


def this_command() -> str:
    """The running command as a user typed it (program name and arguments), cut to 200
    characters."""
    words = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else []
    text = " ".join(words)
    return text if len(text) <= 200 else text[:197] + "..."


class WriterLock:
    """The lock of ``path`` for ``what`` (a phrase for messages: "run directory runs/x").

    Use as a context manager, or :meth:`acquire` and :meth:`release`."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = Path(path)
        self.what = what
        self.took_over: str | None = None
        self._fd: int | None = None

    def acquire(self) -> WriterLock:
        """Take the lock (module docstring).

        Raises:
            LockHeld: a live process holds it (one line naming the holder).
        """
        if self._fd is not None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise LockHeld(
                    f"{self.what} is in use by another clinjudge process ({_holder_line(holder)}); "
                    f"wait for it to finish or stop it (the lock is {self.path})"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # released and removed between our open and our flock: again
                os.close(fd)
                continue
            break
        left = _read_holder(fd)
        if left:
            self.took_over = (
                f"{self.what}: took over the lock left by {_holder_line(left)}, which is no "
                "longer running"
            )
        mine = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": this_command(),
            "since": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(mine).encode("utf-8"))
        os.fsync(fd)
        self._fd = fd
        return self

    def release(self) -> None:
        """Remove the lock file and let the lock go (nothing when it is not held)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> WriterLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
