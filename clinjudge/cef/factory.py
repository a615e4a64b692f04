"""Build a CEF backend (offline or LLM) with its provenance, the way the SOAP judge is built
(:mod:`clinjudge.judges.factory`: same backend resolution, prompt overrides and hashes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel

from clinjudge.cef.llm_backend import DEFAULT_LAYOUT, LAYOUTS, LLMCef
from clinjudge.cef.offline import OfflineCef
from clinjudge.cef.result import AnswerRecord, CefQuestion, Side
from clinjudge.errors import ConfigError
from clinjudge.grounding.backend import knowledge_provenance, open_backend
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller
from clinjudge.prompts import Prompt

#: Every CEF prompt, of either layout.
CEF_PROMPTS = tuple(name for pair in LAYOUTS.values() for name in pair)


class CefBackend(Protocol):
    """Writes a side's questions and answers questions from one text."""

    name: str
    #: Questions per cross-examination call.
    batch_size: int

    async def generate(
        self, side: Side, texts: Mapping[Side, str], n: int
    ) -> tuple[list[CefQuestion], list[dict]]: ...

    async def answer(
        self, questions: list[CefQuestion], side: Side, texts: Mapping[Side, str]
    ) -> list[AnswerRecord]:
        """Each question's answer from ``texts[side]`` alone."""
        ...


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
    layout: str | None = None,
) -> CefSetup:
    """The offline backend (knowledge base + offline verifier) or the LLM backend (``chat_model``
    if given, else ``ChatOpenAI`` from ``settings``); ``auto`` picks llm when a model is set.
    ``layout``: the LLM prompts' layout (:data:`~clinjudge.cef.llm_backend.LAYOUTS`; default
    :data:`~clinjudge.cef.llm_backend.DEFAULT_LAYOUT`).

    Raises:
        ConfigError: an unknown layout, or an override of a prompt the layout does not use.
    """
    layout = layout or DEFAULT_LAYOUT
    if layout not in LAYOUTS:
        raise ConfigError(f"cef option layout must be {' or '.join(LAYOUTS)} (got {layout!r})")
    for name in prompt_overrides or {}:
        if name in CEF_PROMPTS and name not in LAYOUTS[layout]:
            other = next(k for k, names in LAYOUTS.items() if name in names)
            raise ConfigError(
                f"prompt {name} belongs to the {other} CEF layout, not {layout}: "
                f"add --option cef.layout={other} (clinjudge cef: --layout {other})"
            )
    access = open_backend(
        backend,
        judge="CEF",
        settings=settings,
        chat_model=chat_model,
        cache=cache,
        prompt_names=LAYOUTS[layout],
        prompt_overrides=prompt_overrides,
        known_prompts=CEF_PROMPTS,
    )
    provenance = access.provenance
    if access.caller is not None:
        provenance["layout"] = layout
    if access.caller is None:
        kb = knowledge or KnowledgeBase.default()
        provenance["knowledge"] = knowledge_provenance(kb)
        provenance["answerer"] = "OfflineVerifier(inference-aware): tier 1-3 YES, 5 NO, 4 IDK"
        return CefSetup(OfflineCef(kb), provenance)
    return CefSetup(
        LLMCef(access.caller, *access.prompts, layout=layout),
        provenance,
        access.caller,
        access.prompts,
    )
