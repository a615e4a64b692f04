"""The ``clinjudge`` command line.

    clinjudge judge --transcript t.txt --note n.txt [--mode inference-aware] [--json]
    clinjudge compare aci-demo --judges lexical,inference-aware --out runs/demo
    clinjudge knowledge search "heart attack"

Bad input exits with code 2 and a one-line reason on stderr, never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from clinjudge.datasets.items import DatasetError
from clinjudge.errors import ConfigError
from clinjudge.evaluators.registry import judges_help

app = typer.Typer(
    help="Judge clinical text written by language models, claim by claim.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
stdout = Console()
stderr = Console(stderr=True)

ModeOpt = Annotated[
    str,
    typer.Option(
        "--mode",
        help="lexical: a claim is supported only if the transcript states it (stage 1). "
        "inference-aware: synonyms, trade/generic names and clinical inference count (stage 2).",
    ),
]
BackendOpt = Annotated[
    str,
    typer.Option(
        "--backend",
        help="offline: knowledge-grounded rules, no API. llm: CLINJUDGE_MODEL at OPENAI_BASE_URL. "
        "auto: llm when CLINJUDGE_MODEL is set, else offline.",
    ),
]
PromptOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--prompt",
        help="Replace a built-in prompt by a file: NAME=PATH, e.g. "
        "soap.inference_aware=my_prompt.md (repeatable). Reports record each prompt's hash.",
    ),
]
ClaimsOpt = Annotated[
    str,
    typer.Option(
        "--claims",
        help="How claims are cut: split (offline splitter), llm (extraction prompt), "
        "auto (llm on the llm backend).",
    ),
]


class UsageError(Exception):
    """Bad input: reported as one line, exit code 2."""


@contextmanager
def one_line_errors():
    """Turn expected input/config errors into ``error: <reason>`` and exit code 2."""
    try:
        yield
    except (UsageError, DatasetError, ConfigError, OSError, KeyError, ValueError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"error: {reason}", file=sys.stderr)  # plain: never wrapped, one line
        raise typer.Exit(2) from None


def read_text_file(path: Path, what: str) -> str:
    if not path.exists():
        raise UsageError(f"{what} file not found: {path}")
    if path.is_dir():
        raise UsageError(f"{what} path is a directory, not a file: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{what} file is not UTF-8 text: {path}") from None
    if not text.strip():
        raise UsageError(f"{what} file is empty: {path}")
    return text


def check_choice(value: str, choices: tuple[str, ...], option: str) -> str:
    if value not in choices:
        raise UsageError(f"{option} must be one of {', '.join(choices)} (got {value!r})")
    return value


def prompt_overrides(items: list[str] | None) -> dict[str, Path]:
    from clinjudge.prompts import parse_prompt_overrides

    return parse_prompt_overrides(items or [])


@app.command()
def judge(
    transcript: Annotated[Path, typer.Option(help="Doctor–patient transcript (text file).")],
    note: Annotated[Path, typer.Option(help="The clinical note to judge (text file).")],
    mode: ModeOpt = "inference-aware",
    backend: BackendOpt = "auto",
    prompt: PromptOpt = None,
    claims: ClaimsOpt = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Judge one note against its transcript and print a per-claim table (or JSON).

    Transcripts may be ACI-Bench style (\\[doctor] / \\[patient] lines), MTS-Dialog style
    (Doctor: / Patient:) or plain text. Tiers: 1 restatement, 2 paraphrase / terminology /
    trade-generic, 3 clinical inference (supported); 4 no basis, 5 contradiction (hallucinated).
    """
    with one_line_errors():
        check_choice(mode, ("lexical", "inference-aware"), "--mode")
        check_choice(backend, ("auto", "offline", "llm"), "--backend")
        check_choice(claims, ("auto", "split", "llm"), "--claims")
        transcript_text = read_text_file(transcript, "transcript")
        note_text = read_text_file(note, "note")
        from clinjudge.api import judge_note

        result = judge_note(
            transcript_text,
            note_text,
            mode=mode,  # type: ignore[arg-type]
            backend=backend,
            prompts=prompt_overrides(prompt),
            claims=claims,
        )
    if as_json:
        sys.stdout.write(json.dumps(result.as_json(), indent=2, ensure_ascii=False) + "\n")
        return
    from clinjudge.report import render_claim_table

    report = result.report
    stdout.print(render_claim_table(result.rows(), title=f"{mode} judge ({report.backend})"))
    rate = report.hallucination_rate
    shown = "n/a" if rate is None else f"{rate:.1%}"
    stdout.print(
        f"hallucination rate {shown} = {report.n_hallucinated}/{report.n_judged} judged claims"
        f" (excluded: {report.parse_failures} parse failures, {report.errors} errors)"
    )


