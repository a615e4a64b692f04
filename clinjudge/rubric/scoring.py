"""One item's rubric score from its criteria's grades (issue 39 item 1).

A grade is a dict per criterion: ``status`` is ``graded`` (``met`` true/false, or ``level``),
``needs_model`` (offline, not a fact criterion: not graded, never guessed), ``parse_failure`` or
``error`` (the grader's reply lacked it, or the call failed), ``tie`` (a jury split evenly:
:mod:`clinjudge.rubric.jury`). Only graded criteria count.

**met rubrics** (HealthBench):

    score = clip( Σ points of the graded criteria met  /  Σ positive points of the graded
                  criteria , 0, 1 )

A negative criterion met (the note states what must not appear) takes points away; none are
given for one not met. ``None`` when no graded criterion has positive points.

**scale rubrics** (G-Eval style, MedHELM's 1–5 jury): ``mean_level`` = the mean of the graded
criteria's levels, and ``score`` = the mean of (level − 1) / (N − 1) over them, N each
criterion's top level, so that scores of either mode read the same way on [0, 1].

**Critical gate**: a critical criterion *fails* when a positive one is not met, a negative one
is met, or a scale one is graded at level 1. With ``aggregate.critical_gate`` on, an item with a
failed critical criterion scores 0 (``raw_score`` keeps the score before the gate).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clinjudge.rubric.model import Rubric


def graded(grades: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [g for g in grades if g.get("status") == "graded"]


def healthbench_score(grades: Iterable[dict[str, Any]]) -> float | None:
    """Σ points met / Σ positive points over graded criteria, clipped to [0, 1] (module
    docstring); ``None`` without positive points."""
    done = graded(grades)
    possible = sum(g["points"] for g in done if g["points"] > 0)
    if possible <= 0:
        return None
    achieved = sum(g["points"] for g in done if g["met"])
    return min(1.0, max(0.0, achieved / possible))


def mean_level(grades: Iterable[dict[str, Any]]) -> float | None:
    levels = [g["level"] for g in graded(grades)]
    return sum(levels) / len(levels) if levels else None


def scale_score(grades: Iterable[dict[str, Any]]) -> float | None:
    """The mean of (level − 1) / (N − 1) over the graded criteria (module docstring)."""
    unit = [(g["level"] - 1) / (g["top_level"] - 1) for g in graded(grades)]
    return sum(unit) / len(unit) if unit else None


def failed_critical(grade: dict[str, Any]) -> bool:
    """A graded critical criterion that went the wrong way (module docstring)."""
    if not grade.get("critical") or grade.get("status") != "graded":
        return False
    if "level" in grade and grade["level"] is not None:
        return grade["level"] == 1
    return bool(grade["met"]) == (grade["points"] < 0)


def item_score(rubric: Rubric, grades: list[dict[str, Any]]) -> dict[str, Any]:
    """The row fields of one item's score: ``score``, ``raw_score``, ``mean_level`` (scale),
    ``gate_failed``, and the counts by status and by grader."""
    if rubric.mode == "scale":
        mean, raw = mean_level(grades), scale_score(grades)
    else:
        mean, raw = None, healthbench_score(grades)
    gate = [g["id"] for g in grades if failed_critical(g)]
    score = 0.0 if gate and rubric.aggregate.critical_gate and raw is not None else raw
    return {
        "score": score,
        "raw_score": raw,
        "mean_level": mean,
        "gate_failed": gate,
        **counts(grades),
    }


def counts(grades: list[dict[str, Any]]) -> dict[str, Any]:
    """``n_criteria``, ``n_graded``, ``n_needs_model``, ``n_failed``, ``n_ties`` (a jury's) and
    ``graded_by`` (grader → criteria it graded: ``knowledge`` offline, ``llm``, ``jury``)."""
    by: dict[str, int] = {}
    for g in graded(grades):
        by[g["graded_by"]] = by.get(g["graded_by"], 0) + 1
    return {
        "n_criteria": len(grades),
        "n_graded": sum(by.values()),
        "n_needs_model": sum(1 for g in grades if g.get("status") == "needs_model"),
        "n_failed": sum(1 for g in grades if g.get("status") in ("parse_failure", "error")),
        "n_ties": sum(1 for g in grades if g.get("status") == "tie"),
        "graded_by": by,
    }
