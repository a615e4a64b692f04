"""``clinjudge compare``: several judges over a dataset, one report (JSON, Markdown, plots)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from clinjudge.cli import cost as costs
from clinjudge.cli.common import (
    BACKENDS,
    BackendOpt,
    ClaimsOpt,
    ConcurrencyOpt,
    GgufOpt,
    JuryOpt,
    OptionOpt,
    PromptOpt,
    RetryOpt,
    ThreadsOpt,
    UsageError,
    all_calls_failed,
    build_judges,
    check_choice,
    exit_if_dead,
    judge_spec,
    one_line_errors,
    print_run_failures,
    stdout,
    warn_if_not_english,
    warn_skipped,
)
from clinjudge.cli.executor import (
    ExecutorOpt,
    RayAddressOpt,
    WorkersOpt,
    check_executor,
    judging,
)
from clinjudge.cli.progress import progress_bars
from clinjudge.cli.stopping import interrupt_keeps
from clinjudge.evaluators.registry import judges_help


def compare(
    dataset: Annotated[
        str,
        typer.Argument(
            help="A bundled eval set (aci-demo) or a CSV/JSONL/JSON file. Columns: source "
            "(dialogue|transcript|source), judged text (note|summary|answer), id "
            "(encounter_id|id); fact-checking also reads question and evidence. Rows that "
            "cannot be judged (an empty note) are skipped and listed."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Output directory (resumable: re-run to continue).")],
    judges: Annotated[
        str,
        typer.Option("--judges", "--judge", help=f"Comma-separated judges: {judges_help()}."),
    ] = "lexical,inference-aware",
    backend: BackendOpt = "auto",
    gguf: GgufOpt = None,
    threads: ThreadsOpt = None,
    prompt: PromptOpt = None,
    claims: ClaimsOpt = "auto",
    option: OptionOpt = None,
    jury: JuryOpt = None,
    limit: Annotated[
        int | None,
        typer.Option(
            help="Only the first N encounters (with several systems: every system's note of "
            "each, in either layout).",
            min=1,
        ),
    ] = None,
    source_column: Annotated[
        str | None, typer.Option(help="Column holding the source text, when not detected.")
    ] = None,
    text_column: Annotated[
        str | None,
        typer.Option(help="Column holding the judged text (e.g. automatic_summary)."),
    ] = None,
    id_column: Annotated[str | None, typer.Option(help="Column holding the item id.")] = None,
    systems: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated note columns, one per system (e.g. reference,gpt4,bart): "
            "every system's notes judged in one run, with per-system rates and paired "
            "differences between systems over the same encounters."
        ),
    ] = None,
    system_column: Annotated[
        str | None,
        typer.Option(
            help="Column naming the system that wrote each row's note (one row per encounter "
            "and system); as --systems otherwise."
        ),
    ] = None,
    concurrency: ConcurrencyOpt = 4,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
    workers: WorkersOpt = None,
    retry_failed: RetryOpt = True,
    strict_items: Annotated[
        bool,
        typer.Option(
            "--strict-items",
            help="Refuse a dataset with a row that cannot be judged (an empty note, a line that "
            "is not JSON) instead of skipping the row and listing it in the reports.",
        ),
    ] = False,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="Summary printed at the end: table (a terminal), or for scripts tsv / json: one "
            "row per judge × system × metric with the columns judge, system ('all' pools "
            "every note), metric, value, ci95_low, ci95_high, n, n_notes.",
        ),
    ] = "table",
    price_in: costs.PriceInOpt = None,
    price_out: costs.PriceOutOpt = None,
    price_cached: costs.PriceCachedOpt = None,
    dry_run: costs.DryRunOpt = False,
) -> None:
    """Run several judges over a dataset; write report.json, report.md, verdicts.jsonl, plots.

    SOAP judges rate the same claims, so the flips between them are exact. Re-run the same
    command to resume an interrupted run; into a finished run, another judge or more items are
    judged alone (`clinjudge report DIR` re-renders without judging). Several systems' notes:
    `--systems reference,gpt4,bart` (one column each) or `--system-column system`. On a Ray
    cluster: `--executor ray --ray-address auto` (the same rows and reports).

    Exit codes: 0 done (failed items, if any, are counted and listed, and judged again by the
    next run); 1 a judge's every model call failed; 2 bad input; 130 interrupted (Ctrl-C: one
    line says what the directory keeps; the same command resumes).
    """
    with one_line_errors(), ExitStack() as held:
        check_choice(backend, BACKENDS, "--backend")
        check_choice(claims, ("auto", "split", "llm"), "--claims")
        check_choice(output_format, ("table", "tsv", "json"), "--format")
        check_executor(executor, ray_address, workers, backend)
        prices = costs.run_prices(price_in, price_out, price_cached)
        from clinjudge.datasets.loader import resolve_source

        _, found = resolve_source(dataset)  # a wrong path is one line before the judges load
        from clinjudge.compare import run_compare_sync
        from clinjudge.redact import without_credentials
        from clinjudge.run_dir import run_lock

        if dry_run:  # nothing judged, nothing written; a local model is not started
            local, backend = backend == "local", costs.dry_run_backend(backend, gguf)
        else:  # a second writer is told at once, not after loading
            held.enter_context(run_lock(out))

        command = {
            "dataset": str(found.resolve()) if Path(dataset).exists() else dataset,
            "judges": judges,
            "claims": claims,
            "option": [without_credentials(o) for o in option or []],
            "jury": [without_credentials(j) for j in jury or []],
            "load": {
                "limit": limit,
                "transcript_column": source_column,
                "note_column": text_column,
                "id_column": id_column,
                "strict": strict_items,
            },
            "systems": [s.strip() for s in systems.split(",")] if systems else None,
            "system_column": system_column,
        }
        if systems and (text_column or system_column):
            raise UsageError("--systems names the note columns: drop --text-column/--system-column")
        spec, paths = judge_spec(
            judges, backend=backend, prompt=prompt, claims=claims, option=option, jury=jury
        )
        # the dataset is read and checked before the judges load (a bad column: one line, fast)
        data = load_run_items(command, sources_needed(spec.judges))
        evaluators = spec.build(paths)
        if dry_run:
            return costs.print_dry_run(data, evaluators, out, prices, local and gguf)
        kept = kept_judges(out, evaluators)
        warn_skipped(data)
        warn_if_not_english({f"item {i.id}": i.note for i in data.items})
        with (
            interrupt_keeps(out, len(data.items)),
            judging(
                executor,
                spec=spec,
                evaluators=evaluators,
                concurrency=concurrency,
                address=ray_address,
                workers=workers,
            ) as (evaluators, in_flight),
            progress_bars() as progress,
        ):
            result = run_compare_sync(
                data,
                evaluators,
                out,
                concurrency=in_flight,
                progress=progress,
                retry_failed=retry_failed,
                command=command,
                kept=kept,
                prices=prices,
            )
    dead = all_calls_failed(result.report, evaluators)
    if dead:  # one line: a table of judges that judged nothing says nothing more
        dead += "; the same command asks again"
    elif output_format == "table":
        print_compare_summary(result.report, result.files)
    else:
        print_headlines(result.report, output_format)
    exit_if_dead(dead)


def kept_judges(out: Path, evaluators: dict) -> dict:
    """Offline renderers of the judges ``out`` holds that ``evaluators`` do not name: a run's
    reports cover every judge it holds, so ``--judges`` adds and never hides (issue 37). Their
    rows are read, never judged; the options they ran with come from the run's manifest."""
    from clinjudge.run_dir import RunDir

    if not (out / "run.json").is_file():
        return {}
    manifest = RunDir(out).recorded()
    names = [n for n in manifest.get("judges", {}) if n not in evaluators and n != "pairwise"]
    if not names:
        return {}
    return renderers(names, (manifest.get("command") or {}).get("option") or [])


