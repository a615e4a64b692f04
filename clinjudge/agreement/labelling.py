"""Labelling a compare run's notes unit by unit, the way reviewers label the shared claim
labels (issue 26; SPEC §9): the notes, their units file, and the session ``clinjudge label``
serves.

**Notes.** The run's notes are the items of its recorded dataset that its SOAP judges judged
(dataset order). An item ``ENCOUNTER/system`` is the note of that encounter and system; an item
id without ``/system`` is the ``reference`` note of the encounter — the mapping of
:func:`clinjudge.agreement.runs.labelled_id`, so ``clinjudge agreement RUN_DIR --labels
RUN_DIR/labels/REVIEWER.jsonl`` matches the labels with no other option.

**Units file.** ``RUN_DIR/units.jsonl`` holds every note cut into units
(:mod:`clinjudge.agreement.units`), one line per unit in the shared format (``encounter``,
``system``, ``unit``, ``kind`` text | header, ``start``/``end``, ``text``). It is written when
absent; when present its units are used as they are (labels name units by number), after
checking that each one's text is the note's text at its span; notes it lacks (a run that grew)
are cut and added. ``clinjudge agreement`` finds it beside ``labels/``. It is read by ``\n``
only and rewritten atomically (:mod:`clinjudge.files`): a note holding U+2028 stays one unit
per line.

**Labels.** ``RUN_DIR/labels/REVIEWER.jsonl``, one file per reviewer
(:mod:`clinjudge.agreement.labelling_store`). Only text units are labelled. One label server
at a time writes a reviewer's file: it holds ``RUN_DIR/labels/.REVIEWER.lock``
(:func:`reviewer_lock`; a hidden name, so no ``*.jsonl`` reader sees it). Temporaries a killed
writer left in the run and label directories are removed when a session opens.

**Blind by default.** The page data holds no verdict unless the session shows them: then each
SOAP judge's claims of the note, with tier, severity and rationale, as the viewer shows them.

**A note at a time.** The page (:meth:`LabelSession.page_data`) holds the list of notes and
their progress, no note text; each note's text, units, transcript turns, saved labels (and
verdicts when shown) are sent when the page opens it (:meth:`LabelSession.note_data`), so a run
of hundreds of notes opens as fast as one of two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from clinjudge.agreement.label_fields import check_evidence, check_span, page_label
from clinjudge.agreement.labelling_store import BadLabel, LabelFile, UnknownUnit, check_reviewer
from clinjudge.agreement.labels import SYSTEM_SEP, UnitKey, note_id, read_units
from clinjudge.agreement.runs import Run, labelled_id
from clinjudge.agreement.units import TEXT, unit_rows
from clinjudge.errors import ConfigError
from clinjudge.files import (
    WriterLock,
    atomic_write,
    dump_line,
    read_jsonl,
    remove_stray_temporaries,
)
from clinjudge.text.transcript import turn_spans

#: The system of an item id that names none (``compare`` run of one note per encounter).
DEFAULT_SYSTEM = "reference"
UNITS_FILE = "units.jsonl"
LABELS_DIR = "labels"


@dataclass
class LabelNote:
    """A note of the run to label: its item id, the labelled note it is, its texts, and its
    units (rows of the units file, headers included, in unit order)."""

    item_id: str
    encounter: str
    system: str
    note: str
    transcript: str
    units: list[dict[str, Any]] = field(default_factory=list)

    @property
    def note_id(self) -> str:
        return note_id(self.encounter, self.system)

    def text_units(self) -> list[dict[str, Any]]:
        return [u for u in self.units if u.get("kind", TEXT) == TEXT]

    @cached_property
    def turns(self) -> list[tuple[int, int]]:
        """``(start, end)`` of each transcript turn; turn N (from 1) is the N-th."""
        return turn_spans(self.transcript)


def encounter_and_system(item_id: str) -> tuple[str, str]:
    """The labelled note an item of the run is, as ``(encounter, system)`` (module docstring)."""
    encounter, _, system = labelled_id(item_id, DEFAULT_SYSTEM).rpartition(SYSTEM_SEP)
    return encounter, system


def run_notes(run: Run, items: Iterable[Any]) -> list[LabelNote]:
    """The dataset ``items`` (``id``, ``note``, ``transcript``) the run's judges judged.

    Raises:
        ConfigError: none of them, or two items that are the same labelled note.
    """
    judged = set(run.items)
    notes: list[LabelNote] = []
    seen: dict[str, str] = {}
    for item in items:
        if item.id not in judged:
            continue
        encounter, system = encounter_and_system(item.id)
        note = LabelNote(item.id, encounter, system, item.note, item.transcript or "")
        if note.note_id in seen:
            raise ConfigError(
                f"{run.path}: items {seen[note.note_id]!r} and {item.id!r} are both note "
                f"{note.note_id} (an id without '{SYSTEM_SEP}system' is the {DEFAULT_SYSTEM} note)"
            )
        seen[note.note_id] = item.id
        notes.append(note)
    if not notes:
        raise ConfigError(
            f"{run.path}: none of the {len(judged)} notes its judges judged is in its dataset "
            "(give --dataset FILE if the dataset has moved)"
        )
    return notes


def _check_units(path: Path, note: LabelNote, units: list[dict[str, Any]]) -> None:
    for u in units:
        if note.note[u["start"] : u["end"]] != u.get("text", note.note[u["start"] : u["end"]]):
            raise ConfigError(
                f"{path}: unit {u['unit']} of {note.note_id} reads {u['text'][:40]!r} but the "
                f"run's note reads {note.note[u['start'] : u['end']][:40]!r} there (the units "
                "were cut from another text; move the file away to cut the notes again)"
            )


def ensure_units(run_dir: Path, notes: Sequence[LabelNote]) -> Path:
    """Give every note its units from ``RUN_DIR/units.jsonl``, writing or completing the file
    (module docstring); returns its path.

    Raises:
        ConfigError: a malformed units file (its line), or units that do not fit their note.
    """
    path = run_dir / UNITS_FILE
    rows: list[dict[str, Any]] = []
    if path.exists():
        read_units(path)  # checks every line
        rows = [line.value for line in read_jsonl(path)]
    by_note: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        by_note.setdefault((str(row["encounter"]), str(row["system"])), []).append(row)
    added = False
    for note in notes:
        found = by_note.get((note.encounter, note.system))
        if found is None:
            found = unit_rows(note.encounter, note.system, note.note)
            rows.extend(found)
            added = True
        _check_units(path, note, found)
        note.units = sorted(found, key=lambda u: u["unit"])
    if added or not path.exists():
        atomic_write(path, [dump_line(r) for r in rows])
    return path


def text_unit_index(notes: Sequence[LabelNote]) -> dict[UnitKey, dict[str, Any]]:
    """Every text unit of the notes by key, in note and unit order."""
    return {(n.encounter, n.system, u["unit"]): u for n in notes for u in n.text_units()}


def _claims(claims: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {
            "start": c.start,
            "end": c.end,
            "text": c.text,
            "tier": c.tier,
            "severity": c.severity,
            "rationale": c.rationale,
        }
        for c in claims
    ]


@dataclass
class LabelSession:
    """What ``clinjudge label`` serves: the notes, the reviewer's label file, and each SOAP
    judge's claims by item id when verdicts are shown (``None``: blind)."""

    run_dir: Path
    notes: list[LabelNote]
    labels: LabelFile
    units_file: Path
    verdicts: Mapping[str, Mapping[str, Sequence[Any]]] | None = None

    def progress(self) -> dict[str, Any]:
        """Labelled and text units per note id and over all notes."""
        per_note = {}
        for n in self.notes:
            keys = [(n.encounter, n.system, u["unit"]) for u in n.text_units()]
            done = sum(self.labels.label_of(k) is not None for k in keys)
            per_note[n.note_id] = {"labelled": done, "units": len(keys)}
        return {
            "notes": per_note,
            "labelled": sum(p["labelled"] for p in per_note.values()),
            "units": sum(p["units"] for p in per_note.values()),
        }

    def start(self) -> dict[str, Any]:
        """Where the cursor starts: the first text unit without a label (note order), else the
        first text unit."""
        first = None
        for i, n in enumerate(self.notes):
            for u in n.text_units():
                here = {"note": i, "unit": u["unit"]}
                first = first or here
                if self.labels.label_of((n.encounter, n.system, u["unit"])) is None:
                    return here
        return first or {"note": 0, "unit": None}

    def note_of(self, encounter: str, system: str) -> LabelNote:
        """The note ``encounter``/``system``.

        Raises:
            UnknownUnit: no such note.
        """
        for n in self.notes:
            if n.encounter == encounter and n.system == system:
                return n
        raise UnknownUnit(f"no note {note_id(encounter, system)} in the run")

    def save(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Save one label from the page: ``encounter``, ``system``, ``unit``, ``label`` (``None``
        removes it), ``severity``, ``reason``, ``evidence`` (turn numbers) and ``span`` (note
        offsets; :mod:`clinjudge.agreement.label_fields`); returns the row, the label as the
        page holds it, and the progress.

        Raises:
            BadLabel: a field of the wrong type or value (an evidence turn the transcript does
                not have, a span outside the unit).
            UnknownUnit: no such text unit.
        """
        encounter, system, unit = (payload.get(k) for k in ("encounter", "system", "unit"))
        if not isinstance(encounter, str) or not isinstance(system, str):
            raise BadLabel("encounter and system must be text")
        if not isinstance(unit, int) or isinstance(unit, bool):
            raise BadLabel("unit must be a whole number")
        label, severity = payload.get("label"), payload.get("severity")
        if label is not None and not isinstance(label, str):
            raise BadLabel("label must be text or null")
        if severity is not None and not isinstance(severity, str):
            raise BadLabel("severity must be text or null")
        key = (encounter, system, unit)
        if key not in self.labels.units:
            raise UnknownUnit(f"no text unit {unit} in note {note_id(encounter, system)}")
        note, unit_row = self.note_of(encounter, system), self.labels.units[key]
        extra = {
            "evidence": check_evidence(payload.get("evidence"), len(note.turns)),
            "span": check_span(payload.get("span"), unit_row, note.note),
        }
        row = self.labels.save(key, label, severity, payload.get("reason"), extra)
        shown = None if row is None else page_label(row, unit_row, note.note)
        return {"row": row, "label": shown, "progress": self.progress()}

    def note_data(self, index: int) -> dict[str, Any]:
        """Note ``index`` (dataset order) as the page shows it when it opens it: text, units,
        transcript turns, the saved labels (:func:`page_label`), and the judges' claims when
        verdicts are shown.

        Raises:
            IndexError: no such note.
        """
        if not 0 <= index < len(self.notes):
            raise IndexError(f"no note {index} (the run has {len(self.notes)})")
        n = self.notes[index]
        labels = {}
        for u in n.text_units():
            row = self.labels.label_of((n.encounter, n.system, u["unit"]))
            if row is not None:
                labels[str(u["unit"])] = page_label(row, u, n.note)
        entry = self._summary(n) | {
            "note": n.note,
            "transcript": n.transcript,
            "turns": [list(t) for t in n.turns],
            "units": [{k: u[k] for k in ("unit", "kind", "start", "end")} for u in n.units],
            "labels": labels,
        }
        if self.verdicts is not None:
            entry["claims"] = {
                judge: _claims(by_item.get(n.item_id, ()))
                for judge, by_item in self.verdicts.items()
            }
        return entry

    @staticmethod
    def _summary(n: LabelNote) -> dict[str, Any]:
        return {"id": n.item_id, "note_id": n.note_id, "encounter": n.encounter, "system": n.system}

    def page_data(self) -> dict[str, Any]:
        """What the page is sent first (module docstring): the notes by id with the progress,
        no note text and no verdict."""
        return {
            "run": str(self.run_dir),
            "reviewer": self.labels.reviewer,
            "labels_file": str(self.labels.path),
            "blind": self.verdicts is None,
            "judges": list(self.verdicts or {}),
            "notes": [self._summary(n) for n in self.notes],
            "start": self.start(),
            "progress": self.progress(),
        }


def labels_path(run_dir: Path, reviewer: str) -> Path:
    return run_dir / LABELS_DIR / f"{check_reviewer(reviewer)}.jsonl"


def reviewer_lock(run_dir: Path, reviewer: str) -> WriterLock:
    """The lock a label server holds on the reviewer's label file while it runs (module
    docstring); :meth:`WriterLock.acquire` raises ``LockHeld`` naming the holder."""
    path = labels_path(run_dir, reviewer)
    return WriterLock(path.with_name(f".{reviewer}.lock"), f"{reviewer}'s label file {path}")


def open_session(
    run: Run, items: Iterable[Any], reviewer: str, *, show_verdicts: bool = False
) -> LabelSession:
    """The session over the run's notes for ``reviewer``: units file written or completed,
    the reviewer's labels read (module docstring).

    Raises:
        ConfigError: no note to label, a units or label file that cannot be used, a bad name.
    """
    path = labels_path(run.path, reviewer)
    notes = run_notes(run, items)
    for folder in (run.path, path.parent):
        remove_stray_temporaries(folder, recursive=False)
    units_file = ensure_units(run.path, notes)
    labels = LabelFile(path, reviewer, text_unit_index(notes))
    verdicts = run.judges if show_verdicts else None
    return LabelSession(run.path, notes, labels, units_file, verdicts)
