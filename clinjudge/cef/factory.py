"""Build a CEF backend (offline or LLM) with its provenance, the way the SOAP judge is built
(:mod:`clinjudge.judges.factory`: same backend resolution, prompt overrides and hashes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel

from clinjudge.cef.llm_backend import ANSWER_PROMPT, GENERATE_PROMPT, LLMCef
from clinjudge.cef.offline import OfflineCef
from clinjudge.cef.result import AnswerRecord, CefQuestion, Side
from clinjudge.grounding.backend import knowledge_provenance, open_backend
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller
from clinjudge.prompts import Prompt

CEF_PROMPTS = (GENERATE_PROMPT, ANSWER_PROMPT)


class CefBackend(Protocol):
    """Writes a side's questions and answers questions from one text."""

    name: str
    #: Questions per cross-examination call.
    batch_size: int

    async def generate(
        self, side: Side, text: str, n: int
    ) -> tuple[list[CefQuestion], list[dict]]: ...

    async def answer(self, questions: list[CefQuestion], text: str) -> list[AnswerRecord]: ...


@dataclass
class CefSetup:
    backend: CefBackend
    provenance: dict[str, Any]
    caller: StructuredCaller | None = None
    prompts: list[Prompt] = field(default_factory=list)


def build_cef(
    backend: str | None = None,
    *,
    settings: LLMSettings | None = None,
    chat_model: BaseChatModel | None = None,
    prompt_overrides: dict[str, Path] | None = None,
    knowledge: KnowledgeBase | None = None,
    cache: ResponseCache | None = None,
) -> CefSetup:
    """The offline backend (knowledge base + offline verifier) or the LLM backend (``chat_model``
    if given, else ``ChatOpenAI`` from ``settings``); ``auto`` picks llm when a model is set."""
    access = open_backend(
        backend,
        judge="CEF",
        settings=settings,
        chat_model=chat_model,
        cache=cache,
        prompt_names=CEF_PROMPTS,
        prompt_overrides=prompt_overrides,
    )
    provenance = access.provenance
    if access.caller is None:
        kb = knowledge or KnowledgeBase.default()
        provenance["knowledge"] = knowledge_provenance(kb)
        provenance["answerer"] = "OfflineVerifier(inference-aware): tier 1-3 YES, 5 NO, 4 IDK"
        return CefSetup(OfflineCef(kb), provenance)
    return CefSetup(
        LLMCef(access.caller, *access.prompts), provenance, access.caller, access.prompts
    )