def renderers(names: list[str], options: list[str]) -> dict:
    """Offline judges of ``names``, built with the recorded ``--option`` values that name them:
    they render a run's rows (``report``, judges a compare keeps), never judge."""
    own = [o for o in options if o.partition(".")[0] in names]
    return build_judges(",".join(names), backend="offline", prompt=None, claims="auto", option=own)


def sources_needed(judges: Iterable[str]) -> bool:
    """Whether any of the named judges reads a source text (known without building them)."""
    from clinjudge.evaluators.registry import registry

    return any(e.needs_source for e in map(registry().get, judges) if e is not None)


def load_run_items(command: dict, require_source: bool):
    """The dataset of a compare ``command`` (its path and loading options); a source
    (transcript) column is required when ``require_source``."""
    from clinjudge.datasets import load_items
    from clinjudge.datasets.systems import load_system_columns

    options = {
        "require_source": require_source,
        "column_options": {"transcript": "--source-column", "note": "--text-column"},
        **command["load"],
    }
    if command.get("systems"):
        options.pop("note_column")
        return load_system_columns(command["dataset"], command["systems"], **options)
    return load_items(command["dataset"], system_column=command.get("system_column"), **options)


def print_headlines(report: dict, output_format: str) -> None:
    """The run's headline numbers on stdout for scripts and pipes: one row per judge × system
    × metric (:mod:`clinjudge.report.headline_rows`), as TSV or a JSON list of rows."""
    from clinjudge.report.headline_rows import as_tsv, headline_rows

    rows = headline_rows(report)
    if output_format == "json":
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        sys.stdout.write(as_tsv(rows))


