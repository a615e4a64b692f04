"""What a report says about a rubric judge beside its headline (issue 39): how many criteria
each grader graded — ``knowledge`` (offline, fact criteria) or ``llm`` — how many need a model
and how many failed; and one criterion's verdict in words, for ``claims.csv`` and the viewer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinjudge.report.jury_lines import jury_line, jury_tables


def graded_line(name: str, summary: dict[str, Any]) -> str | None:
    """``NAME: criteria graded by knowledge 34, by llm 0; 6 need a model; 0 failed (of 40)``;
    ``None`` for a judge that is not a rubric."""
    if summary.get("kind") != "rubric":
        return None
    c = summary.get("criteria") or {}
    by = ", ".join(f"by {k} {v}" for k, v in (c.get("graded_by") or {}).items()) or "none"
    ties = f"; {c['ties']} tied (a jury split evenly: not scored)" if c.get("ties") else ""
    return (
        f"{name}: criteria graded {by}; {c.get('needs_model', 0)} need a model (not graded, "
        f"never guessed); {c.get('failed', 0)} failed{ties} (of {c.get('n', 0)})"
    )


def rubric_lines(judges: dict[str, dict[str, Any]]) -> Iterator[str]:
    """The console lines of the rubric judges: :func:`graded_line`, and a jury's agreement."""
    for name, summary in judges.items():
        yield from filter(None, (graded_line(name, summary), jury_line(name, summary)))


def rubric_section(
    judges: dict[str, dict[str, Any]], usage: dict[str, Any] | None = None
) -> Iterator[str]:
    """The ``report.md`` lines of :func:`graded_line`, one paragraph; then each jury's tables
    (:func:`clinjudge.report.jury_lines.jury_tables`; ``usage``: report.json's, per judge)."""
    lines = [line for n, j in judges.items() if (line := graded_line(n, j))]
    if lines:
        yield "Rubric criteria: " + "; ".join(lines) + "."
    for name, summary in judges.items():
        yield from jury_tables(name, summary, (usage or {}).get(name))


def verdict_words(criterion: dict[str, Any]) -> str:
    """``met``, ``not met``, ``level 4 of 5``, or what became of an ungraded criterion."""
    if criterion.get("status") != "graded":
        return str(criterion.get("status", "")).replace("_", " ")
    if criterion.get("level") is not None:
        return f"level {criterion['level']} of {criterion.get('top_level', '?')}"
    return "met" if criterion.get("met") else "not met"


def passes(criterion: dict[str, Any]) -> bool | None:
    """Whether the text passes a graded met/not-met criterion (a positive one met, a negative
    one not met); ``None`` for levels and ungraded criteria."""
    if criterion.get("status") != "graded" or criterion.get("met") is None:
        return None
    return bool(criterion["met"]) == (criterion.get("points", 1) >= 0)