@app.command()
def compare(
    dataset: Annotated[
        str,
        typer.Argument(
            help="A bundled eval set (aci-demo) or a CSV/JSONL/JSON file. Columns: source "
            "(dialogue|transcript|source), judged text (note|summary|answer), id "
            "(encounter_id|id); fact-checking also reads question and evidence."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Output directory (resumable: re-run to continue).")],
    judges: Annotated[
        str,
        typer.Option(help=f"Comma-separated judges: {judges_help()}."),
    ] = "lexical,inference-aware",
    backend: BackendOpt = "auto",
    prompt: PromptOpt = None,
    claims: ClaimsOpt = "auto",
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--option",
            help="A judge setting JUDGE.KEY=VALUE (repeatable), e.g. cef.task=note, "
            "cef.n_source=12, factcheck.corpus=passages.jsonl, factcheck.search=searxng, "
            "factcheck.search_url=http://localhost:8888.",
        ),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Only the first N items.", min=1)] = None,
    source_column: Annotated[
        str | None, typer.Option(help="Column holding the source text, when not detected.")
    ] = None,
    text_column: Annotated[
        str | None,
        typer.Option(help="Column holding the judged text (e.g. automatic_summary)."),
    ] = None,
    id_column: Annotated[str | None, typer.Option(help="Column holding the item id.")] = None,
    concurrency: Annotated[
        int, typer.Option(help="Items judged at once on the llm backend (offline: 1).", min=1)
    ] = 4,
) -> None:
    """Run several judges over a dataset; write report.json, report.md, verdicts.jsonl, plots.

    SOAP judges rate the same claims, so the flips between them are exact. Re-run the same
    command to resume an interrupted run.
    """
    with one_line_errors():
        check_choice(backend, ("auto", "offline", "llm"), "--backend")
        check_choice(claims, ("auto", "split", "llm"), "--claims")
        from clinjudge.compare import run_compare_sync
        from clinjudge.datasets import load_items

        evaluators = build_judges(
            judges, backend=backend, prompt=prompt, claims=claims, option=option
        )
        needs_source = any(e.needs_source for e in evaluators.values())
        data = load_items(
            dataset,
            limit=limit,
            require_source=needs_source,
            transcript_column=source_column,
            note_column=text_column,
            id_column=id_column,
        )
        if all(e.usage() is None for e in evaluators.values()):
            concurrency = 1  # offline judging is CPU-bound: one item at a time is fastest
        with progress_bars() as progress:
            result = run_compare_sync(
                data, evaluators, out, concurrency=concurrency, progress=progress
            )
    print_compare_summary(result.report, result.files)


def build_judges(
    judges: str, *, backend: str, prompt: list[str] | None, claims: str, option: list[str] | None
) -> dict:
    """The judges named in ``judges`` (comma-separated), built from the shared CLI options:
    ``--backend``, ``--prompt`` overrides, ``--claims`` and ``--option JUDGE.KEY=VALUE``; one
    knowledge base and one response cache serve them all."""
    from clinjudge.evaluators import BuildOptions, build_evaluator, parse_judge_names
    from clinjudge.knowledge.base import KnowledgeBase
    from clinjudge.llm import LLMSettings, ResponseCache

    names = parse_judge_names(judges)
    settings_by_judge = judge_options(option, names)
    overrides = prompt_overrides(prompt)
    kb = KnowledgeBase.default()
    cache = ResponseCache()
    return {
        name: build_evaluator(
            name,
            BuildOptions(
                backend=backend,
                settings=LLMSettings(),
                prompt_overrides=overrides,
                knowledge=kb,
                cache=cache,
                options={"claims": claims, **settings_by_judge.get(name, {})},
            ),
        )
        for name in names
    }


def judge_options(items: list[str] | None, names: list[str]) -> dict[str, dict[str, object]]:
    """``["cef.task=note", "cef.n_source=12"]`` → ``{"cef": {"task": "note", "n_source": 12}}``
    (integers and decimals are converted); the judge must be one of ``names``."""
    parsed: dict[str, dict[str, object]] = {}
    for item in items or []:
        target, sep, value = item.partition("=")
        judge, dot, key = target.partition(".")
        if not sep or not dot or not key or not value:
            raise UsageError(f"--option must look like JUDGE.KEY=VALUE, got {item!r}")
        if judge not in names:
            raise UsageError(f"--option {item!r} names judge {judge!r}, not among --judges")
        parsed.setdefault(judge, {})[key] = _number_or_text(value)
    return parsed


def _number_or_text(value: str) -> object:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
    return value


@contextmanager
def progress_bars():
    """A rich progress bar per judge on stderr; yields ``progress(name, total) -> advance``."""
    bars = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr,
        transient=False,
    )

    def start(name: str, total: int) -> Callable[[], None]:
        task = bars.add_task(f"{name:>16}", total=total)
        return lambda: bars.advance(task)

    with bars:
        yield start


