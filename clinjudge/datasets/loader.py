"""Load transcript–note pairs from a bundled eval set or a CSV / JSONL / JSON file.

Column detection (case-insensitive, first alias present wins):
transcript ← ``dialogue``, ``dialogues`` (ACI-Bench's GPT-4 and ChatGPT files), ``transcript``,
``source``; note (the judged text) ← ``note``,
``summary``, ``section_text``, ``answer``; id ← ``encounter_id``, ``id``, ``Text ID`` (no id
column → the 0-based row index). Every other column goes to ``Item.meta`` (e.g. a fact-check
dataset's ``question`` and ``evidence``). With ``require_source=False`` (judges that need no
source text) a missing transcript column gives empty transcripts.

A row that cannot be judged -- an empty or non-text note or transcript, one over the size limit
(:func:`clinjudge.datasets.items.max_text_chars`), an empty id, a line that is not JSON or is
nested too deeply to read, a CSV row with the wrong number of fields -- is skipped and recorded in
``Dataset.skipped`` with its reason (``strict=True`` refuses the file instead). A file that cannot
be read as a whole (no such column, invalid CSV quoting, a duplicate id, nothing left to judge)
raises :class:`DatasetError`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import clinjudge
from clinjudge.datasets.items import Dataset, DatasetError, Item, SkippedItem, text_too_long
from clinjudge.datasets.readers import Record, data_row, read_records

TRANSCRIPT_COLUMNS: tuple[str, ...] = ("dialogue", "dialogues", "transcript", "source")
NOTE_COLUMNS: tuple[str, ...] = ("note", "summary", "section_text", "answer")
ID_COLUMNS: tuple[str, ...] = ("encounter_id", "id", "text id")

#: Between an encounter's id and its system's name in the id of a system's note.
SYSTEM_SEP = "/"
#: A bundled eval set is ``eval_sets/<name>/data.jsonl`` in the repository, next to the package.
BUNDLED_FILE = "data.jsonl"


def eval_sets_dir() -> Path:
    """The repository's ``eval_sets/`` directory (sibling of the ``clinjudge`` package)."""
    return Path(clinjudge.__file__).resolve().parent.parent / "eval_sets"


def bundled_sets() -> list[str]:
    """Names of the bundled eval sets (directories of ``eval_sets/`` holding a ``data.jsonl``)."""
    root = eval_sets_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / BUNDLED_FILE).is_file())


def resolve_source(source: str | Path) -> tuple[str, Path]:
    """Map ``source`` to ``(name, file)``: an existing file, a directory holding ``data.jsonl``,
    or the name of a bundled eval set."""
    path = Path(source).expanduser()
    if path.is_file():
        name = path.parent.name if path.name == BUNDLED_FILE else path.stem
        return name, path
    if path.is_dir() and (path / BUNDLED_FILE).is_file():
        return path.name, path / BUNDLED_FILE
    if str(source) in bundled_sets():
        return str(source), eval_sets_dir() / str(source) / BUNDLED_FILE
    bundled = ", ".join(bundled_sets()) or "none found"
    raise DatasetError(f"{source}: no such file, nor a bundled eval set (bundled: {bundled})")


def load_items(
    source: str | Path,
    *,
    limit: int | None = None,
    transcript_column: str | None = None,
    note_column: str | None = None,
    id_column: str | None = None,
    require_source: bool = True,
    column_options: dict[str, str] | None = None,
    strict: bool = False,
    system_column: str | None = None,
) -> Dataset:
    """Load a dataset of :class:`Item` from a bundled set name or a CSV / JSONL / JSON file.

    Explicit ``*_column`` arguments override the alias detection; ``column_options`` names the
    command-line option that sets each role's column (``{"transcript": "--source-column"}``),
    for the message when no column is found. ``limit`` keeps the first ``limit`` encounters:
    the first ``limit`` items (rows after them are not read, so not validated), or with
    ``system_column`` every system's note of the first ``limit`` encounters (the whole file
    is read: one system's rows may follow another's). ``strict``: a row that cannot be judged raises
    instead of being skipped. The ``sha256`` is of the whole file. ``system_column``: rows
    are the notes of several systems for the same encounters; an item's id is
    ``<encounter>/<system>`` and its meta holds ``system`` and ``encounter``.
    """
    if limit is not None and limit < 1:
        raise DatasetError(f"{source}: limit must be at least 1, got {limit}")
    name, path = resolve_source(source)
    items: list[Item] = []
    skipped: list[SkippedItem] = []
    first_row_of: dict[str, int] = {}
    encounters: set[str] = set()
    columns: _Columns | None = None
    for record in read_records(path):
        if columns is None and record.problem is None:
            columns = _Columns.detect(
                path,
                list(record.fields),
                transcript_column,
                note_column,
                id_column,
                require_source=require_source,
                options=column_options or {},
            )
            if system_column is not None:
                columns.system = _pick(
                    path, list(record.fields), "system", system_column, (), required=True
                )
        try:
            if record.problem is not None or columns is None:
                raise RowProblem(record.problem or "unreadable row")
            item = columns.item(record)
        except RowProblem as problem:
            if strict:
                raise DatasetError(f"{path}: {record.where}{problem.where}: {problem}") from None
            row_id = columns.row_id(record) if columns is not None else None
            skipped.append(SkippedItem(row=record.where, id=row_id, reason=problem.describe()))
            continue
        if item.id in first_row_of:
            raise DatasetError(
                f"{path}: {record.where}, column {columns.id!r}: duplicate id {item.id!r} "
                f"(first seen in {data_row(first_row_of[item.id])})"
            )
        if system_column is not None:
            encounter = str(item.meta.get("encounter", item.id))
            if limit is not None and encounter not in encounters and len(encounters) >= limit:
                continue
            encounters.add(encounter)
        first_row_of[item.id] = record.index
        items.append(item)
        if system_column is None and limit is not None and len(items) >= limit:
            break
    if not items:
        if skipped:
            raise DatasetError(
                f"{path}: no row to judge: {len(skipped)} skipped (first: {skipped[0].describe()})"
            )
        raise DatasetError(f"{path}: no rows")
    return Dataset(name=name, path=path, items=items, sha256=file_sha256(path), skipped=skipped)


