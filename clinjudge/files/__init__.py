"""Files that hold results and labels: JSONL read by ``\\n`` only and written splitlines-safe
(:mod:`~clinjudge.files.jsonl`), rewrites that cannot empty a file
(:mod:`~clinjudge.files.atomic`), and one writer per run or label file
(:mod:`~clinjudge.files.lock`). Standard library only; every layer may use it."""

from clinjudge.files.atomic import atomic_write, atomic_write_text, remove_stray_temporaries
from clinjudge.files.jsonl import (
    JsonLine,
    dump_line,
    parse_line,
    read_jsonl,
    read_objects,
    rows_by_key,
)
from clinjudge.files.lock import LockHeld, WriterLock

__all__ = [
    "JsonLine",
    "LockHeld",
    "WriterLock",
    "atomic_write",
    "atomic_write_text",
    "dump_line",
    "parse_line",
    "read_jsonl",
    "read_objects",
    "remove_stray_temporaries",
    "rows_by_key",
]
