"""What a run costs, on the command line: the price options (``--price-in``, ``--price-out``,
``--price-cached``; or ``CLINJUDGE_PRICE_IN`` / ``_OUT`` / ``_CACHED``) and the cost table of
the console summary (:mod:`clinjudge.report.cost_table`)."""

from __future__ import annotations

import os
from pathlib import Path
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
    """The cost table (per judge, per system, total) and its note; one line for a run that
    called no model; nothing for a report without a cost."""
    from rich.table import Table

    from clinjudge.report.cost_table import cost_columns, cost_note, cost_rows

    cost = report.get("cost")
    rows = cost_rows(cost)
    if not rows:
        return
    total = cost.get("total") or {}
    if not total.get("calls") and not total.get("cache_hits"):  # offline: nothing to count
        stdout.print(
            f"Cost: no model call (offline judges); judging took {total.get('seconds', 0):.1f} s.",
            highlight=False,
        )
        return
    table = Table(title="cost", header_style="bold")
    for column in cost_columns(cost):
        table.add_column(column, justify="left" if column in ("judge", "system") else "right")
    for row in rows:
        table.add_row(*row)
    stdout.print(table)
    stdout.print(cost_note(cost), highlight=False)


DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Estimate instead of judging: build the prompts the run would send (no model is "
        "called, nothing is written), count their tokens with the model's tokenizer when "
        "known, else ~characters/4 (said so), and print calls and prompt tokens per judge, "
        "the share a call shares with the call before it (what a server can reuse), and money "
        "when priced.",
    ),
]


def dry_run_backend(backend: str, gguf: Path | None) -> str:
    """The backend a dry run builds its judges on: ``--backend local`` would start a model
    server, so its judges are built as ``llm`` judges of the GGUF's name that are never
    called (the URL is not contacted)."""
    if backend != "local":
        return backend
    if gguf is None:
        from clinjudge.errors import ConfigError

        raise ConfigError("backend local needs a model file: --gguf FILE (or CLINJUDGE_GGUF)")
    os.environ.setdefault("CLINJUDGE_MODEL", gguf.stem)
    os.environ.setdefault("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never contacted
    return "llm"


def print_dry_run(data, evaluators: dict, out: Path, prices, gguf: Path | None) -> None:
    """The estimate of a compare run (:func:`clinjudge.estimate.estimate_run`) as a table;
    ``gguf``: the model file of ``--backend local``, whose tokenizer counts and whose server
    (llama-cpp-python) reads the reply's schema in the prompt, so it is counted there."""
    from rich.table import Table

    from clinjudge.estimate import estimate_run
    from clinjudge.llm_dialects import ENDPOINTS
    from clinjudge.report.cost_table import usd
    from clinjudge.token_count import token_counter

    models = [p.get("model") for e in evaluators.values() if (p := e.provenance()).get("model")]
    if gguf:
        for judge in evaluators.values():
            caller = getattr(getattr(judge, "setup", judge), "caller", None)
            if caller is not None:
                ENDPOINTS.refused(caller.endpoint, "json_schema")
    counter = token_counter(models[0] if models else None, gguf or None)
    found = estimate_run(data, evaluators, counter, out_dir=out, prices=prices)
    n = len(data.items)
    title = f"dry run over {n} item{'s' * (n != 1)}: nothing sent"
    table = Table(title=title, header_style="bold")
    columns = ("judge", "items", "calls", "prompt tokens", "shared prefix")
    for column in (*columns, *(("USD",) if prices else ())):
        table.add_column(column, justify="left" if column == "judge" else "right")
    for name, e in [*found["judges"].items(), ("total", found["total"])]:
        if e["calls"] is None:
            table.add_row(name, str(e["items"]), *["n/a"] * (3 + bool(prices)))
            continue
        shared = f"{e['prefix_tokens'] / e['prompt_tokens']:.0%}" if e["prompt_tokens"] else "–"
        cells = [str(e.get("items", "")), f"{e['calls']:,}", f"{e['prompt_tokens']:,}", shared]
        table.add_row(name, *cells, *((usd(e["usd"]),) if prices else ()))
    stdout.print(table)
    for name, e in found["judges"].items():
        if e.get("note"):
            stdout.print(f"{name}: {e['note']}", highlight=False)
    cached = "--price-cached" if prices and prices.cached_input is not None else "input"
    said = f"USD: the shared prefix at the {cached} price, the rest at the input price; "
    stdout.print(
        f"Tokens counted with {found['tokenizer']}. Shared prefix: the share of the prompt "
        "tokens that open a call as they open the call before it (one request in flight), "
        "what a server keeping its previous prefix reads once. Completion tokens are not "
        f"estimated (they depend on the replies); {said * bool(prices)}nothing was sent and "
        "nothing written.",
        highlight=False,
    )
