"""Sentence labels in the shared claim-labels JSONL format, and the note units they label
(SPEC §9; ``data/aci-bench/claim-labels/README.md`` and ``GUIDE.md``).

A **unit** is one sentence of a note: a line of ``units.jsonl`` with ``encounter``, ``system``,
``unit`` (its number within the note), ``kind`` (``text``, or ``header``: never labelled),
``start``/``end`` (character offsets into the note) and ``text`` (the note's characters
``[start, end)``). The note a unit belongs to is named ``ENCOUNTER/system``.

A **label** is one line of a label file: ``encounter``, ``system``, ``unit`` (which unit),
``label`` (``supported`` | ``unsupported`` | ``contradicted``), ``severity`` (``major`` |
``minor``, null when supported), and optionally ``span``, ``evidence`` and ``reason``.

A **label set** is one reviewer's labels: a JSONL file, or a directory of them (``*.jsonl``).
Given several sets, a unit's reference label is that of the first set labelling it; every later
set labelling the same unit is a second reviewer of it (reviewer–reviewer agreement).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinjudge.errors import ConfigError
from clinjudge.files import read_jsonl
from clinjudge.metrics.reviewer_agreement import ReviewerPair
from clinjudge.metrics.unit_labels import LabelledUnit

LABELS = ("supported", "unsupported", "contradicted")
SEVERITIES = ("major", "minor")
#: Between an encounter and its system in a note id (as ``compare --system-column`` names items).
SYSTEM_SEP = "/"
UnitKey = tuple[str, str, int]


def note_id(encounter: str, system: str) -> str:
    return f"{encounter}{SYSTEM_SEP}{system}"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class LabelSet:
    """One reviewer's labels: the rows by unit, and each file read with its SHA-256."""

    path: Path
    files: dict[str, str] = field(default_factory=dict)
    rows: dict[UnitKey, dict[str, Any]] = field(default_factory=dict)


def _json_lines(path: Path):
    """``(line number, object)`` of every non-blank line of a JSONL file, split at ``\n`` only
    (:func:`clinjudge.files.read_jsonl`: a U+2028 inside a comment ends no line).

    Raises:
        ConfigError: ``FILE:LINE: reason`` for a line that is not a JSON object.
    """
    for line in read_jsonl(path):
        if not line.ok:
            raise ConfigError(f"{path}:{line.number}: not JSON ({line.problem})")
        if not isinstance(line.value, dict):
            raise ConfigError(f"{path}:{line.number}: not a JSON object")
        yield line.number, line.value


def _key(row: dict[str, Any]) -> UnitKey | str:
    """The unit a row names, or why it names none."""
    missing = [k for k in ("encounter", "system", "unit") if k not in row]
    if missing:
        return f"no {missing[0]!r}"
    if not isinstance(row["unit"], int) or isinstance(row["unit"], bool):
        return f"unit {row['unit']!r} is not a whole number"
    return str(row["encounter"]), str(row["system"]), row["unit"]


def label_problem(row: dict[str, Any]) -> str | None:
    """Why ``row`` is not a label of the shared format, or ``None``."""
    key = _key(row)
    if isinstance(key, str):
        return key
    if row.get("label") not in LABELS:
        return f"label {row.get('label')!r} is not one of {', '.join(LABELS)}"
    if row.get("severity") is not None and row["severity"] not in SEVERITIES:
        return f"severity {row['severity']!r} is not major, minor or null"
    return None


