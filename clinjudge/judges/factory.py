"""Build a configured SOAP judge (verifier, claim extractor, provenance) for a mode and backend."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from clinjudge import __version__
from clinjudge.errors import ConfigError
from clinjudge.judges.base import ClaimVerifier
from clinjudge.judges.extraction import ClaimExtractor, LLMExtractor, SplitterExtractor
from clinjudge.judges.knowledge_context import KnowledgeLookup
from clinjudge.judges.llm_judge import LLMJudge
from clinjudge.judges.offline import OfflineVerifier
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller
from clinjudge.prompts import Prompt, load_prompt
from clinjudge.types import Backend, Mode, Provenance

PROMPT_BY_MODE = {"lexical": "soap.lexical", "inference-aware": "soap.inference_aware"}
EXTRACTION_PROMPT = "soap.claim_extraction"


@dataclass
class JudgeSetup:
    verifier: ClaimVerifier
    extractor: ClaimExtractor
    provenance: Provenance
    caller: StructuredCaller | None = None
    prompts: list[Prompt] = field(default_factory=list)


def resolve_backend(
    backend: str | None, settings: LLMSettings, chat_model: BaseChatModel | None = None
) -> Backend:
    """``auto``/None → ``llm`` when a model is configured, else ``offline``; a given
    ``chat_model`` means ``llm`` unless ``offline`` is asked for."""
    if chat_model is not None:
        return "offline" if backend == "offline" else "llm"
    if backend in (None, "auto"):
        return "llm" if settings.configured else "offline"
    if backend not in ("offline", "llm"):
        raise ConfigError(f"unknown backend {backend!r}: use offline, llm or auto")
    if backend == "llm" and not settings.configured:
        raise ConfigError("backend llm needs a model: set CLINJUDGE_MODEL (and OPENAI_BASE_URL)")
    return backend  # type: ignore[return-value]


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
    settings = settings or LLMSettings()
    resolved: Backend = resolve_backend(backend, settings, chat_model)
    overrides = prompt_overrides or {}
    unknown = set(overrides) - {*PROMPT_BY_MODE.values(), EXTRACTION_PROMPT}
    if unknown:
        raise ConfigError(f"no prompt named {sorted(unknown)[0]!r} in the SOAP judge")
    kb = knowledge or KnowledgeBase.default()
    provenance = Provenance(
        package_version=__version__,
        backend=resolved,
        mode=mode,
        knowledge={
            "digest": kb.digest,
            "sources": kb.manifest.get("sources"),
            "packages": kb.manifest.get("packages"),
        },
    )
    if resolved == "offline":
        verifier = OfflineVerifier(mode, kb)
        provenance.verifier = verifier.fingerprint()
        return JudgeSetup(verifier, SplitterExtractor(), provenance)
    caller = StructuredCaller.from_settings(settings, cache=cache, chat_model=chat_model)
    model_id = caller.model_id
    judge_prompt = load_prompt(PROMPT_BY_MODE[mode], overrides.get(PROMPT_BY_MODE[mode]))
    prompts = [judge_prompt]
    extractor: ClaimExtractor = SplitterExtractor()
    if claims in ("auto", "llm"):
        extraction = load_prompt(EXTRACTION_PROMPT, overrides.get(EXTRACTION_PROMPT))
        prompts.append(extraction)
        extractor = LLMExtractor(caller, extraction)
    provenance = provenance.model_copy(
        update={
            "model": model_id,
            "base_url": settings.base_url if chat_model is None else None,
            "decoding": settings.decoding(),
            "prompts": [p.ref() for p in prompts],
        }
    )
    verifier = LLMJudge(mode, caller, judge_prompt, KnowledgeLookup(kb))
    return JudgeSetup(verifier, extractor, provenance, caller, prompts)
