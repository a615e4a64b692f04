"""``clinjudge factcheck``: claim-level fact-checking of one answer (SPEC §3).

    clinjudge factcheck --answer a.txt [--question q.txt] [--corpus passages.jsonl]
    clinjudge factcheck --answer a.txt --search searxng --search-url http://localhost:8888 --json

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
    UsageError,
    check_choice,
    every_call_failed,
    exit_if_dead,
    one_line_errors,
    prompt_overrides,
    read_text_file,
    stdout,
)

JSON_KEYS = ("claims", "unsupported_rate", "ci95", "checkable_rate")


def factcheck(
    answer: Annotated[Path, typer.Option(help="The answer to check (text file).")],
    question: Annotated[
        Path | None, typer.Option(help="The question it answers (text file, optional).")
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(help="Evidence corpus: JSONL with id, text and optional url/title per line."),
    ] = None,
    search: Annotated[
        str | None,
        typer.Option(
            help="Search backend: knowledge (the default), searxng, brave, tavily or serper "
            "(keys from BRAVE_API_KEY / TAVILY_API_KEY / SERPER_API_KEY)."
        ),
    ] = None,
    search_url: Annotated[
        str | None,
        typer.Option(help="Base URL of the search API (SearXNG: required, or SEARXNG_URL)."),
    ] = None,
    k: Annotated[int, typer.Option(help="Evidence passages per claim.", min=1)] = 5,
    evidence: Annotated[
        str,
        typer.Option(
            help="What each claim is rated against: per_claim (its own k passages, as SAFE "
            "does) or pooled (every passage retrieved for the answer, one block a prompt-caching "
            "server reads once).",
        ),
    ] = "per_claim",
    backend: Annotated[
        str,
        typer.Option(
            "--backend",
            help="offline: rules and the offline verifier, no API. llm: CLINJUDGE_MODEL at "
            "OPENAI_BASE_URL. local: the --gguf model on 127.0.0.1. auto: llm when "
            "CLINJUDGE_MODEL is set, else offline.",
        ),
    ] = "auto",
    gguf: GgufOpt = None,
    threads: ThreadsOpt = None,
    prompt: Annotated[
        list[str] | None,
        typer.Option(help="Replace a prompt: NAME=PATH, e.g. factcheck.rate=my_rate.md."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Decompose an answer into claims, search evidence for each relevant one and rate it from
    the evidence alone; print the claims and the unsupported-claim rate with its 95% interval.

    Exit codes: 0 done, 1 every model call failed (one line names the endpoint and the first
    error), 2 bad input (one line).
    """
    with one_line_errors():
        check_choice(backend, BACKENDS, "--backend")
        if corpus is not None and search is not None:
            raise UsageError("give either --corpus or --search, not both")
        answer_text = read_text_file(answer, "answer")
        question_text = read_text_file(question, "question") if question else None
        from clinjudge.datasets.items import Item
        from clinjudge.evaluators import BuildOptions, build_evaluator
        from clinjudge.llm import ResponseCache

        options = {"search": search, "search_url": search_url, "k": k, "evidence": evidence}
        options["corpus"] = str(corpus) if corpus is not None else None
        judge = build_evaluator(
            "factcheck",
            BuildOptions(
                backend=backend,
                prompt_overrides=prompt_overrides(prompt),
                cache=ResponseCache() if backend != "offline" else None,  # re-runs are free
                options={key: value for key, value in options.items() if value is not None},
            ),
        )
        item = Item(id=answer.stem, transcript="", note=answer_text)
        if question_text:
            item.meta["question"] = question_text
        data = asyncio.run(judge.evaluate(item))
    data.pop("retry", None)
    if as_json:
        payload = {key: data[key] for key in JSON_KEYS}
        payload |= {k_: v for k_, v in data.items() if k_ not in JSON_KEYS}
        payload["provenance"] = judge.provenance()
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    else:
        print_result(data)
    dead = every_call_failed(judge.usage(), judge.provenance(), judge.failures(data))
    exit_if_dead(dead)


def print_result(data: dict) -> None:
    from rich.table import Table
    from rich.text import Text

    from clinjudge.report.formatting import truncate

    table = Table(title=f"fact-check ({data['backend']}, search: {data['search']})")
    for column in ("id", "label", "verdict", "checkable", "claim", "evidence"):
        table.add_column(column, overflow="fold")
    for c in data["claims"]:
        if c["failure"]:
            verdict = Text(c["failure"]["kind"], style="yellow")
            evidence = truncate(c["failure"]["reason"], 60)
        else:
            shown = {"supported": ("supported", "green"), "not_supported": ("not supported", "red")}
            verdict = Text(*shown.get(c["verdict"] or "", ("not checked", "dim")))
            evidence = "; ".join(
                f"{p['url'] or p['id']}: {truncate(p['text'], 50)}" for p in c["evidence"][:2]
            )
        checkable = "" if c["checkable"] is None else ("yes" if c["checkable"] else "no")
        table.add_row(c["id"], c["label"], verdict, checkable, truncate(c["text"], 70), evidence)
    stdout.print(table)
    for c in data["claims"]:
        if c["verdict"] is not None and c["rationale"]:
            stdout.print(f"{c['id']}: {c['rationale']}", markup=False, highlight=False)
    rate = data["unsupported_rate"]
    lo, hi = data["ci95"]
    shown = "n/a" if rate is None else f"{rate:.1%}"
    checkable = "n/a" if data["checkable_rate"] is None else f"{data['checkable_rate']:.1%}"
    stdout.print(
        f"unsupported {shown} (95% CI {lo:.1%}–{hi:.1%}) = {data['n_not_supported']}/"
        f"{data['n_rated']} rated relevant claims; checkable {checkable}; "
        f"{data['n_claims']} claims, {data['n_relevant']} relevant, "
        f"{data['n_excluded']} excluded ({data['parse_failures']} parse failures, "
        f"{data['errors']} errors)"
    )
    stdout.print(
        "Only relevant claims (diagnosis or management) are rated, from the evidence alone; "
        "checkable = the evidence addressed the claim at all. Per-claim details: --json.",
        style="dim",
    )
