"""Command functions for paired error detection (SPEC §4, §8), registered on the main app:

    clinjudge detect DATASET --prompt neutral --decoding greedy --out DIR     (or --baseline ...)
    clinjudge pairs DIR/predictions.jsonl --out DIR2
    clinjudge gate DIR2/report.json --gates gates.toml

Conventions of :mod:`clinjudge.cli`: bad input exits with code 2 and one line on stderr; a long
run shows a progress bar; ``detect`` is resumable. ``gate`` exits 0 when every gate passes, 1
when one fails.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from clinjudge.cli.common import (
    UsageError,
    check_choice,
    every_call_failed,
    exit_if_dead,
    one_line_errors,
    require_file,
    stderr,
    stdout,
)
from clinjudge.cli.progress import progress_bars
from clinjudge.cli.stopping import stopped_keeps
from clinjudge.files import atomic_write_text, read_objects

RUN_FILE = "run.json"
PREDICTIONS_FILE = "predictions.jsonl"
#: Fields of run.json that must agree before a directory's predictions are resumed.
_RUN_IDENTITY = ("detector", "model", "decoding", "prompt", "seed", "p_flag")


def detect(
    dataset: Annotated[
        str,
        typer.Argument(
            help="A pair JSONL (e.g. medec_ms_error_correct_pairs.jsonl) or a MEDEC CSV."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Output directory (resumable: re-run to continue).")],
    prompt: Annotated[
        str, typer.Option(help="neutral, or conservative (flag only clear significant errors).")
    ] = "neutral",
    decoding: Annotated[
        str, typer.Option(help="greedy (T=0) or sampling (T=0.7, top-p 0.9).")
    ] = "greedy",
    baseline: Annotated[
        str | None,
        typer.Option(
            help="Run an offline baseline instead of a model: always-error, "
            "never-error or random (seeded)."
        ),
    ] = None,
    prompt_file: Annotated[
        Path | None, typer.Option(help="Replace the chosen prompt by this file ({{note}}).")
    ] = None,
    pairing: Annotated[
        str,
        typer.Option(
            help="CSV only: twins (Corrected Text twins) or match (one-to-one "
            "matching to the dataset's clean notes)."
        ),
    ] = "twins",
    similarity: Annotated[
        str, typer.Option(help="Matching similarity: word_jaccard (≥0.6) or char_overlap (≥0.85).")
    ] = "word_jaccard",
    threshold: Annotated[
        float | None, typer.Option(help="Matching threshold (default per similarity).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N pairs.", min=1)] = None,
    concurrency: Annotated[int, typer.Option(help="Notes judged at once.", min=1)] = 4,
    seed: Annotated[int, typer.Option(help="Seed of the random baseline.")] = 0,
) -> None:
    """Flag each note of a paired dataset as erroneous or not (a model, or a baseline).

    Writes DIR/predictions.jsonl (one line per note: pair id, member, raw answer, parsed fields)
    and DIR/run.json. Re-run the same command to resume.

    Exit codes: 0 done (notes whose call failed are retried by the next run), 1 every model
    call failed (one line names the endpoint and the first error), 2 bad input (one line).
    """
    with one_line_errors():
        check_choice(prompt, ("neutral", "conservative"), "--prompt")
        check_choice(decoding, ("greedy", "sampling"), "--decoding")
        check_choice(pairing, ("twins", "match"), "--pairing")
        check_choice(similarity, ("word_jaccard", "char_overlap"), "--similarity")
        if baseline is not None:
            check_choice(baseline, ("always-error", "never-error", "random"), "--baseline")
        if prompt_file is not None and not prompt_file.is_file():
            raise UsageError(f"prompt file not found: {prompt_file}")
        require_file(Path(dataset), "dataset")
        from clinjudge.datasets.medec import load_pair_dataset

        data = load_pair_dataset(
            dataset,
            pairing=pairing,  # type: ignore[arg-type]
            similarity=similarity,  # type: ignore[arg-type]
            threshold=threshold,
        )
        if limit is not None:
            data = data.head(limit)
        responder = _responder(baseline, prompt, decoding, prompt_file, seed)
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out is a file, not a directory: {out}")
        info = responder.info()
        from clinjudge.graphs.error_detection import arun_detection
        from clinjudge.run_dir import run_lock

        def kept() -> str:
            return f"{out / PREDICTIONS_FILE} keeps the notes judged; the same command resumes"

        with run_lock(out), stopped_keeps(kept), progress_bars() as progress:
            _check_same_run(out / RUN_FILE, info)
            advance = progress(responder.name, len(data.notes))
            run = asyncio.run(
                arun_detection(
                    data,
                    responder,
                    out / PREDICTIONS_FILE,
                    concurrency=concurrency,
                    on_done=advance,
                )
            )
            usage = responder.usage.as_dict() if hasattr(responder, "usage") else {}
            _write_run(out / RUN_FILE, info, data.provenance(), run, usage)
    statuses = [r["status"] for r in run.rows]
    typer.echo(
        f"{len(run.rows)} of {len(data.notes)} notes judged ({run.resumed} resumed) in "
        f"{run.seconds:.1f} s; {statuses.count('parse_failure')} parse failures; "
        f"wrote {out / PREDICTIONS_FILE}"
    )
    if usage:
        typer.echo(
            f"model calls {usage['calls']}, cache hits {usage['cache_hits']}, tokens "
            f"{usage['input_tokens']} in / {usage['output_tokens']} out, "
            f"call errors {usage['errors']}"
        )
    missing = len(data.notes) - len(run.rows)
    if missing:
        stderr.print(f"{missing} notes failed (call errors); re-run to retry them", style="yellow")
    written = [row for _, row in read_objects(out / PREDICTIONS_FILE)]
    errors = [
        {"kind": "error", "reason": r.get("reason")} for r in written if r.get("status") == "error"
    ]
    from clinjudge.llm import LLMSettings

    dead = every_call_failed(usage, {"base_url": LLMSettings().base_url, **info}, errors)
    exit_if_dead(dead)


def _responder(baseline: str | None, prompt: str, decoding: str, prompt_file: Path | None, seed):
    from clinjudge.judges.error_detection import BaselineResponder, make_llm_responder

    if baseline is not None:
        return BaselineResponder(baseline, seed=seed)  # type: ignore[arg-type]
    from clinjudge.llm import LLMSettings, ResponseCache

    settings = LLMSettings()
    if not settings.configured:
        raise ValueError(
            "no model configured: set CLINJUDGE_MODEL (and OPENAI_BASE_URL), or use --baseline"
        )
    return make_llm_responder(
        prompt,  # type: ignore[arg-type]
        decoding,  # type: ignore[arg-type]
        settings=settings,
        prompt_override=str(prompt_file) if prompt_file else None,
        cache=ResponseCache(),
    )


def _check_same_run(path: Path, info: dict[str, Any]) -> None:
    """Refuse to append predictions of another detector configuration to a directory."""
    from clinjudge.runner import run_mismatch

    try:
        key = run_mismatch(path, {k: info.get(k) for k in _RUN_IDENTITY})
    except ValueError:  # an unreadable run.json is rewritten at the end of the run
        return
    if key:
        raise ValueError(
            f"{path.parent} holds predictions of another configuration (it ran with {key}); "
            "use a new --out directory"
        )


def _write_run(path: Path, info: dict, dataset: dict, run, usage: dict) -> None:
    from clinjudge import __version__

    payload = {
        **info,
        "dataset": dataset,
        "n_predictions": len(run.rows),
        "resumed": run.resumed,
        "failed": run.failed,
        "seconds": round(run.seconds, 3),
        "usage": usage,
        "package_version": __version__,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    atomic_write_text(path, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")


def pairs(
    predictions: Annotated[Path, typer.Argument(help="predictions.jsonl written by detect.")],
    out: Annotated[Path, typer.Option(help="Directory for report.json, report.md and plots.")],
    seed: Annotated[int, typer.Option(help="Seed of bootstrap and imputation.")] = 0,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples.", min=100)] = 2000,
) -> None:
    """Pointwise metrics, Both-Correct Rate, independence ratio and ECA of a detect run."""
    with one_line_errors():
        if not predictions.is_file():
            raise UsageError(f"predictions file not found: {predictions}")
        from clinjudge.judges.error_detection import read_predictions
        from clinjudge.report.pairs_report import write_pairs_report

        rows = list(read_predictions(predictions).values())
        if not rows:
            raise UsageError(f"no predictions in {predictions}")
        run_path = predictions.parent / RUN_FILE
        run = json.loads(run_path.read_text(encoding="utf-8")) if run_path.is_file() else {}
        report, files = write_pairs_report(rows, out, run=run, seed=seed, n_resamples=resamples)
    stdout.print(_summary_table(report))
    stdout.print("wrote " + ", ".join(str(f) for f in files))


def _summary_table(report: dict[str, Any]):
    from rich.table import Table

    from clinjudge.report.formatting import percent, percent_interval

    table = Table(
        title=f"{report['n_notes']} notes, {report['n_pairs']} pairs "
        f"({report['parse_failures']['k']} parse failures)",
        header_style="bold",
    )
    for column in ("metric", "value", "95% CI"):
        table.add_column(column)
    for name in ("sensitivity", "specificity", "f1", "balanced_accuracy", "flag_rate", "bcr"):
        entry = report.get(name) or {}
        table.add_row(name, percent(entry.get("value")), percent_interval(entry.get("ci95")))
    ratio = (report.get("independence_ratio") or {}).get("value")
    table.add_row("independence_ratio", "n/a" if ratio is None else f"{ratio:.2f}", "")
    return table


def gate(
    report: Annotated[Path, typer.Argument(help="A report.json (from pairs or compare).")],
    gates: Annotated[Path | None, typer.Option("--gates", help="Gates TOML file.")] = None,
    list_metrics: Annotated[
        bool,
        typer.Option(
            "--list",
            help="Print the metrics of REPORT a gate can name (and a * form per system); exit.",
        ),
    ] = False,
) -> None:
    """Release gates on the report's 95% bounds: exit 0 when all pass, 1 when any fails.

    A gate names a metric of report.json by its dotted path (`--list` prints them all) and a
    limit: a `max` passes only when the UPPER 95% bound is at or below it, a `min` only when
    the LOWER bound is at or above it; `min_n` fails a metric resting on fewer cases:

        [gates]
        "judges.inference-aware.headline.hallucination_rate" = { max = 0.10, min_n = 200 }
        bcr = { min = 0.25 }

    On a run of several systems, `*` gates each one (a row and a verdict per system):

        "systems.by_system.inference-aware.*.major_rate" = { max = 0.05 }

    (`safety-case` reads another gates file: its endpoints, `[gates.major_hallucination_rate]`.)

    Exit codes: 0 every gate passes, 1 a gate fails, 2 bad input (one line).
    """
    from rich.table import Table

    from clinjudge.gates import evaluate_gates, gateable, load_gates, system_wildcards

    with one_line_errors():
        if not report.is_file():
            raise UsageError(f"report file not found: {report}")
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise UsageError(f"report is not JSON: {report}") from None
        if not isinstance(data, dict):
            raise UsageError(f"report is not a JSON object: {report}")
        if list_metrics:
            paths = gateable(data)
            sys.stdout.write("".join(f"{m}\n" for m in [*paths, *system_wildcards(paths)]))
            return
        if gates is None:
            raise UsageError("--gates FILE is needed (or --list, to see the metrics)")
        results = evaluate_gates(data, load_gates(gates))
    table = Table(title=f"Release gates: {gates.name}", header_style="bold")
    for column in ("metric", "value", "95% bound", "limit", "n", "result"):
        table.add_column(column)
    for r in results:
        side = "upper" if r.gate.kind == "max" else "lower"
        table.add_row(
            r.path or r.gate.metric,
            _number(r.value),
            f"{side} {_number(r.bound)}",
            f"{'≤' if r.gate.kind == 'max' else '≥'} {r.gate.limit:g}",
            "n/a" if r.n is None else str(r.n),
            "pass" if r.passed else f"FAIL ({r.reason})",
        )
    stdout.print(table)
    failed = sum(not r.passed for r in results)
    stdout.print(f"{len(results) - failed} of {len(results)} gates pass")
    if failed:
        raise typer.Exit(1)


def _number(value: Any) -> str:
    from clinjudge.report.formatting import is_number

    return f"{value:.4f}" if is_number(value) else "n/a"
