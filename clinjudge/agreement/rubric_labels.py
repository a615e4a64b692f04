"""Human criterion labels of a rubric run (issue 39 item 6): what a grader is scored against.

A label file is CSV (``.csv``, a header row) or JSONL (``.jsonl``, one object per line); each
row labels one criterion of one item:

    item       the item id as the run names it (``compare --id-column``; with systems,
               ``ENCOUNTER/system``)
    criterion  the criterion id (the rubric's, or the item's own from its criteria column)
    label      ``met`` or ``not met`` (``not_met``; in JSONL also true / false), or a whole
               level 1..N for a ``scale`` rubric
    labeller   optional: who labelled it (default: the file's name without its extension)
    comment    optional: the labeller's reason, shown beside the disagreements

Other columns are ignored. A labeller's labels may span several files, and a file may hold
several labellers. Every problem stops the command with one line ``FILE:LINE: field: what is
wrong; the fix``: a missing or empty field, a label that is neither met / not met nor a level,
a labeller mixing met labels with levels, an (item, criterion) labelled twice by one labeller.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinjudge.errors import ConfigError
from clinjudge.files import read_jsonl

REQUIRED = ("item", "criterion", "label")
SUFFIXES = (".csv", ".jsonl")
Value = bool | int
Key = tuple[str, str]


@dataclass(frozen=True)
class CriterionLabel:
    """One label: ``value`` is ``True`` (met), ``False`` (not met) or a level ≥ 1."""

    item: str
    criterion: str
    value: Value
    labeller: str
    comment: str = ""
    where: str = ""


@dataclass
class CriterionLabels:
    """Every labeller's labels by (item, criterion), in the order labellers first appear, and
    each file read with its SHA-256."""

    by_labeller: dict[str, dict[Key, CriterionLabel]] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)

    @property
    def labellers(self) -> list[str]:
        return list(self.by_labeller)


def is_criterion_label_file(path: Path) -> bool:
    """Whether ``path`` is a criterion label file (a ``.csv``, or a ``.jsonl`` whose first row
    has a ``criterion``) rather than the claim-labels layout of SOAP runs."""
    if not path.is_file() or path.suffix.lower() not in SUFFIXES:
        return False
    if path.suffix.lower() == ".csv":
        return True
    first = next((line for line in read_jsonl(path) if line.ok), None)
    return first is not None and isinstance(first.value, dict) and "criterion" in first.value


def _rows(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, row)`` of a CSV or JSONL file.

    Raises:
        ConfigError: a JSONL line that is not JSON, a CSV file without the required columns.
    """
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            columns = [c.strip() for c in reader.fieldnames or []]
            missing = [c for c in REQUIRED if c not in columns]
            if missing:
                raise ConfigError(
                    f"{path}:1: no {missing[0]!r} column; the header needs "
                    f"{', '.join(REQUIRED)} (and optionally labeller, comment)"
                )
            for row in reader:
                yield reader.line_num, {(k or "").strip(): v for k, v in row.items()}
        return
    for line in read_jsonl(path):
        if not line.ok:
            raise ConfigError(f"{path}:{line.number}: not JSON ({line.problem})")
        yield line.number, line.value


def parse_value(raw: Any) -> Value | str:
    """The label's value, or why it is none (module docstring)."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int):
        return raw if raw >= 1 else f"level {raw} is below 1; levels count from 1"
    text = str(raw).strip().lower().replace("_", " ") if raw is not None else ""
    if text in ("met", "not met"):
        return text == "met"
    if text.isdigit():
        return int(text) if int(text) >= 1 else f"level {text} is below 1; levels count from 1"
    return f"{raw!r} is not met, not met or a level 1..N; write met, not met or a whole number"


def read_label_row(row: Any, default_labeller: str, where: str) -> CriterionLabel:
    """One row as a label.

    Raises:
        ConfigError: ``where: field: problem; fix`` (module docstring).
    """
    if not isinstance(row, dict):
        raise ConfigError(f"{where}: not a JSON object; write one label per line as an object")
    for name in REQUIRED:
        value = row.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ConfigError(f"{where}: {name}: missing or empty; every label names its {name}")
    value = parse_value(row["label"])
    if isinstance(value, str):
        raise ConfigError(f"{where}: label: {value}")
    labeller = row.get("labeller")
    return CriterionLabel(
        item=str(row["item"]).strip(),
        criterion=str(row["criterion"]).strip(),
        value=value,
        labeller=str(labeller).strip() if labeller not in (None, "") else default_labeller,
        comment=str(row.get("comment") or ""),
        where=where,
    )


def read_criterion_labels(paths: Sequence[Path]) -> CriterionLabels:
    """The labels of every file (module docstring), checked row by row.

    Raises:
        ConfigError: no such file, a file of another kind, a file with no label, or
            ``FILE:LINE: field: reason`` for the first malformed row.
    """
    found = CriterionLabels()
    kinds: dict[str, tuple[bool, str]] = {}
    for path in paths:
        if not path.is_file():
            raise ConfigError(f"{path}: no such label file")
        if path.suffix.lower() not in SUFFIXES:
            raise ConfigError(f"{path}: criterion labels are a .csv or .jsonl file")
        found.files[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        count = 0
        for number, row in _rows(path):
            label = read_label_row(row, path.stem, f"{path}:{number}")
            count += 1
            mine = found.by_labeller.setdefault(label.labeller, {})
            key = (label.item, label.criterion)
            if key in mine:
                raise ConfigError(
                    f"{label.where}: criterion: {label.criterion!r} of item {label.item!r} is "
                    f"labelled again by {label.labeller!r} (first at {mine[key].where}); keep one"
                )
            is_met = isinstance(label.value, bool)
            first = kinds.setdefault(label.labeller, (is_met, label.where))
            if first[0] != is_met:
                raise ConfigError(
                    f"{label.where}: label: {label.labeller!r} mixes met / not met labels with "
                    f"levels (first at {first[1]}); one labeller labels one kind of rubric"
                )
            mine[key] = label
        if count == 0:
            raise ConfigError(f"{path}: no label in the file")
    return found
