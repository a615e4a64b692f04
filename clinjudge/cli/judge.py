"""``clinjudge judge``: one note against its transcript, a per-claim table or JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from clinjudge.cli.common import (
    BACKENDS,
    BackendOpt,
    ClaimsOpt,
    GgufOpt,
    ModeOpt,
    PromptOpt,
    ProtocolOpt,
    ThreadsOpt,
    UsageError,
    check_choice,
    every_call_failed,
    exit_if_dead,
    one_line_errors,
    prompt_overrides,
    read_text_file,
    stdout,
    warn_if_not_english,
)
from clinjudge.cli.progress import claim_bar


def judge(
    transcript: Annotated[Path, typer.Option(help="Doctor–patient transcript (text file).")],
    note: Annotated[Path, typer.Option(help="The clinical note to judge (text file).")],
    mode: ModeOpt = "inference-aware",
    backend: BackendOpt = "auto",
    gguf: GgufOpt = None,
    threads: ThreadsOpt = None,
    prompt: PromptOpt = None,
    claims: ClaimsOpt = "auto",
    protocol: ProtocolOpt = "batch",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="table (a terminal), tsv (a claim per line, for spreadsheets and pipes), json "
            "(one object, as --json), jsonl (a claim per line).",
        ),
    ] = "table",
    html: Annotated[
        Path | None, typer.Option(help="Also write the claim viewer page (report.html) here.")
    ] = None,
) -> None:
    """Judge one note against its transcript and print a per-claim table (or JSON).

    Transcripts may be ACI-Bench style (\\[doctor] / \\[patient] lines), MTS-Dialog style
    (Doctor: / Patient:) or plain text. Tiers: 1 restatement, 2 paraphrase / terminology /
    trade-generic, 3 clinical inference (supported); 4 no basis, 5 contradiction (hallucinated).

    Exit codes: 0 done, 1 every model call failed (one line names the endpoint and the first
    error), 2 bad input (one line).
    """
    with one_line_errors():
        check_choice(mode, ("lexical", "inference-aware"), "--mode")
        check_choice(backend, BACKENDS, "--backend")
        check_choice(claims, ("auto", "split", "llm"), "--claims")
        check_choice(protocol, ("batch", "claim", "claim-shared"), "--protocol")
        check_choice(output_format, FORMATS, "--format")
        if html is not None and html.is_dir():
            raise UsageError(f"--html is a directory, not a file: {html}")
        transcript_text = read_text_file(transcript, "transcript")
        note_text = read_text_file(note, "note")
        warn_if_not_english({"the transcript": transcript_text, "the note": note_text})
        from clinjudge.api import judge_note
        from clinjudge.llm import ResponseCache

        with claim_bar() as bar:
            result = judge_note(
                transcript_text,
                note_text,
                mode=mode,  # type: ignore[arg-type]
                backend=backend,
                prompts=prompt_overrides(prompt),
                claims=claims,
                protocol=protocol,
                progress=bar,
                cache=ResponseCache() if backend != "offline" else None,  # re-runs are free
            )
    failures = [f.model_dump() for f in result.report.failures]
    dead = every_call_failed(result.usage, result.provenance.model_dump(), failures)
    if html is not None:
        _write_html(html, transcript_text, note_text, mode, result)
    if as_json or output_format != "table":
        _print_rows(result, "json" if as_json else output_format)
        exit_if_dead(dead)
        return
    exit_if_dead(dead)  # a table of claims that were not judged says nothing more
    from clinjudge.report import render_claim_table

    report = result.report
    rows = result.rows()
    listed = rows if len(rows) <= MAX_TABLE_ROWS else [r for r in rows if not r.get("supported")]
    listed = listed[:MAX_TABLE_ROWS]
    stdout.print(render_claim_table(listed, title=f"{mode} judge ({report.backend})"))
    if len(listed) < len(rows):
        stdout.print(
            f"showing {len(listed)} of {len(rows)} claims (the flagged ones first); "
            "--format jsonl or tsv prints every claim, --html FILE shows them in the note"
        )
    rate = report.hallucination_rate
    shown = "n/a" if rate is None else f"{rate:.1%}"
    stdout.print(
        f"hallucination rate {shown} = {report.n_hallucinated}/{report.n_judged} judged claims"
        f" (excluded: {report.parse_failures} parse failures, {report.errors} errors)"
    )
    stdout.print(f"{report.n_major} of them major (could change diagnosis, treatment or follow-up)")
    exit_if_dead(dead)


FORMATS = ("table", "tsv", "json", "jsonl")
#: Longest claim table printed; beyond it, the flagged claims only (and how to see all).
MAX_TABLE_ROWS = 100
TSV_COLUMNS = ("id", "section", "tier", "subtype", "severity", "text", "rationale")


def _print_rows(result, output_format: str) -> None:  # noqa: ANN001 - an api.JudgeResult
    if output_format == "json":
        sys.stdout.write(json.dumps(result.as_json(), indent=2, ensure_ascii=False) + "\n")
    elif output_format == "jsonl":
        for row in result.rows():
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write("\t".join(TSV_COLUMNS) + "\n")
        for row in result.rows():
            cells = ["" if row.get(c) is None else str(row.get(c)) for c in TSV_COLUMNS]
            sys.stdout.write(
                "\t".join(c.replace("\t", " ").replace("\n", " ") for c in cells) + "\n"
            )


def _write_html(path: Path, transcript: str, note: str, mode: str, result) -> None:  # noqa: ANN001
    """The one-note claim viewer page."""
    from clinjudge.datasets.items import Item
    from clinjudge.metrics.intervals import wilson_interval
    from clinjudge.report.html_report import page_data, render_html

    row = {"id": "note", **result.report.model_dump(mode="json")}
    rate = result.report.hallucination_rate
    n = result.report.n_judged
    ci = list(wilson_interval(result.report.n_hallucinated, n)) if n else None
    headline = {"hallucination_rate": {"value": rate, "ci95": ci, "n": n}}
    report = {
        "dataset": "one note",
        "n_items": 1,
        "judges": {mode: {"headline": headline}},
        "per_item": [{"id": "note", mode: {"hallucination_rate": rate}}],
        "provenance": result.provenance.model_dump(mode="json"),
    }
    item = Item(id="note", transcript=transcript, note=note)
    data = page_data(report, [item], {mode: "soap"}, {mode: [row]})
    path.write_text(render_html(data), encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)
