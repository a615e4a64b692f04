"""Read CSV, JSONL and JSON files into uniform :class:`Record` rows.

A record's ``index`` counts rows from 0 (the id a row gets when there is no id column); messages
name the *data row* counted from 1 (the header is not a data row) and the file line where the
record starts. Text is UTF-8, or UTF-16 when the file starts with its byte-order mark (as
spreadsheet programs save "Unicode text"). Every failure becomes a one-line
:class:`DatasetError` naming the file and the row or line.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clinjudge.datasets.items import DatasetError
from clinjudge.files import parse_line

#: Long dialogues can exceed the csv module's default field limit (131,072 characters); this is the
#: largest value a C long accepts on every platform.
CSV_FIELD_SIZE_LIMIT = min(sys.maxsize, 2**31 - 1)


@dataclass(frozen=True)
class Record:
    """One row of a dataset file: its 0-based index, where it sits (for messages), its fields;
    ``problem`` says why a row that could not be read has no fields (the file reads on)."""

    index: int
    where: str
    fields: dict[str, Any]
    problem: str | None = None


def text_encoding(path: Path) -> str:
    """``utf-16`` when the file starts with a UTF-16 byte-order mark, else ``utf-8-sig`` (UTF-8
    with or without its BOM)."""
    with path.open("rb") as f:
        start = f.read(2)
    return "utf-16" if start in (b"\xff\xfe", b"\xfe\xff") else "utf-8-sig"


def data_row(index: int, line: int | None = None) -> str:
    """How a message names a record: ``data row 9 (line 617)``."""
    return f"data row {index + 1}" + (f" (line {line})" if line is not None else "")


def read_records(path: Path) -> Iterator[Record]:
    """Yield the rows of ``path``, choosing the reader by suffix (.csv, .jsonl/.ndjson, .json)."""
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        raise DatasetError(
            f"{path}: unsupported file type {path.suffix!r} (use .csv, .jsonl, .ndjson or .json)"
        )
    try:
        yield from reader(path)
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 or UTF-16 text (byte {exc.start})") from exc
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read file ({exc.strerror or exc})") from exc


def _read_csv(path: Path) -> Iterator[Record]:
    if csv.field_size_limit() < CSV_FIELD_SIZE_LIMIT:
        csv.field_size_limit(CSV_FIELD_SIZE_LIMIT)
    with path.open(encoding=text_encoding(path), newline="") as f:
        reader = csv.reader(f, strict=True)
        try:
            header = next(reader, None)
            if header is None:
                raise DatasetError(f"{path}: empty CSV file (no header line)")
            duplicates = sorted({c for c in header if header.count(c) > 1})
            if duplicates:
                raise DatasetError(f"{path}: line 1: duplicate column names {duplicates}")
            index = 0
            ended = reader.line_num  # the record after it starts on the next line
            for row in reader:
                starts, ended = ended + 1, reader.line_num
                if not any(cell.strip() for cell in row):
                    continue
                where = data_row(index, starts)
                if len(row) != len(header):
                    problem = f"invalid CSV, {len(row)} fields where the header has {len(header)}"
                    yield Record(index, where, {}, problem)
                else:
                    yield Record(index, where, dict(zip(header, row, strict=True)))
                index += 1
        except csv.Error as exc:
            raise DatasetError(f"{path}: line {reader.line_num}: invalid CSV ({exc})") from exc


def _read_jsonl(path: Path) -> Iterator[Record]:
    with path.open(encoding=text_encoding(path)) as f:
        index = 0
        for line_number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = data_row(index, line_number)
            obj, problem = parse_line(line)
            if problem is not None:
                yield Record(index, where, {}, problem)
            else:
                yield _as_record(obj, index, where)
            index += 1


def _read_json(path: Path) -> Iterator[Record]:
    with path.open(encoding=text_encoding(path)) as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{path}: line {exc.lineno}: invalid JSON ({exc.msg}, column {exc.colno})"
            ) from exc
        except RecursionError:
            raise DatasetError(f"{path}: JSON nested too deeply to read") from None
    if not isinstance(data, list):
        raise DatasetError(
            f"{path}: expected a JSON list of objects, got {type(data).__name__} "
            "(use .jsonl for one object per line)"
        )
    for index, obj in enumerate(data):
        yield _as_record(obj, index, data_row(index))


def _as_record(obj: Any, index: int, where: str) -> Record:
    if not isinstance(obj, dict):
        return Record(index, where, {}, f"expected a JSON object, got {type(obj).__name__}")
    return Record(index, where, obj)


_READERS: dict[str, Callable[[Path], Iterator[Record]]] = {
    ".csv": _read_csv,
    ".jsonl": _read_jsonl,
    ".ndjson": _read_jsonl,
    ".json": _read_json,
}