def print_compare_summary(report: dict, files: list[Path]) -> None:
    from rich.table import Table

    judges = report["judges"]
    soap = {n: j for n, j in judges.items() if j.get("kind") == "soap"}
    others = {n: j for n, j in judges.items() if j.get("kind") != "soap"}
    title = f"{report['dataset']}: {report['n_items']} items"
    if soap:
        table = Table(title=title, header_style="bold")
        for column in ("judge", "hallucination rate", "95% CI", "claims", "excluded", "s/note"):
            table.add_column(column)
        for name, j in soap.items():
            rate = j["hallucination_rate"]
            lo, hi = j["ci95"]
            table.add_row(
                name,
                "n/a" if rate is None else f"{rate:.1%}",
                f"{lo:.1%}–{hi:.1%}",
                str(j["n_claims"]),
                str(j["excluded_claims"]),
                "n/a"
                if j["seconds_per_note_median"] is None
                else f"{j['seconds_per_note_median']:.2f}",
            )
        stdout.print(table)
    if others:
        table = Table(title=None if soap else title, header_style="bold")
        for column in ("judge", "score", "mean or rate", "95% CI", "n"):
            table.add_column(column)
        for name, j in others.items():
            for metric, h in (j.get("headline") or {}).items():
                lo, hi = h.get("ci95") or (None, None)
                table.add_row(
                    name,
                    metric,
                    _metric(metric, h.get("value")),
                    "n/a" if lo is None else f"{_metric(metric, lo)}–{_metric(metric, hi)}",
                    str(h.get("n", "n/a")),
                )
        stdout.print(table)
        stdout.print(
            "n: what the number is over (CEF: items whose score is defined; fact-checking: "
            "rated relevant claims). CEF scores are 0–100, higher is better, bootstrap CI over "
            "items; fact-check rates are pooled over claims with a Wilson CI. Exclusions: "
            "report.json."
        )
    for pair in report["paired"]:
        if pair["mean_rate_difference"] is not None:
            lo, hi = pair["ci95"]
            stdout.print(
                f"{pair['a']} − {pair['b']}: {pair['mean_rate_difference']:+.1%} per note "
                f"(95% CI {lo:+.1%} to {hi:+.1%}, {pair['n_notes']} notes); "
                f"{len(report['flips'])} claims flip between judges"
            )
    for name, failures in report.get("failed_items", {}).items():
        stderr.print(f"[yellow]{name}: {len(failures)} items failed and will be retried on re-run")
    stdout.print("wrote " + ", ".join(str(f) for f in files))


def _metric(name: str, value: float | None) -> str:
    """A rate as a percentage; a score (CEF's 0–100) with one decimal."""
    if value is None:
        return "n/a"
    return f"{value:.1%}" if "rate" in name else f"{value:.1f}"


def _register_commands() -> None:
    from clinjudge.cli_cef import cef
    from clinjudge.cli_detect import detect, gate, pairs
    from clinjudge.cli_factcheck import factcheck
    from clinjudge.cli_inject import inject
    from clinjudge.cli_meta_eval import meta_eval
    from clinjudge.knowledge.cli import knowledge_app

    app.command()(cef)
    app.command()(factcheck)
    app.command()(detect)
    app.command()(pairs)
    app.command()(gate)
    app.command()(inject)
    app.command("meta-eval")(meta_eval)
    app.add_typer(knowledge_app, name="knowledge", help="Build, search and inspect knowledge.")


_register_commands()


def main() -> None:  # pragma: no cover - console entry point
    app()
