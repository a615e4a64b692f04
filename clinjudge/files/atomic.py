"""Rewriting a file so that a crash leaves the old file or the new one, never less.

:func:`atomic_write` writes the new content to a temporary file beside the target (same
directory, so the same filesystem), flushes and fsyncs it, renames it over the target
(``os.replace``, atomic on POSIX) and fsyncs the directory so the rename itself survives a
power cut. A process killed at any point leaves the complete old file or the complete new
one, plus at worst a stray temporary, which :func:`remove_stray_temporaries` deletes when the
next writer starts (a temporary's name carries the writer's pid, so one that a live process
is still writing is left alone).

Every rewrite of a file that holds results or labels goes through here: the torn-line repair
of a results file, a reviewer's label file, a run's manifest and reports.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

#: ``.NAME.PID.tmp``: hidden, beside its target, naming the process that writes it.
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.tmp$")


def temporary_for(path: Path) -> Path:
    """The temporary file this process writes ``path``'s new content to."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def fsync_directory(folder: Path) -> None:
    """Make the directory's entries (a rename, a new file) durable; a no-op where the
    platform cannot open a directory."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, content: str | bytes | Iterable[str] | Iterable[bytes]) -> Path:
    """Replace ``path`` by ``content`` (text is written as UTF-8; an iterable is written chunk
    by chunk, so a large file need not be held in memory) as the module docstring says: the
    old file or the new one, never a partial or empty one. Returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_for(path)
    chunks = [content] if isinstance(content, str | bytes) else content
    try:
        with tmp.open("wb") as handle:
            for chunk in chunks:
                handle.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_directory(path.parent)
    return path


def atomic_write_text(path: Path, text: str) -> Path:
    """:func:`atomic_write` of one string (the ``Path.write_text`` of files that hold results)."""
    return atomic_write(path, text)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stray_temporaries(folder: Path, *, recursive: bool = True) -> list[Path]:
    """Delete the temporaries (``.NAME.PID.tmp``) that a killed writer left in ``folder`` (and
    below it); a temporary whose writer is still alive is kept. Returns what was deleted."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    removed = []
    candidates = folder.rglob(".*.tmp") if recursive else folder.glob(".*.tmp")
    for candidate in candidates:
        found = _TEMPORARY.match(candidate.name)
        if found is None or _alive(int(found["pid"])):
            continue
        with contextlib.suppress(OSError):
            candidate.unlink()
            removed.append(candidate)
    return removed
