"""Build a configured fact-checker: decomposer, query writer, rater, search backend, provenance.

Backends (DESIGN "Two backends"): ``offline`` — sentence claims labelled by rules
(:mod:`.decompose`), claim + key-concept queries (:mod:`.queries`), the prose-evidence support
rule over the retrieved passages (:mod:`.rate`, :mod:`.support`); ``llm`` — the three
``factcheck.*`` prompts (:mod:`.llm`). ``auto`` picks ``llm`` when a model is configured. The
search backend is independent of both. ``evidence`` (:mod:`.evidence`): what each rating reads,
the claim's own passages (``per_claim``, prompt ``factcheck.rate``) or the answer's pooled
passages (``pooled``, prompt ``factcheck.rate_pooled``: the pool before the claim).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel

from clinjudge.errors import ConfigError
from clinjudge.factcheck.decompose import decompose
from clinjudge.factcheck.evidence import EVIDENCE_MODES
from clinjudge.factcheck.llm import LLMDecomposer, LLMQueryWriter, LLMRater
from clinjudge.factcheck.models import FactClaim
from clinjudge.factcheck.queries import offline_queries
from clinjudge.factcheck.rate import ClaimRater, OfflineRater
from clinjudge.grounding.backend import open_backend
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.search import SearchBackend, make_search
from clinjudge.types import CallError, ParseFailure

PROMPT_NAMES: tuple[str, ...] = ("factcheck.decompose", "factcheck.queries", "factcheck.rate")
#: The rating prompt of each evidence mode.
RATE_PROMPTS = {"per_claim": "factcheck.rate", "pooled": "factcheck.rate_pooled"}
DEFAULT_K = 5


class Decomposer(Protocol):
    async def decompose(
        self, answer: str, question: str | None
    ) -> tuple[list[FactClaim], dict[str, object]]: ...


class QueryWriter(Protocol):
    async def queries(
        self, claim: FactClaim, question: str | None
    ) -> list[str] | ParseFailure | CallError: ...


class OfflineDecomposer:
    method = "offline"

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    async def decompose(
        self, answer: str, question: str | None
    ) -> tuple[list[FactClaim], dict[str, object]]:
        claims = decompose(answer, self.kb, question)
        return claims, {"method": self.method, "failure": None, "n_claims": len(claims)}


class OfflineQueryWriter:
    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    async def queries(self, claim: FactClaim, question: str | None) -> list[str]:
        return offline_queries(claim.text, self.kb)


@dataclass
class FactcheckSetup:
    decomposer: Decomposer
    query_writer: QueryWriter
    rater: ClaimRater
    search: SearchBackend
    backend: str
    k: int = DEFAULT_K
    caller: StructuredCaller | None = None
    evidence: str = "per_claim"
    prompts: list[Prompt] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)


def build_factcheck(
    backend: str | None = None,
    *,
    settings: LLMSettings | None = None,
    chat_model: BaseChatModel | None = None,
    prompt_overrides: dict[str, Path] | None = None,
    knowledge: KnowledgeBase | None = None,
    cache: ResponseCache | None = None,
    search: str | None = None,
    search_url: str | None = None,
    corpus: str | Path | None = None,
    search_backend: SearchBackend | None = None,
    k: int = DEFAULT_K,
    evidence: str = "per_claim",
) -> FactcheckSetup:
    """A fact-checker on ``backend`` with the search backend ``search_backend`` or the one that
    ``search``/``search_url``/``corpus`` configure (:func:`clinjudge.search.make_search`).

    Raises:
        ConfigError: unknown backend, llm without a model, unknown prompt or search, missing key,
            an unknown evidence mode.
    """
    if k < 1:
        raise ConfigError(f"k must be at least 1, got {k}")
    if evidence not in EVIDENCE_MODES:
        raise ConfigError(
            f"unknown factcheck evidence {evidence!r}: use {' or '.join(EVIDENCE_MODES)}"
        )
    access = open_backend(
        backend,
        judge="the fact-checker",
        settings=settings,
        chat_model=chat_model,
        cache=cache,
        prompt_names=(*PROMPT_NAMES[:2], RATE_PROMPTS[evidence]),
        prompt_overrides=prompt_overrides,
        known_prompts=(*PROMPT_NAMES, RATE_PROMPTS["pooled"]),
    )
    kb = knowledge or KnowledgeBase.default()
    engine = search_backend or make_search(
        search, search_url=search_url, corpus=corpus, knowledge=kb
    )
    provenance: dict[str, Any] = {
        **access.provenance,
        "search": engine.describe(),
        "k": k,
        "evidence": evidence,
        "knowledge": {"digest": kb.digest},
    }
    if access.caller is None:
        return FactcheckSetup(
            OfflineDecomposer(kb),
            OfflineQueryWriter(kb),
            OfflineRater(kb),
            engine,
            "offline",
            k,
            evidence=evidence,
            provenance={**provenance, "rater": "prose-evidence support rule (factcheck.support)"},
        )
    caller = access.caller
    decompose_p, queries_p, rate_p = access.prompts
    return FactcheckSetup(
        LLMDecomposer(caller, decompose_p, kb),
        LLMQueryWriter(caller, queries_p),
        LLMRater(caller, rate_p),
        engine,
        "llm",
        k,
        caller,
        evidence,
        access.prompts,
        provenance,
    )
