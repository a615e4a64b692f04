"""One criterion's grade, as a row of a rubric run holds it (issue 39 item 2).

Every grade carries the criterion (``id``, ``text``, ``points``, ``tags``, ``critical``,
``fact``, ``kind``) and what became of it: ``status`` ``graded`` (with ``met`` or ``level``,
the grader's ``reason``, the transcript ``turns`` it cites, counted from 1, the ``note_span``
it rests on, ``[-1, -1]`` when none, and ``graded_by``: ``knowledge`` or ``llm``),
``needs_model`` (offline and not a fact criterion), ``parse_failure`` (the grader's reply never
gave it, or gave it out of range), ``error`` (the call failed) or ``tie`` (a jury split evenly,
:mod:`clinjudge.rubric.jury`; a jury's grade also holds ``votes`` and each juror's verdict under
``jurors``, and ``graded_by`` ``jury``). Only ``graded`` ones score.
"""

from __future__ import annotations

from typing import Any

from clinjudge.rubric.model import Criterion


def base(criterion: Criterion, top_level: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": criterion.id,
        "text": criterion.text,
        "points": criterion.points,
        "tags": list(criterion.tags),
        "critical": criterion.critical,
        "fact": criterion.fact,
        "kind": criterion.fact_kind,
    }
    if top_level is not None:
        out["top_level"] = top_level
    return out


def graded_met(
    criterion: Criterion,
    met: bool,
    *,
    reason: str,
    turns: list[int],
    note_span: list[int],
    graded_by: str,
) -> dict[str, Any]:
    return {
        **base(criterion),
        "status": "graded",
        "met": met,
        "reason": reason,
        "turns": turns,
        "note_span": note_span,
        "graded_by": graded_by,
    }


def graded_level(
    criterion: Criterion, level: float, top_level: int, *, reason: str, turns: list[int]
) -> dict[str, Any]:
    return {
        **base(criterion, top_level),
        "status": "graded",
        "level": level,
        "reason": reason,
        "turns": turns,
        "note_span": [-1, -1],
        "graded_by": "llm",
    }


def needs_model(criterion: Criterion) -> dict[str, Any]:
    reason = "offline only fact criteria are graded; this one needs a model"
    return {**base(criterion), "status": "needs_model", "reason": reason, "graded_by": None}


def not_graded(criterion: Criterion, kind: str, reason: str) -> dict[str, Any]:
    """A criterion the grader failed on: ``kind`` ``parse_failure`` or ``error``."""
    return {**base(criterion), "status": kind, "reason": reason, "graded_by": None}
