"""``clinjudge inject``: make matched pairs — a real note and the same note with exactly one known
error or one legitimate rewrite (SPEC §5), registered on the main app.

    clinjudge inject aci-demo --types all --out pairs.jsonl                      (offline)
    clinjudge inject notes.csv --types dosage,negation_flip --backend llm --out pairs.jsonl

Conventions of :mod:`clinjudge.cli`: bad input exits with code 2 and one line on stderr; a
progress bar; resumable (re-run the same command to continue).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

import typer

from clinjudge.cli.common import (
    check_choice,
    one_line_errors,
    prompt_overrides,
    stderr,
    stdout,
    warn_skipped,
)
from clinjudge.cli.progress import progress_bars
from clinjudge.cli.stopping import stopped_keeps

#: The taxonomy's types as --help lists them (written out: reading the taxonomy would load the
#: injection package with the command line; tests/test_inject_taxonomy.py keeps them in step).
ERROR_TYPES = (
    "dosage, wrong_drug, contraindicated_treatment, wrong_diagnosis, additional_diagnosis, "
    "omission, threshold_value, laterality_anatomy, timing_duration, evidence_fabrication, "
    "overconfidence, negation_flip, causal_organism, attribution, time_shift, superseded, "
    "declined_plan"
)
REWRITE_TYPES = (
    "trade_generic, lay_to_clinical, abbreviation, paraphrase, voice, time_rewording, "
    "correction_rewording, plan_rewording"
)
TYPES_HELP = (
    f"Comma list of type ids, or all / errors / rewrites. Errors: {ERROR_TYPES}. Rewrites (a "
    f"good judge must not flag them): {REWRITE_TYPES}. Offline, a group means its types that "
    "have an offline injector."
)


def inject(
    dataset: Annotated[
        str,
        typer.Argument(
            help="A bundled eval set (aci-demo) or a CSV/JSONL/JSON file with a transcript "
            "column (dialogue|transcript|source), a note column (note) and an id."
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            help="Pair file to write (JSONL). Beside it: `<stem>.stats.json` (acceptance per type, "
            "provenance) and `<stem>.outcomes.jsonl` (every attempt, discards with reasons)."
        ),
    ],
    types: Annotated[
        str,
        typer.Option(help=TYPES_HELP),
    ] = "all",
    backend: Annotated[
        str,
        typer.Option(
            help="offline: mechanical injectors grounded in the transcript and the knowledge "
            "base (no API). llm: two models judge applicability (CLINJUDGE_MODEL and "
            "CLINJUDGE_INJECT_MODEL_B), the first injects, the second validates."
        ),
    ] = "offline",
    limit: Annotated[int | None, typer.Option(help="Only the first N items.", min=1)] = None,
    seed: Annotated[int, typer.Option(help="Seed of the offline choice of edit.")] = 0,
    prompt: Annotated[
        list[str] | None,
        typer.Option(
            "--prompt",
            help="llm: replace a prompt by a file, NAME=PATH (inject.applicability, "
            "inject.error, inject.rewrite, inject.validate_error, inject.validate_rewrite).",
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(help="llm: attempts run at once.", min=1)] = 4,
) -> None:
    """Inject one error (or one legitimate rewrite) per note and type; keep what passes.

    Every edit is measured against its type's limits (characters removed and added, sentences
    touched, net length change, separate regions) — a rewrite of the whole note never passes.
    With --backend llm, both applicability models must say the type applies (else nothing is
    injected), and an edit failing the shape check or the validator is regenerated once, then
    discarded with its reason. Pair ids are `<item id>:<type>`. Re-run the same command to resume.
    """
    with one_line_errors():
        check_choice(backend, ("offline", "llm"), "--backend")
        from clinjudge.datasets.loader import resolve_source

        resolve_source(dataset)  # a wrong path is one line before the heavy imports
        from clinjudge.datasets import load_items
        from clinjudge.inject.outputs import InjectFiles, run_offline, run_provenance
        from clinjudge.inject.taxonomy import select_types

        chosen = select_types(types, offline=backend == "offline")
        overrides = prompt_overrides(prompt)
        data = load_items(dataset, limit=limit)
        warn_skipped(data)
        files = InjectFiles(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        from clinjudge.files import WriterLock

        def kept() -> str:
            return f"{files.outcomes} keeps every attempt made; the same command resumes"

        lock = WriterLock(out.with_name(f".{out.name}.lock"), f"pair file {out}")
        with lock, stopped_keeps(kept), progress_bars() as progress:
            if lock.took_over:
                stderr.print(lock.took_over)
            advance = progress("inject", len(data) * len(chosen))
            if backend == "offline":
                from clinjudge.knowledge.base import KnowledgeBase

                kb = KnowledgeBase.default()
                provenance = run_provenance("offline", data, seed=seed, kb=kb)
                stats = run_offline(
                    data, chosen, files, provenance, seed=seed, kb=kb, on_done=advance
                )
            else:
                from clinjudge.graphs.inject import arun_injection
                from clinjudge.inject.model_roles import build_inject_models
                from clinjudge.llm import ResponseCache

                models = build_inject_models(cache=ResponseCache(), prompt_overrides=overrides)
                provenance = run_provenance("llm", data, seed=seed, llm=models.provenance())
                stats = asyncio.run(
                    arun_injection(
                        data,
                        chosen,
                        models,
                        files,
                        provenance,
                        concurrency=concurrency,
                        on_done=advance,
                    )
                )
    print_acceptance(stats, files)


OFFLINE_COLUMNS = ("attempted", "not_applicable", "shape_rejected", "accepted")


def print_acceptance(stats: dict[str, Any], files: Any) -> None:
    """The acceptance table (rich) and the files written."""
    from rich.table import Table

    columns = (
        ("attempted", "attempted"),
        ("not_applicable", "n/a"),
        ("disagreed", "disagreed"),
        ("shape_rejected", "shape ✗"),
        ("validator_rejected", "validator ✗"),
        ("parse_failure", "unparsed"),
        ("error", "errors"),
        ("regenerated", "regen."),
        ("accepted", "accepted"),
    )
    backend = stats["provenance"]["backend"]
    if backend == "offline":  # no models: nothing can disagree, be unparsed or regenerated
        columns = tuple(c for c in columns if c[0] in OFFLINE_COLUMNS)
    table = Table(title=f"injection ({backend}): acceptance per type", header_style="bold")
    table.add_column("type")
    for _, title in columns:
        table.add_column(title, justify="right")
    table.add_column("acceptance", justify="right")
    table.add_column("95% CI", justify="right")

    def row(name: str, s: dict[str, Any]) -> None:
        rate = s["acceptance_rate"]
        lo, hi = s["ci95"]
        shown = "n/a" if rate is None else f"{rate:.0%}"
        table.add_row(name, *(str(s[key]) for key, _ in columns), shown, f"{lo:.0%}–{hi:.0%}")

    for type_id, s in stats["per_type"].items():
        row(type_id, s)
    row("total", stats["total"])
    stdout.print(table)
    stdout.print(
        "acceptance = accepted / attempts where an edit was tried (not applicable, disagreed "
        "and call errors excluded)"
    )
    if not stats.get("complete", True):
        stderr.print("some attempts failed (call errors); re-run to retry them", style="yellow")
    stdout.print("wrote " + ", ".join(str(f) for f in files.all()))
