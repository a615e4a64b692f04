"""``clinjudge meta-eval``: run judges on both members of every matched pair and report what they
catch and what they leave alone (SPEC §4/§5; definitions in :mod:`clinjudge.meta_eval`).

    clinjudge meta-eval pairs.jsonl --judge lexical,inference-aware --out runs/meta

Conventions of :mod:`clinjudge.cli`: bad input exits with code 2 and one line on stderr, progress
bars per judge, resumable (re-run the same command to continue).
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer

from clinjudge.cli.common import (
    BACKENDS,
    BackendOpt,
    ClaimsOpt,
    ConcurrencyOpt,
    GgufOpt,
    OptionOpt,
    PromptOpt,
    RetryOpt,
    ThreadsOpt,
    all_calls_failed,
    check_choice,
    exit_if_dead,
    judge_spec,
    one_line_errors,
    print_run_failures,
    require_file,
    stdout,
)
from clinjudge.cli.cost import print_cost
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


def meta_eval(
    pairs: Annotated[
        Path, typer.Argument(help="Pair JSONL written by `clinjudge inject` (PairRecord lines).")
    ],
    out: Annotated[Path, typer.Option(help="Output directory (resumable: re-run to continue).")],
    judge: Annotated[
        str,
        typer.Option(
            "--judges",
            "--judge",
            help=f"Comma-separated judges: {judges_help()}. The first one's numbers are the "
            "report's top-level overall/by_type.",
        ),
    ] = "lexical",
    backend: BackendOpt = "auto",
    gguf: GgufOpt = None,
    threads: ThreadsOpt = None,
    prompt: PromptOpt = None,
    claims: ClaimsOpt = "auto",
    option: OptionOpt = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N pairs.", min=1)] = None,
    concurrency: ConcurrencyOpt = 4,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
    workers: WorkersOpt = None,
    retry_failed: RetryOpt = True,
) -> None:
    """Meta-evaluate judges on matched pairs: detection rate of injected errors, false-flag rate
    of legitimate rewrites, paired AUROC, per type and overall with 95% intervals.

    Writes DIR/report.json, report.md, pairs_scored.jsonl (one line per pair and judge: scores,
    flags at the change, detected / false flag), `runs/<judge>.jsonl` and detection.png,
    false_flags.png, auroc.png.

    Exit codes: 0 done (failed pairs are counted, listed and judged again by the next run), 1 a
    judge's every model call failed (one line names the endpoint and the first error), 2 bad
    input (one line).
    """
    with one_line_errors(), ExitStack() as held:
        check_choice(backend, BACKENDS, "--backend")
        check_choice(claims, ("auto", "split", "llm"), "--claims")
        require_file(pairs, "pair")
        check_executor(executor, ray_address, workers, backend)
        from clinjudge.inject.pairs import read_pairs
        from clinjudge.meta_eval import run_meta_eval_sync
        from clinjudge.run_dir import run_lock

        held.enter_context(run_lock(out))  # a second writer is told at once, not after loading

        records = read_pairs(pairs)[:limit]
        spec, paths = judge_spec(
            judge, backend=backend, prompt=prompt, claims=claims, option=option
        )
        evaluators = spec.build(paths)
        with (
            judging(
                executor,
                spec=spec,
                evaluators=evaluators,
                concurrency=concurrency,
                address=ray_address,
                workers=workers,
            ) as (evaluators, in_flight),
            interrupt_keeps(out, len(records) * 2),
            progress_bars() as progress,
        ):
            result = run_meta_eval_sync(
                pairs,
                records,
                evaluators,
                out,
                concurrency=in_flight,
                progress=progress,
                retry_failed=retry_failed,
            )
    dead = all_calls_failed(result.report, evaluators)
    if not dead:  # else one line: a table of judges that judged nothing says nothing more
        print_meta_eval_table(result.report, stdout)
        print_run_failures(result.report)
        print_cost(result.report)
        stdout.print("wrote " + ", ".join(str(f) for f in result.files))
    exit_if_dead(dead)


def print_meta_eval_table(report: dict, console) -> None:
    """A terminal-width version of report.md's per type × judge tables (errors, then rewrites):
    rate with its bootstrap interval, differential detection and paired AUROC; the Wilson
    intervals, win/tie/loss and exclusions are in report.md."""
    from rich.table import Table

    from clinjudge.report.meta_eval_blocks import KIND_LABEL, blocks_by_kind
    from clinjudge.report.meta_eval_report import table_row

    for kind in ("error", "rewrite"):
        rows = [table_row(t, j, b) for t, j, b in blocks_by_kind(report, kind)]
        if all(r[2] == "0" for r in rows):
            continue
        rate = "detection rate" if kind == "error" else "false-flag rate"
        table = Table(title=f"{KIND_LABEL[kind]}: {rate}, paired AUROC", header_style="bold")
        for column in ("type", "judge", "rate", "95% CI", "differential", "AUROC"):
            table.add_column(column, overflow="fold")
        for type_, judge, _, flagged, ci, _, differential, auroc, _, _ in rows:
            table.add_row(type_, judge, flagged, ci, differential, auroc)
        console.print(table)
    console.print(
        "rate (flagged/judged): pairs with a flag overlapping the changed span / pairs judged; "
        "differential: "
        "flagged there in the edited text and not in the original; AUROC: P(original scored "
        "higher) + ½ P(tie) (errors: 1 is best, rewrites: 0.5); 95% CI: bootstrap over pairs "
        "clustered by note. Exclusions, Wilson intervals and win/tie/loss: report.md."
    )
