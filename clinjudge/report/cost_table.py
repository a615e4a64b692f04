"""The cost of a run as one table, for the console, ``report.md`` and ``report.html``: a row
per judge (and per judge and system in a multi-system run) and the total, from
``report.json``'s ``cost`` (:func:`clinjudge.llm_usage.cost_report`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinjudge.report.formatting import markdown_table

#: The columns of :func:`cost_rows`, as headers.
COST_COLUMNS = (
    "judge",
    "system",
    "notes",
    "calls",
    "cache hits",
    "prompt tokens",
    "cached prompt tokens",
    "completion tokens",
    "seconds",
)


def cost_rows(cost: dict[str, Any] | None) -> list[list[str]]:
    """The table's rows as text, ``USD`` last when the run was priced; ``[]`` without a
    ``cost``."""
    if not cost or not cost.get("judges"):
        return []
    rows = []
    for name, totals in cost["judges"].items():
        rows.append(_row(name, "all", totals))
        for system, per in (cost.get("systems") or {}).get(name, {}).items():
            rows.append(_row(name, system, per))
    if len(cost["judges"]) > 1:
        rows.append(["total", "all", "", *_row("", "", cost["total"])[3:]])
    return rows


def cost_columns(cost: dict[str, Any] | None) -> tuple[str, ...]:
    return COST_COLUMNS + (("USD",) if cost and cost.get("prices") else ())


def _row(judge: str, system: str, t: dict[str, Any]) -> list[str]:
    row = [
        judge,
        system,
        str(t.get("items", 0)),
        f"{t.get('calls', 0):,}",
        f"{t.get('cache_hits', 0):,}",
        f"{t.get('prompt_tokens', 0):,}",
        f"{t.get('cached_prompt_tokens', 0):,}",
        f"{t.get('completion_tokens', 0):,}",
        f"{t.get('seconds', 0.0):.1f}",
    ]
    if "usd" in t:
        row.append(usd(t["usd"]))
    return row


def usd(value: float) -> str:
    """Dollars with cents, or four decimals under a dollar (a note can cost a fraction of a
    cent)."""
    return f"${value:,.2f}" if value >= 1 else f"${value:.4f}"


def cost_note(cost: dict[str, Any] | None) -> str:
    """One sentence under the table: what the prices were (or that there were none), and
    rows whose cost is unknown."""
    if not cost:
        return ""
    prices = cost.get("prices")
    if prices:
        said = (
            f"USD at ${prices['input']:g} per million prompt tokens, "
            f"${prices['cached_input']:g} per million cached prompt tokens, "
            f"${prices['output']:g} per million completion tokens."
        )
    else:
        said = "No prices given (--price-in/--price-out, or CLINJUDGE_PRICE_IN/OUT): tokens only."
    unknown = (cost.get("total") or {}).get("items_without_cost") or 0
    if unknown:
        said += f" {unknown} rows were judged by an earlier version and carry no cost."
    return "Cost: tokens as the server reported them; cache hits cost no call. " + said


def cost_section(cost: dict[str, Any] | None) -> Iterator[str]:
    """``## Cost`` of ``report.md``: the table and its note."""
    rows = cost_rows(cost)
    if not rows:
        return
    yield "## Cost"
    yield markdown_table(list(cost_columns(cost)), rows)
    yield cost_note(cost)


def note_cost(costs: dict[str, Any]) -> str:
    """One line of a note's cost per judge (``costs``: judge → the row's ``cost``), e.g.
    ``inference-aware: 3 calls, 2,400 prompt tokens (1,800 cached), 80 completion, 4.1 s``."""
    parts = []
    for name, c in costs.items():
        if not isinstance(c, dict):
            continue
        cached = c.get("cached_prompt_tokens") or 0
        parts.append(
            f"{name}: {c.get('calls', 0)} calls, {c.get('prompt_tokens', 0):,} prompt tokens"
            + (f" ({cached:,} cached)" if cached else "")
            + f", {c.get('completion_tokens', 0):,} completion, {c.get('seconds', 0.0):.1f} s"
        )
    return " · ".join(parts)
