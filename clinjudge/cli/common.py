"""What every ``clinjudge`` command shares: the consoles, the common options, one-line errors
(exit code 2, never a traceback), input files, judges built from the shared options, progress
bars."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from clinjudge.errors import ConfigError, DatasetError

#: Piped output is not wrapped to 80 columns (one word per line in a narrow table column).
#: No console markup: what is printed holds the user's data (system names, ids, reasons), and
#: ``[link=…]`` in a system name must print as it is; colour is given with ``style=``.
stdout = Console(markup=False) if sys.stdout.isatty() else Console(width=200, markup=False)
stderr = Console(stderr=True, markup=False, soft_wrap=True)  # a message is one line

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
        "local: the --gguf model, served on 127.0.0.1 by llama-cpp-python (the local extra). "
        "auto: llm when CLINJUDGE_MODEL is set, else offline.",
    ),
]
#: The backends a model command takes.
BACKENDS = ("auto", "offline", "llm", "local")


def _gguf_setting(value: Path | None) -> Path | None:
    """``--gguf`` is the ``CLINJUDGE_GGUF`` setting of this run (read by LLMSettings)."""
    if value is not None:
        os.environ["CLINJUDGE_GGUF"] = str(value)
    return value


GgufOpt = Annotated[
    Path | None,
    typer.Option(
        "--gguf",
        help="A GGUF model file for --backend local (nothing is downloaded; CLINJUDGE_GGUF_SHA256 "
        "makes its hash checked before it is loaded).",
        callback=_gguf_setting,
    ),
]


def _threads_setting(value: int | None) -> int | None:
    """``--threads`` is the ``CLINJUDGE_THREADS`` setting of this run (read by LLMSettings)."""
    if value is not None:
        os.environ["CLINJUDGE_THREADS"] = str(value)
    return value


ThreadsOpt = Annotated[
    int | None,
    typer.Option(
        "--threads",
        help="CPU threads of the --backend local model server (default: the cores this "
        "process may use; or CLINJUDGE_THREADS).",
        min=1,
        callback=_threads_setting,
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
        help="How claims are cut: split (the offline splitter), llm (the extraction prompt), "
        "auto (the splitter, so that every backend judges the same claims).",
    ),
]
ProtocolOpt = Annotated[
    str,
    typer.Option(
        "--protocol",
        help="How the llm backend asks: batch (8 claims a call over the whole transcript), "
        "claim (one short call per claim over the exchanges around it; for small local "
        "models) or claim-shared (one call per claim over the whole transcript). batch and "
        "claim-shared open every call of a note with the same transcript, which a server "
        "reuses. In compare: --option inference-aware.protocol=claim.",
    ),
]


OptionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        help="A judge setting JUDGE.KEY=VALUE (repeatable), e.g. inference-aware.protocol=claim, "
        "inference-aware.batch_size=4, cef.task=note, "
        "cef.n_source=12, factcheck.corpus=passages.jsonl, factcheck.search=searxng, "
        "factcheck.search_url=http://localhost:8888, numeric.rel_tol=0.1, "
        "rubric.batch_size=4 (criteria per model call), rubric.offline_facts=on (fact criteria "
        "by the knowledge reading, the rest by the model).",
    ),
]
JuryOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--jury",
        help="Grade the rubric and SOAP judges by a jury of models: MODEL@URL entries "
        "(comma-separated or repeated), each an OpenAI-compatible endpoint, the key from "
        "OPENAI_API_KEY. Every juror grades every criterion (claim) with the same prompt; the "
        "verdict is the majority (ties kept as ties) or the mean level, and Fleiss' kappa says "
        "how far the jurors agree.",
    ),
]
RetryOpt = Annotated[
    bool,
    typer.Option(
        "--retry-failed/--no-retry-failed",
        help="Judge again, on a resumed run, the items whose model calls failed or whose replies "
        "could not be read (the response cache keeps every call that succeeded).",
    ),
]
ConcurrencyOpt = Annotated[
    int, typer.Option(help="Items judged at once on the llm backend (offline: 1).", min=1)
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


def require_file(path: Path, what: str) -> Path:
    """``path`` if it is a file, else a one-line error (before any heavy import)."""
    if not path.exists():
        raise UsageError(f"{what} file not found: {path}")
    if path.is_dir():
        raise UsageError(f"{what} path is a directory, not a file: {path}")
    return path


def read_text_file(path: Path, what: str) -> str:
    require_file(path, what)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{what} file is not UTF-8 text: {path}") from None
    if not text.strip():
        raise UsageError(f"{what} file is empty: {path}")
    from clinjudge.datasets.items import text_too_long

    if why := text_too_long(text, what):
        raise UsageError(f"{path}: {why}")
    return text


def check_choice(value: str, choices: tuple[str, ...], option: str) -> str:
    if value not in choices:
        raise UsageError(f"{option} must be one of {', '.join(choices)} (got {value!r})")
    return value


def prompt_overrides(items: list[str] | None) -> dict[str, Path]:
    from clinjudge.prompts import parse_prompt_overrides

    return parse_prompt_overrides(items or [])


def build_judges(
    judges: str, *, backend: str, prompt: list[str] | None, claims: str, option: list[str] | None
) -> dict:
    """The judges named in ``judges`` (comma-separated), built from the shared CLI options:
    ``--backend``, ``--prompt`` overrides, ``--claims`` and ``--option JUDGE.KEY=VALUE``; one
    knowledge base and one response cache serve them all."""
    spec, paths = judge_spec(judges, backend=backend, prompt=prompt, claims=claims, option=option)
    return spec.build(paths)


def judge_spec(
    judges: str,
    *,
    backend: str,
    prompt: list[str] | None,
    claims: str,
    option: list[str] | None,
    jury: list[str] | None = None,
):
    """The :class:`~clinjudge.executors.spec.JudgeSpec` of the shared CLI options (what a Ray
    worker builds the same judges from) and the ``--prompt`` override paths.

    Raises:
        UsageError: ``--jury`` with no judge that takes one.
        ConfigError: a malformed ``--jury`` (:func:`clinjudge.llm_settings.parse_jury`).
    """
    from clinjudge.evaluators import parse_judge_names
    from clinjudge.evaluators.registry import takes_jury
    from clinjudge.executors.spec import JudgeSpec

    names = parse_judge_names(judges)
    options = judge_options(option, names)
    overrides = prompt_overrides(prompt)
    if jury:
        from clinjudge.llm_settings import parse_jury

        parse_jury(jury)  # a malformed juror is one line before anything loads
        if not takes_jury(names):
            raise UsageError("--jury grades rubric and SOAP judges: add --judges rubric:FILE")
    spec = JudgeSpec.of(
        names,
        backend=backend,
        claims=claims,
        options=options,
        prompt_overrides=overrides,
        jury=tuple(jury or ()),
    )
    return spec, overrides


def judge_options(items: list[str] | None, names: list[str]) -> dict[str, dict[str, object]]:
    """``["cef.task=note", "cef.n_source=12"]`` → ``{"cef": {"task": "note", "n_source": 12}}``
    (integers and decimals are converted); the judge must be one of ``names``, or the kind of
    judges named with an argument (``rubric.batch_size=4`` sets every ``rubric:FILE``)."""
    parsed: dict[str, dict[str, object]] = {}
    for item in items or []:
        target, sep, value = item.partition("=")
        judge, dot, key = target.partition(".")
        if not sep or not dot or not key or not value:
            raise UsageError(f"--option must look like JUDGE.KEY=VALUE, got {item!r}")
        targets = [n for n in names if n == judge or n.partition(":")[0] == judge]
        if not targets:
            raise UsageError(f"--option {item!r} names judge {judge!r}, not among --judges")
        for name in targets:
            parsed.setdefault(name, {})[key] = _number_or_text(value)
    return parsed


def _number_or_text(value: str) -> object:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
    return value


def every_call_failed(
    usage: dict[str, int] | None, provenance: dict, failures: list[dict]
) -> str | None:
    """One line naming the endpoint and the first error when the run sent model calls and not
    one of them came back (no reply, no cache hit): the exit-code-1 case. ``None`` otherwise,
    including a run whose replies were all unreadable (those are parse failures, reported)."""
    if not usage or not usage.get("errors") or usage.get("cache_hits"):
        return None
    if usage.get("calls", 0) > usage["errors"]:  # some call was answered
        return None
    from clinjudge.redact import public_url, without_credentials

    endpoint = public_url(provenance.get("base_url")) or provenance.get("model") or "the model"
    reasons = [f["reason"] for f in failures if f.get("kind") == "error"]
    why = without_credentials(reasons[0]) if reasons else "no reply"
    return f"every model call to {endpoint} failed: {why}"


def exit_if_dead(line: str | None) -> None:
    """``error: LINE`` on stderr and exit code 1 when ``line`` (:func:`every_call_failed`) says
    every model call failed; nothing otherwise."""
    if line:
        print(f"error: {line}", file=sys.stderr)
        raise typer.Exit(1)


def all_calls_failed(report: dict, evaluators: dict) -> str | None:
    """:func:`every_call_failed` for the first judge of a ``compare`` or ``meta-eval`` run whose
    every model call failed (``"NAME: every model call to …"``), else ``None``."""
    for name, judge in evaluators.items():
        groups = (report.get("failures", {}).get(name) or {}).get("by_reason", [])
        dead = every_call_failed(judge.usage(), judge.provenance(), groups)
        if dead:
            return f"{name}: {dead}"
    return None


def run_concurrency(evaluators: dict, concurrency: int) -> int:
    """Items judged at once: ``concurrency`` when a judge calls a model, else 1 (offline
    judging is CPU-bound: one item at a time is fastest). A local model server answers one
    request at a time and reuses the prompt prefix of the last one, so its notes are judged
    one after the other."""
    if all(e.usage() is None for e in evaluators.values()):
        return 1
    local = any(e.provenance().get("local_model") for e in evaluators.values())
    return 1 if local else concurrency


def print_run_failures(report: dict) -> None:
    """On stderr: items whose judge raised, units that failed grouped by reason (excluded
    from the numbers), and the items the next run judges again."""
    for name, failed in report.get("failed_items", {}).items():
        stderr.print(
            f"{name}: {len(failed)} items failed and will be retried on re-run", style="yellow"
        )
    failures = report.get("failures", {})
    for name, summary in failures.items():
        again = len(report.get("items_to_retry", {}).get(name, []))
        stderr.print(
            f"{name}: {summary['units']} units of {summary['items']} items failed, "
            f"excluded from its numbers"
            + (f"; {again} items are judged again by the next run" if again else ""),
            style="yellow",
        )
        for group in summary["by_reason"][:5]:
            stderr.print(f"  {group['count']} × {group['kind']}: {group['reason']}", style="yellow")
    for name, ids in report.get("items_to_retry", {}).items():
        if name not in failures:
            stderr.print(
                f"{name}: {len(ids)} items lost calls or replies (excluded where "
                "unjudged); the next run judges them again",
                style="yellow",
            )


def warn_skipped(data, most: int = 3) -> None:
    """One stderr line per skipped row (the first ``most``), and how many there were."""
    if not data.skipped:
        return
    for s in data.skipped[:most]:
        stderr.print(f"skipped {s.describe()}", highlight=False, markup=False)
    more = f" ({len(data.skipped) - most} more in report.md)" if len(data.skipped) > most else ""
    stderr.print(
        f"{len(data.skipped)} of {len(data.skipped) + len(data.items)} rows skipped{more}; "
        "--strict-items refuses such a file",
        highlight=False,
        markup=False,
    )


def warn_if_not_english(texts: dict[str, str]) -> None:
    """One stderr line naming the texts that do not look English
    (:func:`clinjudge.text.language.looks_english`); nothing when all do."""
    from clinjudge.text.language import looks_english

    odd = [name for name, text in texts.items() if text and not looks_english(text)]
    if odd:
        shown = ", ".join(odd[:5]) + (f" and {len(odd) - 5} more" if len(odd) > 5 else "")
        print(
            f"warning: {shown} do(es) not look like English; clinjudge's vocabularies and rules "
            "are English, so such text is judged on its names and numbers only",
            file=sys.stderr,
        )
