"""``clinjudge arena``: which system writes the better notes — pairwise judging, Elo and
Bradley–Terry (SPEC §6, issue 25)."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from clinjudge.cli.common import (
    BACKENDS,
    BackendOpt,
    GgufOpt,
    PromptOpt,
    ThreadsOpt,
    UsageError,
    check_choice,
    one_line_errors,
    print_run_failures,
    stdout,
    warn_skipped,
)
from clinjudge.cli.progress import progress_bars
from clinjudge.cli.stopping import interrupt_keeps


def arena(
    dataset: Annotated[
        str,
        typer.Argument(
            help="A CSV/JSONL/JSON file with the notes of several systems for the same "
            "encounters: one note column per system, or a system column (--system-column)."
        ),
    ],
    systems: Annotated[
        str,
        typer.Option(
            help="Comma-separated systems, at least 2: the note columns (e.g. "
            "reference,gpt4,bart), or the values of --system-column."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Output directory (resumable: re-run to continue).")],
    judge: Annotated[
        str, typer.Option("--judges", "--judge", help="The pairwise judge: pairwise.")
    ] = "pairwise",
    backend: BackendOpt = "auto",
    gguf: GgufOpt = None,
    threads: ThreadsOpt = None,
    prompt: PromptOpt = None,
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            help="A pairwise judge setting pairwise.KEY=VALUE: pairwise.criteria=safety,"
            "completeness picks and orders the criteria (default relevance, completeness, "
            "safety, ethics, clarity; overall is always asked).",
        ),
    ] = None,
    system_column: Annotated[
        str | None,
        typer.Option(
            help="Column naming the system of each row (one row per encounter and system)."
        ),
    ] = None,
    source_column: Annotated[
        str | None, typer.Option(help="Column holding the source text, when not detected.")
    ] = None,
    id_column: Annotated[str | None, typer.Option(help="Column holding the encounter id.")] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N encounters.", min=1)] = None,
    pairs_per_item: Annotated[
        int | None,
        typer.Option(
            help="Pairs of systems judged per encounter, drawn at random (seeded); all pairs "
            "when not given.",
            min=1,
        ),
    ] = None,
    k: Annotated[float, typer.Option("--k", help="Elo K factor.", min=0.1)] = 4.0,
    initial: Annotated[float, typer.Option(help="Elo initial rating.")] = 1000.0,
    orders: Annotated[
        int, typer.Option(help="Shuffled match orders averaged for the Elo rating.", min=1)
    ] = 100,
    replicates: Annotated[
        int, typer.Option(help="Bootstrap replicates over encounters for the intervals.", min=1)
    ] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of pair sampling, orders and bootstrap.")] = 0,
) -> None:
    """Judge every pair of systems per encounter in both orders; write report.json,
    leaderboard.md, pairs.jsonl and ratings.png.

    Offline, the pairwise judge prefers, per criterion (relevance, completeness, safety,
    ethics, clarity), the note the offline SOAP and omission judges found better, and calls a
    draw when their evidence does not separate the two. On an LLM it asks the pairwise.compare
    prompt once per order (--option pairwise.criteria=safety,completeness picks criteria;
    --prompt pairwise.compare=FILE replaces the prompt). Re-run the same command to resume.

    Exit codes: 0 done; 2 bad input; 130 interrupted (the same command resumes).
    """
    with one_line_errors(), ExitStack() as held:
        check_choice(judge, ("pairwise",), "--judge")
        check_choice(backend, BACKENDS, "--backend")
        names = [s.strip() for s in systems.split(",") if s.strip()]
        if len(names) < 2:
            raise UsageError(f"--systems needs at least 2 systems, got {systems!r}")
        if len(set(names)) != len(names):
            raise UsageError(f"--systems names a system twice: {systems!r}")
        from clinjudge.datasets.loader import resolve_source

        _, found = resolve_source(dataset)
        from clinjudge.run_dir import run_lock

        held.enter_context(run_lock(out))  # a second writer is told at once, not after loading
        command = {
            "dataset": str(found.resolve()),
            "systems": names,
            "system_column": system_column,
            "load": {
                "limit": limit,
                "transcript_column": source_column,
                "id_column": id_column,
            },
        }
        data = load_arena_items(command)
        warn_skipped(data)
        from clinjudge.arena.standings import RatingSettings
        from clinjudge.arena_run import run_arena
        from clinjudge.cli.common import run_concurrency

        text_judges, pairwise = build_arena_judges(backend, prompt, option)
        in_flight = run_concurrency({**text_judges, pairwise.name: pairwise}, 4)
        settings = RatingSettings(
            initial=initial, k=k, n_orders=orders, replicates=replicates, seed=seed
        )
        with interrupt_keeps(out, len(data.items)), progress_bars() as progress:
            result = asyncio.run(
                run_arena(
                    data,
                    names,
                    text_judges,
                    pairwise,
                    out,
                    settings=settings,
                    pairs_per_item=pairs_per_item,
                    progress=progress,
                    command=command,
                    concurrency=in_flight,
                )
            )
    print_leaderboard(result.report)
    print_run_failures(result.report)
    stdout.print("wrote " + ", ".join(str(f) for f in result.files))


def load_arena_items(command: dict):
    """The items of the named systems, either dataset shape.

    Raises:
        UsageError: a system not in the system column.
    """
    from clinjudge.datasets import load_items
    from clinjudge.datasets.systems import load_system_columns, systems_of

    options = {
        "require_source": True,
        "column_options": {"transcript": "--source-column"},
        **command["load"],
    }
    names = command["systems"]
    if command["system_column"] is None:
        return load_system_columns(command["dataset"], names, **options)
    limit = options.pop("limit")  # encounters, not rows
    data = load_items(command["dataset"], system_column=command["system_column"], **options)
    if limit is not None:
        first = list(dict.fromkeys(str(i.meta["encounter"]) for i in data.items))[:limit]
        data = data.model_copy(
            update={"items": [i for i in data.items if str(i.meta["encounter"]) in first]}
        )
    present = systems_of(data.items)
    if unknown := [s for s in names if s not in present]:
        raise UsageError(
            f"system {unknown[0]!r} is not in column {command['system_column']!r} "
            f"(found: {', '.join(present) or 'none'})"
        )
    kept = [i for i in data.items if i.meta.get("system") in names]
    return data.model_copy(update={"items": kept})


def build_arena_judges(
    backend: str = "offline", prompt: list[str] | None = None, option: list[str] | None = None
):
    """The pairwise judge on ``backend`` (``--prompt`` and ``--option pairwise.KEY=VALUE``
    applied) and, when it runs offline, the offline judges whose evidence it reads."""
    from clinjudge.cli.common import judge_options, prompt_overrides
    from clinjudge.evaluators import BuildOptions, build_evaluator
    from clinjudge.evaluators.pairwise import EVIDENCE_JUDGES, build_pairwise
    from clinjudge.llm import LLMSettings, ResponseCache

    pairwise = build_pairwise(
        BuildOptions(
            backend=backend,
            settings=LLMSettings(),
            prompt_overrides=prompt_overrides(prompt),
            cache=ResponseCache(),
            options=judge_options(option, ["pairwise"]).get("pairwise", {}),
        )
    )
    if pairwise.uses_model:
        return {}, pairwise
    from clinjudge.knowledge.base import KnowledgeBase

    options = BuildOptions(backend="offline", knowledge=KnowledgeBase.default())
    return {n: build_evaluator(n, options) for n in EVIDENCE_JUDGES}, pairwise


def print_leaderboard(report: dict) -> None:
    from rich.table import Table

    from clinjudge.report.arena_report import rating_interval

    s = report["settings"]
    table = Table(
        title=f"{report['dataset']}: {report['n_encounters']} encounters, "
        f"{report['n_pairs']} pairs (Elo initial {s['initial']:g}, K {s['k']:g})",
        header_style="bold",
    )
    for column in ("rank", "system", "Elo", "95% CI", "Bradley–Terry", "95% CI", "matches"):
        table.add_column(column)
    for e in report["leaderboard"]:
        table.add_row(
            str(e["rank"]),
            e["system"],
            f"{e['elo']:.0f}",
            rating_interval(e),
            "n/a" if e["bt"] is None else f"{e['bt']:.0f}",
            rating_interval(e, "bt"),
            str(e["n_matches"]),
        )
    stdout.print(table)
    bias = report["criteria"]["overall"]["position_bias"]
    rate = "n/a" if bias["rate"] is None else f"{bias['rate']:.1%}"
    stdout.print(f"position bias (overall): {rate} of {bias['n']} pairs", highlight=False)
    stdout.print(
        f"Elo: from {s['initial']:g}, K {s['k']:g}, mean over shuffled match orders; "
        "Bradley–Terry: order-free, on the Elo scale; 95% CI: bootstrap over encounters "
        '("n too small" under 5); a win counts only when it holds in both orders, else a '
        "draw; position bias: pairs where the same position won in both orders. "
        "Per criterion: leaderboard.md.",
        highlight=False,
    )
    usage = report.get("usage")
    if usage and usage.get("calls_per_pair") is not None:
        stdout.print(
            f"model calls: {usage['calls']} ({usage['calls_per_pair']:.2f} per pair), "
            f"{usage['cache_hits']} served from the cache; tokens as the server reported them: "
            f"{usage.get('input_tokens', 0):,} prompt "
            f"({usage.get('cached_input_tokens', 0):,} from its cache), "
            f"{usage.get('output_tokens', 0):,} completion",
            highlight=False,
        )
