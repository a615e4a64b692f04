"""``clinjudge report``: a compare or arena run's reports rendered again from its directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clinjudge.cli.common import check_choice, one_line_errors, stdout
from clinjudge.cli.cost import PriceCachedOpt, PriceInOpt, PriceOutOpt, run_prices
from clinjudge.errors import ConfigError


def report(
    run_dir: Annotated[
        Path,
        typer.Argument(help="A directory written by `clinjudge compare` or `clinjudge arena`."),
    ],
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="Summary printed: table (a terminal), or for scripts tsv / json: one "
            "row per judge × system × metric with the columns judge, system ('all' pools "
            "every note), metric, value, ci95_low, ci95_high, n, n_notes.",
        ),
    ] = "table",
    judges: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated judges of the run to print (default: all). The files "
            "(report.json, report.md, the plots, report.html) always cover every judge the "
            "run holds."
        ),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option(help="The dataset file, when it has moved since the run."),
    ] = None,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
    price_cached: PriceCachedOpt = None,
) -> None:
    """Render report.json, report.md, verdicts.jsonl, the plots and report.html again from what
    a compare run directory holds; nothing is judged and no model is called. Given an arena run,
    write its leaderboard.md, ratings.png and report.html (the pair view) again from its
    report.json and pairs.jsonl.

    The dataset is loaded as the last `compare` into the directory loaded it; items it has no
    row for yet are counted as not judged (the compare command judges them). The cost is priced
    at the prices given, else at those the last report used.

    Example: `clinjudge compare aci-demo --out runs/demo`, then
    `clinjudge report runs/demo --format tsv`.

    Exit codes: 0 done; 2 not a run directory, or its dataset cannot be read.
    """
    with one_line_errors():
        check_choice(output_format, ("table", "tsv", "json"), "--format")
        prices = run_prices(price_in, price_out, price_cached) or last_prices(run_dir)
        from clinjudge.run_dir import RunDir

        if not run_dir.is_dir():
            raise ConfigError(f"{run_dir}: no such run directory")
        from clinjudge.run_kind import require_kind

        require_kind(run_dir, ("compare", "arena"), "`clinjudge report`")
        manifest = RunDir(run_dir).recorded()
        command = dict(manifest.get("command") or {})
        if not command:
            raise ConfigError(
                f"{run_dir}: holds no compare run recorded by this version (run.json has no "
                "command); run the same compare into it once"
            )
        if dataset is not None:
            command["dataset"] = dataset
        from clinjudge.datasets.loader import resolve_source

        resolve_source(command["dataset"])
        if "pairwise" in manifest.get("judges", {}):  # an arena run
            _render_arena(run_dir, command)
            return
        held = [n for n in manifest.get("judges", {}) if n != "pairwise"]
        shown = [n.strip() for n in judges.split(",")] if judges else held
        unknown = [n for n in shown if n not in held]
        if unknown:
            raise ConfigError(
                f"{run_dir}: no judge {unknown[0]!r} in the run (it has {', '.join(held)})"
            )
        from clinjudge.cli.compare import (
            load_run_items,
            print_compare_summary,
            print_headlines,
            renderers,
        )
        from clinjudge.compare import judged_on_disk, write_compare
        from clinjudge.run_dir import run_lock

        # rows are rendered, not judged: offline judges of the same names read them
        evaluators = renderers(held, command["option"])
        data = load_run_items(command, any(e.needs_source for e in evaluators.values()))
        with run_lock(run_dir):
            judged = judged_on_disk(data, evaluators, run_dir)
            result = write_compare(data, evaluators, judged, run_dir, prices=prices)
    printed = {**result.report, "judges": {n: result.report["judges"][n] for n in shown}}
    if output_format == "table":
        print_compare_summary(printed, result.files)
    else:
        print_headlines(printed, output_format)
    for name, ids in result.report.get("not_judged", {}).items():
        stdout.print(
            f"{name}: {len(ids)} of {result.report['n_items']} items not judged yet; "
            "the compare command judges them"
        )


def _render_arena(run_dir: Path, command: dict) -> None:
    from clinjudge.arena_run import render_arena_again
    from clinjudge.cli.arena import load_arena_items, print_leaderboard

    result = render_arena_again(run_dir, load_arena_items(command))
    print_leaderboard(result.report)
    stdout.print("wrote " + ", ".join(str(f) for f in result.files))


def last_prices(run_dir: Path):
    """The prices the run's last report was priced at (``None``: tokens only)."""
    import json

    from clinjudge.llm_usage import Prices

    path = run_dir / "report.json"
    try:
        found = (json.loads(path.read_text(encoding="utf-8")).get("cost") or {}).get("prices")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(found, dict):
        return None
    return Prices(found["input"], found["output"], found.get("cached_input"))
