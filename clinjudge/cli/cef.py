"""``clinjudge cef``: cross-examine one generated text against its source (SPEC §2).

    clinjudge cef --source dialogue.txt --summary summary.txt [--backend offline] [--json]

Conventions of :mod:`clinjudge.cli`: bad input exits with code 2 and one line on stderr.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from clinjudge.cli.common import (
    BACKENDS,
    GgufOpt,
    ThreadsOpt,
    check_choice,
    every_call_failed,
    exit_if_dead,
    one_line_errors,
    prompt_overrides,
    read_text_file,
    stdout,
)

BackendOpt = Annotated[
    str,
    typer.Option(
        "--backend",
        help="offline: fact questions answered by the offline verifier, no API. llm: "
        "CLINJUDGE_MODEL at OPENAI_BASE_URL. local: the --gguf model on 127.0.0.1. auto: llm "
        "when CLINJUDGE_MODEL is set, else offline.",
    ),
]
PromptOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--prompt",
        help="Replace a CEF prompt by a file: cef.shared_generate=PATH or "
        "cef.shared_answer=PATH (--layout shared), cef.generate_questions=PATH or "
        "cef.answer_questions=PATH (--layout focused); repeatable. --json records each "
        "prompt's hash.",
    ),
]


def cef(
    source: Annotated[Path, typer.Option(help="The source text D (dialogue or document).")],
    summary: Annotated[Path, typer.Option(help="The generated text S (summary or note).")],
    backend: BackendOpt = "auto",
    gguf: GgufOpt = None,
    threads: ThreadsOpt = None,
    task: Annotated[
        str,
        typer.Option(help="summary, or note (no conciseness: a note is not meant to be shorter)."),
    ] = "summary",
    n_source: Annotated[
        int, typer.Option(help="Questions generated from the source (N).", min=1)
    ] = 10,
    n_summary: Annotated[
        int, typer.Option(help="Questions generated from the summary (N').", min=1)
    ] = 10,
    layout: Annotated[
        str | None,
        typer.Option(
            help="LLM prompts: focused (each call shows only its own text; the default) or "
            "shared (every call opens with the instructions and both texts, which a server "
            "reuses; check your model keeps to its one text: bench/bench_cef.py --compare)."
        ),
    ] = None,
    prompt: PromptOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Score a summary or note against its source with the Cross-Examination Framework.

    YES-questions are generated from each text (only those its own text answers YES are kept)
    and answered from the other text with YES / NO / IDK. coverage = 100 − % source questions
    IDK (omissions); conformity = 100 − % source questions NO (contradictions); consistency =
    100 − % summary questions IDK (unsupported statements); conciseness = 100 × (1 − words(S) /
    words(D)); overall = mean(coverage, conformity, consistency, harmonic mean of coverage and
    conciseness) — for notes, the mean of the first three.

    Exit codes: 0 done, 1 every model call failed (one line names the endpoint and the first
    error), 2 bad input (one line).
    """
    with one_line_errors():
        check_choice(backend, BACKENDS, "--backend")
        check_choice(task, ("summary", "note"), "--task")
        if layout is not None:
            from clinjudge.cef.llm_backend import LAYOUTS

            check_choice(layout, tuple(LAYOUTS), "--layout")
        source_text = read_text_file(source, "source")
        summary_text = read_text_file(summary, "summary")
        from clinjudge.datasets.items import Item
        from clinjudge.evaluators import BuildOptions, build_evaluator
        from clinjudge.llm import LLMSettings, ResponseCache

        overrides = prompt_overrides(prompt)
        settings = LLMSettings()
        evaluator = build_evaluator(
            "cef",
            BuildOptions(
                backend=backend,
                settings=settings,
                prompt_overrides=overrides,
                cache=ResponseCache() if backend != "offline" else None,  # re-runs are free
                options={"n_source": n_source, "n_summary": n_summary, "task": task}
                | ({"layout": layout} if layout else {}),
            ),
        )
        item = Item(id=source.stem, transcript=source_text, note=summary_text)
        row = asyncio.run(evaluator.evaluate(item))
    row.pop("retry", None)
    if as_json:
        out = {**row, "usage": evaluator.usage(), "provenance": evaluator.provenance()}
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    else:
        print_result(row)
    dead = every_call_failed(evaluator.usage(), evaluator.provenance(), evaluator.failures(row))
    exit_if_dead(dead)


def print_result(row: dict) -> None:
    """A table of the five scores with their denominators, then the omitted source facts, the
    contradicted ones and the unsupported summary statements."""
    from rich.table import Table

    from clinjudge.cef.result import CefResult

    result = CefResult.model_validate(row)
    table = Table(title=f"CEF ({result.backend}, task {result.task})", header_style="bold")
    for column in ("score", "value", "over"):
        table.add_column(column)
    src = f"{result.n_source_questions} source questions"
    summ = f"{result.n_summary_questions} summary questions"
    words = f"{result.tokens['summary']} / {result.tokens['source']} words"
    for name, value, over in (
        ("coverage", result.coverage, src),
        ("conformity", result.conformity, src),
        ("consistency", result.consistency, summ),
        ("conciseness", result.conciseness, words if result.task == "summary" else "not computed"),
        ("overall", result.overall, ""),
    ):
        table.add_row(name, "n/a" if value is None else f"{value:.1f}", over)
    stdout.print(table)
    stdout.print(
        f"asked {result.n_source_questions} of {result.generated_source} source questions "
        f"(N={result.n_source}) and {result.n_summary_questions} of {result.generated_summary} "
        f"summary questions (N'={result.n_summary}); dropped by the generator's label "
        f"{result.dropped_label_source}+{result.dropped_label_summary}, by their own text "
        f"{result.dropped_self_source}+{result.dropped_self_summary}; excluded: "
        f"{result.parse_failures} parse failures, {result.errors} errors"
    )
    for title, questions in (
        ("Omitted source facts (IDK from the summary)", result.omitted()),
        ("Contradicted source facts (NO from the summary)", result.contradicted()),
        ("Unsupported summary statements (IDK or NO from the source)", result.unsupported()),
    ):
        if questions:
            stdout.print(f"\n{title}", style="bold")
            for q in questions:
                where = f" [{q.span[0]}:{q.span[1]}]" if q.span else ""
                stdout.print(f"  {q.id}{where} {q.question}", highlight=False, markup=False)
    for failure in result.failures:
        stdout.print(f"{failure['stage']} {failure['side']}: {failure['reason']}", style="yellow")
