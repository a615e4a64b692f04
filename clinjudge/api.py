"""Python entry points: judge one note, or score one text with any judge of ``compare``.

    >>> from clinjudge.api import judge_note, evaluate
    >>> result = judge_note(transcript_text, note_text, mode="inference-aware")
    >>> result.report.hallucination_rate, result.rows()[0]["tier"]
    >>> evaluate("cef", summary_text, source=dialogue_text)["overall"]
    >>> evaluate("factcheck", answer_text, meta={"evidence": passages})["unsupported_rate"]
    >>> evaluate("rubric:my.rubric.md", note_text, source=transcript_text,
    ...          jury=["gpt-4o@https://api.openai.com/v1", "llama3@http://localhost:8000/v1"])

Backends: ``offline`` (default when no model is configured), ``llm`` (``CLINJUDGE_MODEL`` /
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, or any LangChain chat model passed as ``chat_model``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.evaluators.soap import SoapEvaluator
from clinjudge.graphs.soap_judge import ClaimProgress
from clinjudge.judges.factory import JudgeSetup, build_judge
from clinjudge.judges.note_report import claim_rows, note_summary
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings, ResponseCache
from clinjudge.types import Mode, NoteReport, Provenance


@dataclass
class JudgeResult:
    report: NoteReport
    provenance: Provenance
    usage: dict

    def rows(self) -> list[dict]:
        return claim_rows(self.report)

    def as_json(self) -> dict:
        """The object printed by ``clinjudge judge --json``."""
        return {
            **note_summary(self.report),
            "usage": self.usage,
            "provenance": self.provenance.model_dump(),
            "claims": self.rows(),
        }


def make_setup(
    mode: Mode,
    backend: str | None,
    *,
    settings: LLMSettings | None = None,
    chat_model: BaseChatModel | None = None,
    prompts: dict[str, Path] | None = None,
    knowledge: KnowledgeBase | None = None,
    cache: ResponseCache | None = None,
    claims: str = "auto",
    protocol: str = "batch",
) -> JudgeSetup:
    setup = build_judge(
        mode,
        backend,
        settings=settings,
        chat_model=chat_model,
        prompt_overrides=prompts,
        knowledge=knowledge,
        cache=cache,
        claims=claims,
        protocol=protocol,
    )
    setup.provenance.created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    return setup


async def ajudge_note(
    transcript: str,
    note: str,
    *,
    mode: Mode = "inference-aware",
    backend: str | None = None,
    note_id: str = "note",
    setup: JudgeSetup | None = None,
    batch_size: int = 8,
    progress: ClaimProgress | None = None,
    **setup_options,
) -> JudgeResult:
    """Judge one note against its transcript, claim by claim (SPEC §1); ``batch_size`` claims
    share one model call on the LLM backend; ``progress`` (``found(n)``, ``judged(n)``) is told
    how far the note has gone.

    Raises:
        ValueError: an empty transcript or note (there is nothing to judge against, or to judge).
    """
    _require(transcript, "transcript")
    _require(note, "note")
    setup = setup or make_setup(mode, backend, **setup_options)
    judge = SoapEvaluator(setup.provenance.mode or mode, setup, batch_size=batch_size)
    row = await judge.evaluate(
        Item(id=note_id, transcript=transcript, note=note), progress=progress
    )
    usage = setup.caller.usage.as_dict() if setup.caller else {}
    provenance = setup.provenance
    if setup.caller is not None:
        provenance = provenance.model_copy(update={"output_modes": usage["output_modes"]})
    return JudgeResult(report=judge.report(row), provenance=provenance, usage=usage)


def judge_note(transcript: str, note: str, **options) -> JudgeResult:
    """Synchronous wrapper of `ajudge_note`."""
    return asyncio.run(ajudge_note(transcript, note, **options))


async def aevaluate(
    judge: str,
    text: str,
    *,
    source: str = "",
    meta: dict[str, Any] | None = None,
    options: BuildOptions | None = None,
    jury: list[str] | None = None,
) -> dict[str, Any]:
    """The row of judge ``judge`` (``lexical``, ``inference-aware``, ``cef``, ``factcheck``,
    ``rubric:FILE``) for one text: ``source`` is what it is checked against (a transcript or
    dialogue; none for the fact-checker), ``meta`` the item's other fields (``question``,
    ``evidence``), ``options`` how the judge is built (backend, model, judge settings),
    ``jury`` the ``MODEL@URL`` jurors grading a rubric judge together (as ``--jury``). The row
    carries the judge's per-item scores too (a SOAP judge's ``hallucination_rate``, CEF's
    ``overall`` …).

    Raises:
        ValueError: an empty text, or no source for a judge that needs one.
        ConfigError: a malformed jury, or a jury for a judge that takes none.
    """
    options = options or BuildOptions()
    if jury:
        from dataclasses import replace

        from clinjudge.errors import ConfigError
        from clinjudge.evaluators.registry import takes_jury

        if not takes_jury([judge]):
            raise ConfigError(f"judge {judge!r} takes no jury: a jury grades rubric judges")
        options = replace(options, jury=tuple(jury))
    evaluator = build_evaluator(judge, options)
    _require(text, "text")
    if evaluator.needs_source:
        _require(source, f"source (judge {judge!r} checks the text against it)")
    item = Item(id="text", transcript=source, note=text, meta=meta or {})
    row = await evaluator.evaluate(item)
    return {**row, **evaluator.item_scores(row)}


def _require(text: str, what: str) -> None:
    if not text or not text.strip():
        raise ValueError(f"the {what} is empty")


def evaluate(judge: str, text: str, **kwargs: Any) -> dict[str, Any]:
    """Synchronous wrapper of `aevaluate`."""
    return asyncio.run(aevaluate(judge, text, **kwargs))
