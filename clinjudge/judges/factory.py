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
from clinjudge.judges.llm_claim_judge import LLMClaimJudge
from clinjudge.judges.llm_judge import LLMJudge
from clinjudge.judges.llm_shared_claim_judge import SharedClaimJudge
from clinjudge.judges.offline import OfflineConfig, OfflineVerifier
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.types import Mode, Provenance

PROMPT_BY_MODE = {"lexical": "soap.lexical", "inference-aware": "soap.inference_aware"}
#: The per-claim protocols' prompts: ``claim`` (each claim with the exchanges around it,
#: :mod:`.llm_claim_judge`) and ``claim-shared`` (prefix-stable, :mod:`.llm_shared_claim_judge`).
CLAIM_PROMPT_BY_MODE = {
    "lexical": "soap.claim_lexical",
    "inference-aware": "soap.claim_inference_aware",
}
SHARED_CLAIM_PROMPT_BY_MODE = {
    "lexical": "soap.shared_claim_lexical",
    "inference-aware": "soap.shared_claim_inference_aware",
}
EXTRACTION_PROMPT = "soap.claim_extraction"
#: How the LLM backend asks: ``batch`` (claims of a note share a call over the whole
#: transcript), ``claim`` (one short call per claim over the exchanges around it; for small
#: models) or ``claim-shared`` (one call per claim, every call of a note opening with the same
#: transcript, which a server reuses). The prompt names and verifier class of each.
PROMPTS_BY_PROTOCOL = {
    "batch": PROMPT_BY_MODE,
    "claim": CLAIM_PROMPT_BY_MODE,
    "claim-shared": SHARED_CLAIM_PROMPT_BY_MODE,
}
PROTOCOLS = tuple(PROMPTS_BY_PROTOCOL)
VERIFIER_BY_PROTOCOL = {
    "batch": LLMJudge,
    "claim": LLMClaimJudge,
    "claim-shared": SharedClaimJudge,
}


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
    protocol: str = "batch",
    offline: OfflineConfig | None = None,
) -> JudgeSetup:
    """A judge for ``mode`` on ``backend``; ``chat_model`` (any LangChain chat model) wins over
    settings. ``claims``: ``split`` (the offline splitter), ``llm`` (the extraction prompt) or
    ``auto`` (the splitter: both backends judge the same claims). ``protocol`` (LLM backend):
    ``batch``, ``claim`` or ``claim-shared`` (:data:`PROTOCOLS`). ``offline``: the offline
    verifier's settings (default: :class:`OfflineConfig`'s)."""
    if mode not in PROMPT_BY_MODE:
        raise ConfigError(f"unknown mode {mode!r}: use lexical or inference-aware")
    if protocol not in PROTOCOLS:
        raise ConfigError(f"unknown protocol {protocol!r}: use {', '.join(PROTOCOLS)}")
    verify_prompt = PROMPTS_BY_PROTOCOL[protocol][mode]
    names = [verify_prompt] + ([EXTRACTION_PROMPT] if claims == "llm" else [])
    access = open_backend(
        backend,
        judge="the SOAP judge",
        settings=settings,
        chat_model=chat_model,
        cache=cache,
        prompt_names=names,
        prompt_overrides=prompt_overrides,
        known_prompts=[
            *(name for prompts in PROMPTS_BY_PROTOCOL.values() for name in prompts.values()),
            EXTRACTION_PROMPT,
        ],
    )
    kb = knowledge or KnowledgeBase.default()
    provenance = Provenance(mode=mode, knowledge=knowledge_provenance(kb), **access.provenance)
    if access.caller is None:
        verifier = OfflineVerifier(mode, kb, offline)
        provenance.verifier = verifier.fingerprint()
        return JudgeSetup(verifier, SplitterExtractor(), provenance)
    extractor: ClaimExtractor = SplitterExtractor()
    if EXTRACTION_PROMPT in names:
        extractor = LLMExtractor(access.caller, access.prompt(EXTRACTION_PROMPT))
    judge = VERIFIER_BY_PROTOCOL[protocol]
    verifier = judge(mode, access.caller, access.prompt(verify_prompt), KnowledgeLookup(kb))
    provenance.verifier = {"protocol": protocol}
    return JudgeSetup(verifier, extractor, provenance, access.caller, access.prompts)
