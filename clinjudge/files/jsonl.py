"""JSON Lines as clinjudge reads and writes them: one object per ``\\n``, nothing else.

A line ends at ``\\n`` (``\\r\\n`` is read too) and only there. ``str.splitlines()`` also cuts at
U+2028, U+2029, U+0085 and a few control characters, which are legal *inside* a JSON string
and common in text pasted from Word, PDFs and web pages; a reader that splits that way tears
such a row in two, takes it as a crash's torn line and drops it. Every JSONL reader of the
package goes through :func:`read_jsonl`.

Writing, :func:`dump_line` escapes U+2028, U+2029 and U+0085 (``\\u2028``…, still the same
JSON value), so files the product writes stay whole for other tools that split by
``splitlines()`` as well.

A line that is not JSON, whose nesting is deeper than Python's parser can follow, or that is
not UTF-8 comes back with ``problem`` set and ``value`` ``None``: what to do with it (skip and
name it, drop it as torn, refuse the file) is the caller's decision, never a crash.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Characters that ``splitlines()`` takes as line ends and ``json.dumps`` leaves as they are.
_LINE_LIKE = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line of a JSONL file: its 1-based number, the parsed value (``None`` when
    it could not be read), why not, and the line's bytes without the line end."""

    number: int
    value: Any
    problem: str | None
    raw: bytes

    @property
    def ok(self) -> bool:
        return self.problem is None


def parse_line(raw: bytes | str, *, strict: bool = True) -> tuple[Any, str | None]:
    """``(value, None)`` for a line that is JSON, else ``(None, reason)``: invalid JSON (with
    its column), nested too deeply, or (bytes) not UTF-8. ``strict`` off admits raw control
    characters inside strings (``json.loads(strict=False)``)."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte {exc.start + 1})"
    try:
        return json.loads(text, strict=strict), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg}, column {exc.colno})"
    except RecursionError:
        return None, "JSON nested too deeply to read"


def read_jsonl(path: Path, *, skip_bom: bool = True) -> Iterator[JsonLine]:
    """Every non-blank line of ``path``, split at ``\\n`` only (module docstring), streamed (a
    file of any size is read a line at a time). A UTF-8 byte-order mark before the first line
    is skipped."""
    with Path(path).open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            line = raw.rstrip(b"\n").rstrip(b"\r")
            if number == 1 and skip_bom and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
            if not line.strip():
                continue
            value, problem = parse_line(line)
            yield JsonLine(number, value, problem, line)


def read_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of every line of ``path`` that is a JSON object; other lines
    (torn, not an object) are passed over. For files the product wrote itself."""
    for line in read_jsonl(path):
        if line.ok and isinstance(line.value, dict):
            yield line.number, line.value


def rows_by_key(path: Path, key: str = "id") -> dict[str, dict[str, Any]]:
    """The objects of a results file by ``str(row[key])`` (a later row for the same key wins, as
    a resumed run's does); torn lines and rows without ``key`` are passed over, the file is not
    touched; no file is no rows."""
    if not Path(path).is_file():
        return {}
    return {str(row[key]): row for _, row in read_objects(path) if key in row}


def dump_line(value: Any, **options: Any) -> str:
    """``value`` as one JSONL line, ``\\n`` included (non-ASCII kept; U+2028, U+2029 and U+0085
    escaped, module docstring). ``options`` go to ``json.dumps``."""
    text = json.dumps(value, ensure_ascii=False, **options)
    if any(c in text for c in _LINE_LIKE):
        for char, escaped in _LINE_LIKE.items():
            text = text.replace(char, escaped)
    return text + "\n"
