"""A note cut into units, the sentences reviewers label (SPEC §9), exactly as the shared
``data/aci-bench/claim-labels/units.jsonl`` cuts its 159 notes ("sentences within lines").

Rules, in order:

1. **Lines.** A line break always ends a unit; a line that is blank gives none.
2. **Sentences within a line.** A line is cut after ``.``, ``!`` or ``?`` followed by
   whitespace and an upper-case ASCII letter or a digit (``"... exam. I suspect"``,
   ``"normal. EKG is normal."``, ``"1. Abnormal labs."`` → ``1.`` | ``Abnormal labs.``),
   except after a title or abbreviation that is followed by a name or a word (``Mr.``, ``Mrs.``,
   ``Ms.``, ``Dr.``, ``Prof.``, ``St.``, ``vs.``, ``e.g.``, ``i.e.``), and except a bare list
   number followed by one upper-case word that ends the line (``2. COPD.`` stays one unit).
   Nothing else cuts: not a lower-case start (``"morning. the weather"``), not a dash or a
   bracket (``"needed. - Depression"``, ``"nurse.  [Note: ..."``), not a closing quote after
   the stop (``"cuddly”.” The patient"``).
3. **Trim.** Each piece is stripped of surrounding whitespace (``str.strip``: also no-break
   spaces) and kept when anything is left; bullets stay part of the unit (``• Neck: Supple.``).
4. **Kind.** A unit of two or more characters with no lower-case letter is a ``header``
   (``HISTORY OF PRESENT ILLNESS``, ``PLAN:``, ``1.``, ``BP: 118/77.``, ``##``): reviewers do
   not label it. Every other unit is ``text``.

Units are numbered from 0 within the note, headers included; ``start``/``end`` are character
offsets into the note and ``note[start:end] == text`` always holds. ``bench/bench_units.py``
measures how many of the shared notes this reproduces exactly.

Why rules and not a sentence segmenter: pysbd (which :mod:`clinjudge.text.sentences` uses for
claims) reproduces 118 of the 159 shared notes — it keeps ``1. Shortness of breath`` whole,
cuts before ``- Depression`` and ``[Note:`` and after ``36.8 C.`` differently — while these
rules reproduce all of them; the labels of the shared file are keyed by its unit numbers, so
the cut must be the same, not merely plausible.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_LINE_RE = re.compile(r"[^\n]+")
_BOUNDARY_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
_NO_CUT_AFTER_RE = re.compile(r"(?:^|[\s(])(?:mrs?|ms|dr|prof|st|vs|e\.g|i\.e)\.$", re.IGNORECASE)
_LIST_NUMBER_RE = re.compile(r"\d{1,2}\.")
_LONE_CAPS_WORD_RE = re.compile(r"[A-Z][A-Z0-9]+[.!?]?")

TEXT, HEADER = "text", "header"


@dataclass(frozen=True)
class Unit:
    """One unit of a note: its number within the note, kind, character span and text."""

    unit: int
    kind: str
    start: int
    end: int
    text: str

    def row(self, encounter: str, system: str) -> dict[str, Any]:
        """The unit as a line of ``units.jsonl`` (the shared format)."""
        return {
            "encounter": encounter,
            "system": system,
            "unit": self.unit,
            "kind": self.kind,
            "start": self.start,
            "end": self.end,
            "text": self.text,
        }


def unit_kind(text: str) -> str:
    """``header`` for a unit of two or more characters without a lower-case letter, else
    ``text`` (rule 4)."""
    return HEADER if len(text) >= 2 and not any(c.islower() for c in text) else TEXT


def _cuts(line: str) -> list[tuple[int, int]]:
    """``(start, end)`` of the pieces of one line, before trimming (rule 2)."""
    pieces: list[tuple[int, int]] = []
    start = 0
    for boundary in _BOUNDARY_RE.finditer(line):
        before = line[start : boundary.start()]
        after = line[boundary.end() :]
        if _NO_CUT_AFTER_RE.search(before):
            continue
        if _LIST_NUMBER_RE.fullmatch(before.strip()) and _LONE_CAPS_WORD_RE.fullmatch(
            after.strip()
        ):
            continue
        pieces.append((start, boundary.start()))
        start = boundary.end()
    pieces.append((start, len(line)))
    return pieces


def note_units(note: str) -> list[Unit]:
    """The units of a note, numbered from 0 (module docstring)."""
    units: list[Unit] = []
    for line in _LINE_RE.finditer(note):
        for s, e in _cuts(line.group()):
            piece = line.group()[s:e]
            core = piece.strip()
            if not core:
                continue
            start = line.start() + s + piece.index(core)
            units.append(Unit(len(units), unit_kind(core), start, start + len(core), core))
    return units


def unit_rows(encounter: str, system: str, note: str) -> list[dict[str, Any]]:
    """The note's units as ``units.jsonl`` lines of the note ``ENCOUNTER/system``."""
    return [u.row(encounter, system) for u in note_units(note)]
