"""A compare report's headline numbers as flat rows, one per judge × system × metric: what
``--format tsv`` and ``--format json`` print for scripts (issue 37).

Columns (stable; TSV header and JSON keys alike):

    judge  system  metric  value  ci95_low  ci95_high  n  n_notes

``system`` is :data:`ALL` for the numbers pooled over every note of the run (the only rows of
a one-system run), then each system's own rows (``report["systems"]["by_system"]``) in the
order the run names them. ``n`` is what the metric is over (claims, facts, notes: the judge's
headline says), ``n_notes`` the notes judged (the summary's ``n_notes``, else ``n_judged``).
Empty cells: no value (e.g. no claim judged).

Each judge's (and each system's) metrics are followed by the cost of judging them (issue 38),
from ``report["cost"]``: metrics ``cost.calls``, ``cost.cache_hits``, ``cost.prompt_tokens``,
``cost.cached_prompt_tokens``, ``cost.completion_tokens``, ``cost.seconds`` and, when the run
was priced, ``cost.usd``; no interval, ``n`` and ``n_notes`` the notes counted.
"""

from __future__ import annotations

from typing import Any

from clinjudge.llm_usage import COST_FIELDS

COLUMNS = ("judge", "system", "metric", "value", "ci95_low", "ci95_high", "n", "n_notes")
#: The ``system`` of the rows pooled over the whole run.
ALL = "all"


def headline_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every headline metric of ``report`` (a compare ``report.json``) as a row of
    :data:`COLUMNS`, pooled rows first, then per system."""
    rows: list[dict[str, Any]] = []
    by_system = (report.get("systems") or {}).get("by_system") or {}
    cost = report.get("cost") or {}
    for judge, summary in report.get("judges", {}).items():
        judged = summary.get("n_notes", summary.get("n_judged"))
        rows += _rows(judge, ALL, summary.get("headline") or {}, judged)
        rows += _cost_rows(judge, ALL, (cost.get("judges") or {}).get(judge))
        system_costs = (cost.get("systems") or {}).get(judge) or {}
        for system, headline in (by_system.get(judge) or {}).items():
            metrics = {k: v for k, v in headline.items() if isinstance(v, dict)}
            rows += _rows(judge, system, metrics, headline.get("n_notes"))
            rows += _cost_rows(judge, system, system_costs.get(system))
    return rows


#: The cost counters a row is given for, in this order (``usd`` only when priced).
COST_METRICS = (*COST_FIELDS, "usd")


def _cost_rows(judge: str, system: str, totals: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not totals:
        return []
    items = totals.get("items")
    return [
        {
            "judge": judge,
            "system": system,
            "metric": f"cost.{name}",
            "value": totals[name],
            "ci95_low": None,
            "ci95_high": None,
            "n": items,
            "n_notes": items,
        }
        for name in COST_METRICS
        if name in totals
    ]


def _rows(judge: str, system: str, headline: dict, n_notes: Any) -> list[dict[str, Any]]:
    out = []
    for metric, h in headline.items():
        lo, hi = h.get("ci95") or (None, None)
        out.append(
            {
                "judge": judge,
                "system": system,
                "metric": metric,
                "value": h.get("value"),
                "ci95_low": lo,
                "ci95_high": hi,
                "n": h.get("n"),
                "n_notes": n_notes,
            }
        )
    return out


def as_tsv(rows: list[dict[str, Any]]) -> str:
    """The rows as tab-separated text with a header line (empty cell for a missing value)."""
    lines = ["\t".join(COLUMNS)]
    for row in rows:
        lines.append("\t".join("" if row[c] is None else str(row[c]) for c in COLUMNS))
    return "\n".join(lines) + "\n"
