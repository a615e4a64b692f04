"""A rubric run's summary over items (issue 39 item 1): the numbers ``report.json`` holds.

score          = mean over items of the item score (:mod:`clinjudge.rubric.scoring`), with
                 its percentile-bootstrap 95% interval, items resampled
                 (:func:`clinjudge.metrics.intervals.bootstrap_ci`); items with no score
                 (nothing graded) are excluded and counted
mean_level     = (scale rubrics) mean over items of the item's mean level, bootstrap interval
gate_failure_rate = items failing a critical criterion / items scored (Wilson interval)
by_tag[t]      = the same score over the criteria tagged t only (HealthBench's per-axis
                 and per-theme scores)
by_criterion[c] = met share (Wilson interval) or mean level (bootstrap), per criterion id
graded_by      = criteria graded per grader (``knowledge`` offline, ``llm``, ``jury``), beside
                 the criteria that need a model, those whose grading failed and a jury's ties
jury           = (``--jury``) how far the jurors agree: :mod:`clinjudge.rubric.jury_agreement`
"""

from __future__ import annotations

from typing import Any

from clinjudge.rubric.jury_agreement import jury_summary
from clinjudge.rubric.model import Rubric
from clinjudge.rubric.scoring import graded, healthbench_score, mean_level


def summarize(rubric: Rubric, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The judge's entry under ``judges`` in ``report.json`` (module docstring)."""
    from clinjudge.metrics.intervals import bootstrap_interval, wilson_interval

    judged = [r for r in rows if r.get("criteria") is not None]
    scored = [r for r in judged if r.get("score") is not None]
    scores = [r["score"] for r in scored]
    gated = sum(1 for r in scored if r.get("gate_failed"))
    headline: dict[str, Any] = {
        "score": {
            "value": _mean(scores),
            "ci95": _interval(scores, rubric),
            "n": len(scores),
            "excluded": len(rows) - len(scores),
        },
    }
    if rubric.mode == "scale":
        levels = [r["mean_level"] for r in scored if r.get("mean_level") is not None]
        headline["mean_level"] = {
            "value": _mean(levels),
            "ci95": _interval(levels, rubric),
            "n": len(levels),
        }
    if any(c.get("critical") for r in judged for c in r["criteria"]):
        headline["gate_failure_rate"] = {
            "value": gated / len(scored) if scored else None,
            "ci95": list(wilson_interval(gated, len(scored))) if scored else None,
            "n": len(scored),
        }
    return {
        "kind": "rubric",
        "headline": headline,
        "rubric": {k: getattr(rubric, k) for k in ("name", "version", "mode", "sha256")},
        "n_items": len(rows),
        "n_judged": len(judged),
        "excluded": len(rows) - len(scores),
        "criteria": _totals(judged),
        "by_tag": _by_tag(rubric, judged),
        "by_criterion": _by_criterion(judged, bootstrap_interval, wilson_interval),
        **({"jury": jury} if (jury := jury_summary(judged)) is not None else {}),
    }


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _interval(values: list[float], rubric: Rubric) -> list[float] | None:
    from clinjudge.metrics.intervals import MIN_BOOTSTRAP_UNITS, bootstrap_ci

    if len(values) < MIN_BOOTSTRAP_UNITS:
        return None
    return list(bootstrap_ci(values, n_resamples=rubric.aggregate.n_resamples))


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Criteria over every item: how many, graded per grader, needing a model, failed, tied."""
    by: dict[str, int] = {}
    for r in rows:
        for grader, n in (r.get("graded_by") or {}).items():
            by[grader] = by.get(grader, 0) + n
    return {
        "n": sum(r["n_criteria"] for r in rows),
        "graded_by": dict(sorted(by.items())),
        "needs_model": sum(r["n_needs_model"] for r in rows),
        "failed": sum(r["n_failed"] for r in rows),
        "ties": sum(r.get("n_ties", 0) for r in rows),
    }


def _by_tag(rubric: Rubric, rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    tags = sorted({t for r in rows for c in r["criteria"] for t in c.get("tags") or ()})
    out = {}
    for tag in tags:
        values = []
        for r in rows:
            mine = [c for c in r["criteria"] if tag in (c.get("tags") or ())]
            value = mean_level(mine) if rubric.mode == "scale" else healthbench_score(mine)
            if value is not None:
                values.append(value)
        out[tag] = {"value": _mean(values), "ci95": _interval(values, rubric), "n": len(values)}
    return out


def _by_criterion(rows: list[dict[str, Any]], bootstrap, wilson) -> dict[str, dict[str, Any]]:  # noqa: ANN001
    """Per criterion id: met share with its Wilson interval, or mean level with its bootstrap
    interval, over the items that graded it."""
    found: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        for c in graded(r["criteria"]):
            found.setdefault(c["id"], []).append(c)
    out = {}
    for cid, grades in found.items():
        if grades[0].get("level") is not None:
            levels = [g["level"] for g in grades]
            out[cid] = {"mean_level": _mean(levels), "ci95": bootstrap(levels), "n": len(levels)}
        else:
            met = sum(1 for g in grades if g["met"])
            interval = list(wilson(met, len(grades)))
            out[cid] = {"met_rate": met / len(grades), "ci95": interval, "n": len(grades)}
    return out
