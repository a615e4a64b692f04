"""The optional ``evidence`` and ``span`` of a label (issue 37, item 7), between the labelling
page and the label file.

**In the label file** they are written as the shared claim-labels format has them
(``data/aci-bench/claim-labels/GUIDE.md``):

- ``evidence`` — the transcript turns the reviewer cites, as text: ``"T12, T14"``, a run of
  consecutive turns as ``"T12-T14"``; ``null`` when none is cited. Turn N, counted from 1, is the
  N-th turn of :func:`clinjudge.text.transcript.turn_spans` (``claims.csv`` numbers turns so).
- ``span`` — the offending words of the unit, the note's characters the reviewer marked;
  ``null`` when none is marked and on a supported unit (like ``severity``).

**From and to the page** they travel as numbers: ``evidence`` a list of turn numbers, ``span``
``{"start": int, "end": int}``, character offsets into the note within the unit's
``[start, end)``. The page is sent each saved span at its first place in the unit's text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clinjudge.agreement.labelling_store import BadLabel

_TURNS = re.compile(r"T?(\d+)(?:\s*-\s*T?(\d+))?")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def evidence_text(turns: list[int]) -> str | None:
    """The ``evidence`` field of sorted, distinct turn numbers (module docstring)."""
    runs: list[list[int]] = []
    for turn in turns:
        if runs and turn == runs[-1][1] + 1:
            runs[-1][1] = turn
        else:
            runs.append([turn, turn])
    parts = [f"T{a}" if a == b else f"T{a}-T{b}" for a, b in runs]
    return ", ".join(parts) or None


def evidence_numbers(text: Any) -> list[int]:
    """The turn numbers an ``evidence`` field names (``"T12-T14, T20"`` → 12, 13, 14, 20;
    ``"none"``, ``null`` or anything else → none), sorted, each once."""
    if not isinstance(text, str):
        return []
    found: set[int] = set()
    for match in _TURNS.finditer(text):
        first = int(match[1])
        last = int(match[2]) if match[2] else first
        found.update(range(first, min(last, first + 10_000) + 1))
    return sorted(found)


def check_evidence(value: Any, turns: int) -> str | None:
    """The ``evidence`` field for the turn numbers the page sent (a list of whole numbers within
    ``1..turns``; ``None`` or ``[]``: none cited).

    Raises:
        BadLabel: not such a list, or a turn the note's transcript does not have.
    """
    if value is None:
        return None
    if not isinstance(value, list) or not all(_whole(t) for t in value):
        raise BadLabel("evidence must be a list of transcript turn numbers")
    outside = [t for t in value if not 1 <= t <= turns]
    if outside:
        raise BadLabel(
            f"evidence turn {outside[0]} is not a turn of the note's transcript (turns 1-{turns})"
        )
    return evidence_text(sorted(set(value)))


def check_span(value: Any, unit: Mapping[str, Any], note: str) -> str | None:
    """The ``span`` field for the offsets the page sent (``None``: no span): the ``note``'s
    characters between them.

    Raises:
        BadLabel: not ``{"start": int, "end": int}``, empty, or not inside the unit.
    """
    if value is None:
        return None
    if not isinstance(value, dict) or not all(_whole(value.get(k)) for k in ("start", "end")):
        raise BadLabel('span must be {"start": int, "end": int} (character offsets in the note)')
    start, end = value["start"], value["end"]
    if not unit["start"] <= start < end <= unit["end"]:
        raise BadLabel(
            f"span {start}-{end} is not inside unit {unit['unit']} "
            f"(characters {unit['start']}-{unit['end']} of the note)"
        )
    return note[start:end]


def span_offsets(span: Any, unit: Mapping[str, Any], note: str) -> dict[str, int] | None:
    """Where a saved ``span`` lies in the note: its first place in the unit's text, or ``None``
    (no span, or words the unit does not hold: a file edited by hand)."""
    if not isinstance(span, str) or not span:
        return None
    at = note.find(span, unit["start"], unit["end"])
    if at < 0:
        return None
    return {"start": at, "end": at + len(span)}


def page_label(row: Mapping[str, Any], unit: Mapping[str, Any], note: str) -> dict[str, Any]:
    """A saved label row of a unit of ``note`` as the page holds it (module docstring)."""
    return {
        "label": row.get("label"),
        "severity": row.get("severity"),
        "reason": row.get("reason"),
        "evidence": evidence_numbers(row.get("evidence")),
        "span": span_offsets(row.get("span"), unit, note),
    }