def read_label_set(path: Path) -> LabelSet:
    """A label file, or every ``*.jsonl`` of a directory (in name order), checked line by line.

    Raises:
        ConfigError: no such path, no label file, or ``FILE:LINE: reason`` for a malformed
            line or a unit labelled twice in the set.
    """
    if not path.exists():
        raise ConfigError(f"{path}: no such label file or directory")
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise ConfigError(f"{path}: no *.jsonl label file in the directory")
    found = LabelSet(path)
    where: dict[UnitKey, str] = {}
    for file in files:
        found.files[str(file)] = sha256_of(file)
        for number, row in _json_lines(file):
            if why := label_problem(row):
                raise ConfigError(f"{file}:{number}: {why}")
            key = _key(row)
            assert not isinstance(key, str)
            if key in where:
                raise ConfigError(
                    f"{file}:{number}: unit {key[2]} of {note_id(*key[:2])} is labelled again "
                    f"(first at {where[key]})"
                )
            where[key] = f"{file.name}:{number}"
            found.rows[key] = row
    return found


def read_units(path: Path) -> dict[UnitKey, dict[str, Any]]:
    """The text units of a ``units.jsonl``, in file order (headers left out).

    Raises:
        ConfigError: no such file, or ``FILE:LINE: reason`` for a malformed line.
    """
    if not path.is_file():
        raise ConfigError(f"{path}: no such units file")
    units: dict[UnitKey, dict[str, Any]] = {}
    for number, row in _json_lines(path):
        key = _key(row)
        if isinstance(key, str) or not all(isinstance(row.get(k), int) for k in ("start", "end")):
            why = key if isinstance(key, str) else "no whole-number start and end"
            raise ConfigError(f"{path}:{number}: not a unit ({why})")
        if row.get("kind", "text") == "text":
            units[key] = row
    return units


def find_units(label_paths: Sequence[Path]) -> Path | None:
    """The first ``units.jsonl`` in a label path's directory or the one above it (the
    claim-labels layout: ``units.jsonl`` beside ``labels/``)."""
    for path in label_paths:
        folder = path if path.is_dir() else path.parent
        for candidate in (folder / "units.jsonl", folder.parent / "units.jsonl"):
            if candidate.is_file():
                return candidate
    return None


def labelled_unit(unit: dict[str, Any], label: dict[str, Any]) -> LabelledUnit:
    return LabelledUnit(
        note_id=note_id(unit["encounter"], unit["system"]),
        encounter=unit["encounter"],
        system=unit["system"],
        unit=unit["unit"],
        start=unit["start"],
        end=unit["end"],
        text=unit.get("text", ""),
        label=label["label"],
        severity=label.get("severity"),
        span=label.get("span"),
        reason=label.get("reason") or "",
    )


@dataclass
class LabelledNotes:
    """Reference-labelled units by note id (units file order), the units each later label set
    labelled again (``(first set, second set, pairs)``), and labels naming no text unit."""

    units: dict[str, list[LabelledUnit]]
    reviews: list[tuple[Path, Path, list[ReviewerPair]]]
    labels_without_unit: int


def labelled_notes(
    sets: Sequence[LabelSet],
    units: dict[UnitKey, dict[str, Any]],
    encounters: set[str] | None = None,
) -> LabelledNotes:
    """Each unit's reference label from the first set labelling it, and the reviewer pairs of
    every later set (module docstring); ``encounters`` keeps only those."""
    owner: dict[UnitKey, int] = {}
    for i, label_set in enumerate(sets):
        for key in label_set.rows:
            owner.setdefault(key, i)
    by_note: dict[str, list[LabelledUnit]] = {}
    pairs: dict[tuple[int, int], list[ReviewerPair]] = {}
    for key, unit in units.items():
        if key not in owner or (encounters is not None and key[0] not in encounters):
            continue
        first = labelled_unit(unit, sets[owner[key]].rows[key])
        by_note.setdefault(first.note_id, []).append(first)
        for j in range(owner[key] + 1, len(sets)):
            if key in sets[j].rows:
                second = labelled_unit(unit, sets[j].rows[key])
                pairs.setdefault((owner[key], j), []).append((first, second))
    unlabelled = sum(1 for s in sets for key in s.rows if key not in units)
    reviews = [(sets[i].path, sets[j].path, p) for (i, j), p in sorted(pairs.items())]
    return LabelledNotes(by_note, reviews, unlabelled)
