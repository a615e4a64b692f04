"""Build a CEF backend (offline or LLM) with its provenance, the way the SOAP judge is built
(:mod:`clinjudge.judges.factory`: same backend resolution, prompt overrides and hashes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel

from clinjudge import __version__
from clinjudge.cef.llm_backend import ANSWER_PROMPT, GENERATE_PROMPT, LLMCef
from clinjudge.cef.offline import OfflineCef
from clinjudge.cef.result import AnswerRecord, CefQuestion, Side
from clinjudge.errors import ConfigError
from clinjudge.judges.factory import resolve_backend
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller
from clinjudge.prompts import Prompt, load_prompt

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
    settings = settings or LLMSettings()
    resolved = resolve_backend(backend, settings, chat_model)
    overrides = {k: v for k, v in (prompt_overrides or {}).items() if k.startswith("cef.")}
    unknown = set(overrides) - set(CEF_PROMPTS)
    if unknown:
        raise ConfigError(f"no prompt named {sorted(unknown)[0]!r} in CEF")
    provenance: dict[str, Any] = {"package_version": __version__, "backend": resolved}
    if resolved == "offline":
        kb = knowledge or KnowledgeBase.default()
        provenance["knowledge"] = {
            "digest": kb.digest,
            "sources": kb.manifest.get("sources"),
            "packages": kb.manifest.get("packages"),
        }
        provenance["answerer"] = "OfflineVerifier(inference-aware): tier 1-3 YES, 5 NO, 4 IDK"
        return CefSetup(OfflineCef(kb), provenance)
    caller = StructuredCaller.from_settings(settings, cache=cache, chat_model=chat_model)
    model_id = caller.model_id
    prompts = [load_prompt(name, overrides.get(name)) for name in CEF_PROMPTS]
    provenance |= {
        "model": model_id,
        "base_url": settings.base_url if chat_model is None else None,
        "decoding": settings.decoding(),
        "prompts": [p.ref().model_dump() for p in prompts],
    }
    return CefSetup(LLMCef(caller, *prompts), provenance, caller, prompts)
