"""What a run costs, on the command line: the price options (``--price-in``, ``--price-out``,
``--price-cached``; or ``CLINJUDGE_PRICE_IN`` / ``_OUT`` / ``_CACHED``) and the cost table of
the console summary (:mod:`clinjudge.report.cost_table`)."""

from __future__ import annotations

from typing import Annotated

import typer

from clinjudge.cli.common import stdout

PriceInOpt = Annotated[
    str | None,
    typer.Option(
        "--price-in",
        help="USD per million prompt tokens (or CLINJUDGE_PRICE_IN): the reports add what the "
        "run cost. With --price-out; no price is ever assumed.",
        show_default=False,
    ),
]
PriceOutOpt = Annotated[
    str | None,
    typer.Option(
        "--price-out",
        help="USD per million completion tokens (or CLINJUDGE_PRICE_OUT).",
        show_default=False,
    ),
]
PriceCachedOpt = Annotated[
    str | None,
    typer.Option(
        "--price-cached",
        help="USD per million prompt tokens the server read from its prompt cache (or "
        "CLINJUDGE_PRICE_CACHED; default: the --price-in price).",
        show_default=False,
    ),
]


def run_prices(price_in: str | None, price_out: str | None, price_cached: str | None):
    """The :class:`~clinjudge.llm_usage.Prices` of the options or the environment, ``None``
    when none is named.

    Raises:
        ConfigError: a price that is not a number ≥ 0, or only one of input and output.
    """
    from clinjudge.llm_usage import Prices

    return Prices.given(price_in, price_out, price_cached)


def print_cost(report: dict) -> None:
    """The cost table (per judge, per system, total) and its note; nothing for a report
    without a cost."""
    from rich.table import Table

    from clinjudge.report.cost_table import cost_columns, cost_note, cost_rows

    cost = report.get("cost")
    rows = cost_rows(cost)
    if not rows:
        return
    table = Table(title="cost", header_style="bold")
    for column in cost_columns(cost):
        table.add_column(column, justify="left" if column in ("judge", "system") else "right")
    for row in rows:
        table.add_row(*row)
    stdout.print(table)
    stdout.print(cost_note(cost), highlight=False)