def print_compare_summary(report: dict, files: list[Path]) -> None:
    from rich.table import Table

    from clinjudge.report.formatting import WHAT_N_IS, no_interval
    from clinjudge.report.rubric_lines import rubric_lines

    judges = report["judges"]
    soap = {n: j for n, j in judges.items() if j.get("kind") == "soap"}
    others = {n: j for n, j in judges.items() if j.get("kind") != "soap"}
    title = f"{report['dataset']}: {report['n_items']} items"
    if report.get("skipped_items"):
        title += f" ({len(report['skipped_items'])} rows skipped: see report.md)"
    if soap:
        table = Table(title=title, header_style="bold")
        columns = ("judge", "hallucination rate", "95% CI", "major", "claims", "excluded", "s/note")
        for column in columns:
            table.add_column(column)
        for name, j in soap.items():
            rate = j["hallucination_rate"]
            lo, hi = j["ci95"]
            table.add_row(
                name,
                "n/a" if rate is None else f"{rate:.1%}",
                "n/a" if rate is None else f"{lo:.1%}–{hi:.1%}",  # no claim judged: no interval
                "n/a" if j.get("major_rate") is None else f"{j['major_rate']:.1%}",
                str(j["n_claims"]),
                str(j["excluded_claims"]),
                "n/a"
                if j["seconds_per_note_median"] is None
                else f"{j['seconds_per_note_median']:.2f}",
            )
        stdout.print(table)
        stdout.print(
            "hallucination rate: tier 4–5 claims / judged claims; major: those that could change "
            "care (an allergy, drug, dose, result, diagnosis, plan item, abnormal finding, or a "
            "contradiction); excluded: claims left without a verdict (not in either rate).",
            highlight=False,
        )
        for line in rubric_lines(soap):  # a jury's agreement
            stdout.print(line, highlight=False)
    if others:
        table = Table(title=None if soap else title, header_style="bold")
        for column in ("judge", "score", "mean or rate", "95% CI", "n"):
            table.add_column(column)
        for name, j in others.items():
            for metric, h in (j.get("headline") or {}).items():
                lo, hi = h.get("ci95") or (None, None)
                interval = f"{_metric(metric, lo)}–{_metric(metric, hi)}" if lo is not None else ""
                table.add_row(
                    name,
                    metric,
                    _metric(metric, h.get("value")),
                    interval or no_interval(h),
                    str(h.get("n", "n/a")),
                )
        stdout.print(table)
        kinds = {j.get("kind") for j in others.values()}
        said = [line for kind, line in WHAT_N_IS.items() if kind in kinds]
        stdout.print("n: what the number is over. " + " ".join(said) + " Exclusions: report.json.")
        for line in rubric_lines(others):
            stdout.print(line, highlight=False)
    if report.get("systems"):
        print_systems(report["systems"])
    for pair in report["paired"]:
        if pair["mean_rate_difference"] is not None:
            lo, hi = pair["ci95"]
            stdout.print(
                f"{pair['a']} − {pair['b']}: {pair['mean_rate_difference']:+.1%} per note "
                f"(95% CI {lo:+.1%} to {hi:+.1%}, {pair['n_notes']} notes); "
                f"{len(report['flips'])} claims flip between judges"
            )
    costs.print_cost(report)
    print_run_failures(report)
    stdout.print("wrote " + ", ".join(str(f) for f in files))


def print_systems(systems: dict) -> None:
    """Each judge's first headline number per system, and the pairs of systems whose paired
    difference's interval excludes 0 (report.md lists every pair)."""
    from rich.table import Table

    table = Table(title="per system", header_style="bold")
    for column in ("judge", "system", "notes", "metric", "value", "95% CI", "n"):
        table.add_column(column)
    for name, per in systems["by_system"].items():
        for system, headline in per.items():
            metric, h = next(((m, v) for m, v in headline.items() if isinstance(v, dict)), ("", {}))
            lo, hi = h.get("ci95") or (None, None)
            table.add_row(
                name,
                system,
                str(headline["n_notes"]),
                metric,
                _metric(metric, h.get("value")),
                "n/a" if lo is None else f"{_metric(metric, lo)}–{_metric(metric, hi)}",
                str(h.get("n", "n/a")),
            )
    stdout.print(table)
    apart = [
        f"{p['a']} vs {p['b']} ({p['judge']})"
        for p in systems["pairs"]
        if p["ci95"] and (p["ci95"][0] > 0 or p["ci95"][1] < 0)
    ]
    stdout.print(
        "systems apart (paired 95% CI excludes 0): "
        + (", ".join(apart) or "none")
        + "; every pair in report.md"
    )


def _metric(name: str, value: float | None) -> str:
    """A rate as a percentage; a score (CEF's 0–100) with one decimal."""
    if value is None:
        return "n/a"
    return f"{value:.1%}" if "rate" in name or name == "accuracy" else f"{value:.1f}"
