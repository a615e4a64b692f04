"""Build a configured SOAP judge (verifier, claim extractor, provenance) for a mode and backend."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from clinjudge.errors import ConfigError
from clinjudge.grounding.backend import knowledge_provenance, open_backend
from clinjudge.judges.base import ClaimVerifier
from clinjudge.judges.extraction import ClaimExtractor, LLMExtractor, SplitterExtractor
from clinjudge.judges.knowledge_context import KnowledgeLookup
from clinjudge.judges.llm_judge import LLMJudge
from clinjudge.judges.offline import OfflineVerifier
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.types import Mode, Provenance

PROMPT_BY_MODE = {"lexical": "soap.lexical", "inference-aware": "soap.inference_aware"}
EXTRACTION_PROMPT = "soap.claim_extraction"


@dataclass
class JudgeSetup:
    verifier: ClaimVerifier
    extractor: ClaimExtractor
    provenance: Provenance
    caller: StructuredCaller | None = None
    prompts: list[Prompt] = field(default_factory=list)


def build_judge(
    mode: Mode,
    backend: str | None = None,
    *,
    settings: LLMSettings | None = None,
    chat_model: BaseChatModel | None = None,
    prompt_overrides: dict[str, Path] | None = None,
    knowledge: KnowledgeBase | None = None,
    cache: ResponseCache | None = None,
    claims: str = "auto",
) -> JudgeSetup:
    """A judge for ``mode`` on ``backend``; ``chat_model`` (any LangChain chat model) wins over
    settings. ``claims``: ``split`` (offline splitter), ``llm`` (extraction prompt) or ``auto``
    (LLM extraction on the LLM backend)."""
    if mode not in PROMPT_BY_MODE:
        raise ConfigError(f"unknown mode {mode!r}: use lexical or inference-aware")
    names = [PROMPT_BY_MODE[mode]] + ([EXTRACTION_PROMPT] if claims in ("auto", "llm") else [])
    access = open_backend(
        backend,
        judge="the SOAP judge",
        settings=settings,
        chat_model=chat_model,
        cache=cache,
        prompt_names=names,
        prompt_overrides=prompt_overrides,
        known_prompts=[*PROMPT_BY_MODE.values(), EXTRACTION_PROMPT],
    )
    kb = knowledge or KnowledgeBase.default()
    provenance = Provenance(mode=mode, knowledge=knowledge_provenance(kb), **access.provenance)
    if access.caller is None:
        verifier = OfflineVerifier(mode, kb)
        provenance.verifier = verifier.fingerprint()
        return JudgeSetup(verifier, SplitterExtractor(), provenance)
    judge_prompt = access.prompt(PROMPT_BY_MODE[mode])
    extractor: ClaimExtractor = SplitterExtractor()
    if EXTRACTION_PROMPT in names:
        extractor = LLMExtractor(access.caller, access.prompt(EXTRACTION_PROMPT))
    verifier = LLMJudge(mode, access.caller, judge_prompt, KnowledgeLookup(kb))
    return JudgeSetup(verifier, extractor, provenance, access.caller, access.prompts)
