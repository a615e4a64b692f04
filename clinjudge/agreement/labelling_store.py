"""One reviewer's label file, written as ``clinjudge label`` saves each label (issue 26; the
format of :mod:`clinjudge.agreement.labels`, SPEC §9).

``RUN_DIR/labels/REVIEWER.jsonl`` holds one JSON object per labelled unit, in the order of the
units file:

- ``encounter``, ``system``, ``unit`` — the unit (a text unit of ``RUN_DIR/units.jsonl``);
- ``label`` — ``supported`` | ``unsupported`` | ``contradicted``;
- ``severity`` — ``major`` | ``minor`` for unsupported and contradicted units (``minor`` unless
  the reviewer says major), ``null`` for supported ones;
- ``span`` — the offending words of the unit the reviewer marked, ``null`` when none (always on
  a supported unit); ``evidence`` — the transcript turns cited, ``"T12, T14"`` or ``"T12-T14"``,
  ``null`` when none (:mod:`clinjudge.agreement.label_fields`);
- ``reason`` — the reviewer's comment (``""`` when none);
- ``reviewer`` — the reviewer's name (the file's stem), ``labelled_at`` — when the unit was last
  labelled (UTC, ISO 8601).

It is the shared claim-labels format (its optional ``span`` and ``evidence`` included) plus
the last two fields, so
:func:`clinjudge.agreement.labels.read_label_set` reads it and the development labels of the
shared data load beside it. Every save rewrites the whole file atomically
(:func:`clinjudge.files.atomic_write`: a temporary beside it, fsync, rename, directory fsync):
the file on disk is always complete, holds each unit once, and a closed tab or a killed process
loses at most the label being saved. Rows are written by :func:`clinjudge.files.dump_line`
(U+2028, U+2029 and U+0085 in a comment escaped) and read by ``\n`` only, so a comment pasted
from a PDF stays in its row. Rows naming units the units file does not have (a file edited by
hand) are kept as they are.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clinjudge.agreement.labels import LABELS, SEVERITIES, UnitKey, read_label_set
from clinjudge.errors import ConfigError
from clinjudge.files import atomic_write, dump_line

_REVIEWER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MAX_REASON = 4000


class UnknownUnit(LookupError):
    """A label for a unit that is not a text unit of the notes being labelled."""


class BadLabel(ValueError):
    """A label whose fields are not of the format (module docstring)."""


def check_reviewer(name: str) -> str:
    """``name`` if it can be a label file's stem (letters, digits, ``_`` and ``-``, at most 64,
    starting with a letter or digit).

    Raises:
        ConfigError: the name and why it is refused.
    """
    if not _REVIEWER_RE.fullmatch(name):
        raise ConfigError(
            f"--reviewer {name!r} cannot name a label file: use letters, digits, '_' and '-' "
            "(at most 64, starting with a letter or digit), e.g. --reviewer alice"
        )
    return name


def label_row(
    key: UnitKey,
    label: str,
    severity: str | None,
    reason: str | None,
    reviewer: str,
    extra: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """A checked label row (module docstring); ``severity`` ``None`` on a flagged unit is
    ``minor``, and any severity or ``span`` on a supported unit is dropped. ``extra`` holds the
    ``span`` and ``evidence`` fields, already checked against the note.

    Raises:
        BadLabel: a label, severity or reason that is not of the format.
    """
    extra = extra or {}
    if label not in LABELS:
        raise BadLabel(f"label {label!r} is not one of {', '.join(LABELS)}")
    if label == "supported":
        severity = None
    elif severity is None:
        severity = "minor"
    elif severity not in SEVERITIES:
        raise BadLabel(f"severity {severity!r} is not major or minor")
    if reason is not None and not isinstance(reason, str):
        raise BadLabel("reason must be text")
    reason = (reason or "").strip()
    if len(reason) > MAX_REASON:
        raise BadLabel(f"reason is longer than {MAX_REASON} characters")
    encounter, system, unit = key
    return {
        "encounter": encounter,
        "system": system,
        "unit": unit,
        "label": label,
        "severity": severity,
        "span": None if label == "supported" else extra.get("span"),
        "evidence": extra.get("evidence"),
        "reason": reason,
        "reviewer": reviewer,
        "labelled_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


class LabelFile:
    """A reviewer's label file over the text units ``units`` (key → unit row, in file order):
    read on opening, rewritten atomically on every change (module docstring). Thread-safe."""

    def __init__(self, path: Path, reviewer: str, units: Mapping[UnitKey, Mapping[str, Any]]):
        self.path = path
        self.reviewer = check_reviewer(reviewer)
        self.units = units
        self.rows: dict[UnitKey, dict[str, Any]] = {}
        self._lock = threading.RLock()
        if path.exists():
            if not path.is_file():
                raise ConfigError(f"{path}: a directory, not a label file")
            self.rows = dict(read_label_set(path).rows)

    def label_of(self, key: UnitKey) -> dict[str, Any] | None:
        return self.rows.get(key)

    def save(
        self,
        key: UnitKey,
        label: str | None,
        severity: str | None = None,
        reason: str | None = None,
        extra: Mapping[str, str | None] | None = None,
    ) -> dict[str, Any] | None:
        """Label the unit ``key`` (``label`` ``None``: remove its label) and write the file;
        returns the row written (``None`` when removed). ``extra``: :func:`label_row`.

        Raises:
            UnknownUnit: ``key`` is not a text unit.
            BadLabel: a field that is not of the format.
        """
        if key not in self.units:
            raise UnknownUnit(f"no text unit {key[2]} in note {key[0]}/{key[1]}")
        row = (
            None if label is None else label_row(key, label, severity, reason, self.reviewer, extra)
        )
        with self._lock:
            if row is None:
                self.rows.pop(key, None)
            else:
                self.rows[key] = row
            self._write()
        return row

    def ordered_rows(self) -> list[dict[str, Any]]:
        """The rows in units-file order, then rows naming no known unit in the order read."""
        with self._lock:
            known = [self.rows[k] for k in self.units if k in self.rows]
            return known + [r for k, r in self.rows.items() if k not in self.units]

    def _write(self) -> None:
        """The whole file, rewritten atomically (under the lock)."""
        atomic_write(self.path, [dump_line(r) for r in self.ordered_rows()])