class RowProblem(Exception):
    """Why one row cannot be judged; ``column`` names the field at fault, if one is."""

    def __init__(self, reason: str, column: str | None = None) -> None:
        super().__init__(reason)
        self.column = column

    @property
    def where(self) -> str:
        return f", column {self.column!r}" if self.column else ""

    def describe(self) -> str:
        return f"{self}" + (f" (column {self.column!r})" if self.column else "")


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class _Columns:
    """Which field of a row is the transcript, the note and the id (``None``: use row index)."""

    def __init__(self, transcript: str | None, note: str, id_: str | None) -> None:
        self.transcript, self.note, self.id = transcript, note, id_
        #: a column naming the system that wrote the row's note (one encounter, many rows)
        self.system: str | None = None

    @classmethod
    def detect(
        cls,
        path: Path,
        found: Sequence[str],
        transcript: str | None,
        note: str | None,
        id_: str | None,
        *,
        require_source: bool = True,
        options: dict[str, str] | None = None,
    ) -> _Columns:
        options = options or {}
        return cls(
            _pick(
                path, found, "transcript", transcript, TRANSCRIPT_COLUMNS,
                required=require_source, option=options.get("transcript"),
            ),
            _pick(path, found, "note", note, NOTE_COLUMNS, required=True,
                  option=options.get("note")),
            _pick(path, found, "id", id_, ID_COLUMNS, required=False),
        )  # fmt: skip

    def item(self, record: Record) -> Item:
        """The row's item. Raises :class:`RowProblem`."""
        fields = record.fields
        used = {self.transcript, self.note, self.id, self.system}
        meta = {k: v for k, v in fields.items() if k not in used}
        item_id = self._id(record)
        if self.system is not None:
            system = _text(record, self.system, "system")
            meta |= {"system": system, "encounter": item_id}
            item_id = f"{item_id}{SYSTEM_SEP}{system}"
        return Item(
            id=item_id,
            transcript=""
            if self.transcript is None
            else _text(record, self.transcript, "transcript"),
            note=_text(record, self.note, "note"),
            meta=meta,
        )

    def row_id(self, record: Record) -> str | None:
        """The row's id when it has a usable one (for a skipped row's record)."""
        try:
            return self._id(record)
        except RowProblem:
            return None

    def _id(self, record: Record) -> str:
        if self.id is None:
            return str(record.index)
        value = record.fields.get(self.id)
        if isinstance(value, bool) or not isinstance(value, str | int | None):
            raise RowProblem(f"id is {type(value).__name__}, not text or an integer", self.id)
        text = "" if value is None else str(value).strip()
        if not text:
            raise RowProblem("empty id", self.id)
        return text


def _pick(
    path: Path,
    found: Sequence[str],
    role: str,
    explicit: str | None,
    aliases: tuple[str, ...],
    *,
    required: bool,
    option: str | None = None,
) -> str | None:
    """The column playing ``role``: ``explicit`` if given (must exist), else the first alias."""
    if explicit is not None:
        if explicit not in found:
            raise DatasetError(f"{path}: no {role} column {explicit!r} (columns found: {found})")
        return explicit
    by_folded = {c.strip().casefold(): c for c in reversed(found)}
    for alias in aliases:
        if alias in by_folded:
            return by_folded[alias]
    if required:
        hint = f"; name it with {option} COLUMN" if option else ""
        raise DatasetError(
            f"{path}: no usable {role} column (looked for {list(aliases)}; columns found: "
            f"{found}{hint})"
        )
    return None


def _text(record: Record, column: str, role: str) -> str:
    value: Any = record.fields.get(column)
    if value is not None and not isinstance(value, str):
        raise RowProblem(f"{role} is {type(value).__name__}, not text", column)
    if value is None or not value.strip():
        raise RowProblem(f"empty {role}", column)
    if why := text_too_long(value, role):
        raise RowProblem(why, column)
    return value
