"""The fact-checker's LLM backend (SPEC §3): decomposition + labelling, queries, rating.

Calls, all through :class:`~clinjudge.llm.StructuredCaller` (schema first, tolerant parse, one
re-ask, then a recorded failure): one ``factcheck.decompose`` call per answer; per relevant claim
one ``factcheck.queries`` call and one ``factcheck.rate`` call — so at most 2 + 1/n_relevant ≤ 3
calls per relevant claim without re-asks (SAFE makes about 8). A rating that says the evidence did
not address the claim is ``not_supported`` whatever verdict came with it (SPEC §3 step 4).

Failures: an unusable decomposition falls back to the offline decomposition and labelling
(recorded in the result's ``decomposition`` info); an unusable query or rating reply is a
``ParseFailure`` (a failed call a ``CallError``) for that claim — counted and excluded, never
guessed. A decomposed claim whose quote cannot be found in the answer is dropped and counted
(``unaligned``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from clinjudge.factcheck.decompose import decompose
from clinjudge.factcheck.models import ClaimRating, FactClaim
from clinjudge.grounding.quotes import ExtractedClaim, anchor_claims
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.search.base import Passage
from clinjudge.text.sections import segment_note
from clinjudge.types import CallError, ParseFailure

MAX_QUERIES = 3
NO_QUESTION = "(no question given)"


class DecomposedClaim(BaseModel):
    text: str = Field(description="the atomic, self-contained claim")
    quote: str = Field(description="verbatim piece of the answer the claim comes from")
    label: Literal["relevant", "context", "meta"]


class Decomposition(BaseModel):
    claims: list[DecomposedClaim]


class SearchQueries(BaseModel):
    queries: list[str] = Field(min_length=1)


class RatingReply(BaseModel):
    addressed: bool = Field(description="does any passage address the claim at all")
    verdict: Literal["supported", "not_supported"]
    evidence_ids: list[str] = []
    rationale: str = ""


class LLMDecomposer:
    """One call per answer: atomic claims with labels, anchored on their quotes."""

    method = "llm"

    def __init__(self, caller: StructuredCaller, prompt: Prompt, kb: KnowledgeBase) -> None:
        self.caller = caller
        self.prompt = prompt
        self.kb = kb

    async def decompose(
        self, answer: str, question: str | None
    ) -> tuple[list[FactClaim], dict[str, object]]:
        reply = await self.caller.call(
            self.prompt,
            {"answer": answer, "question": question or NO_QUESTION},
            Decomposition,
            key="decomposition",
        )
        if not isinstance(reply, Decomposition):
            claims = decompose(answer, self.kb, question)
            failure = {"kind": reply.kind, "reason": reply.reason}
            return claims, {"method": "offline", "failure": failure, "n_claims": len(claims)}
        note = segment_note(answer)
        claims: list[FactClaim] = []
        unaligned = 0
        for item in reply.claims:
            anchored, missed = anchor_claims(
                note, [ExtractedClaim(text=item.text, quote=item.quote)]
            )
            unaligned += missed
            if not anchored or not item.text.strip():
                continue
            claims.append(
                FactClaim(
                    id=f"c{len(claims) + 1}",
                    text=item.text.strip(),
                    start=anchored[0].start,
                    end=anchored[0].end,
                    label=item.label,
                    label_reason="labelled by the model",
                )
            )
        info = {"method": self.method, "failure": None, "n_claims": len(claims)}
        return claims, {**info, "unaligned": unaligned}


class LLMQueryWriter:
    """One call per relevant claim: 1–3 targeted search queries."""

    def __init__(self, caller: StructuredCaller, prompt: Prompt) -> None:
        self.caller = caller
        self.prompt = prompt

    async def queries(
        self, claim: FactClaim, question: str | None
    ) -> list[str] | ParseFailure | CallError:
        reply = await self.caller.call(
            self.prompt,
            {"claim": claim.text, "question": question or NO_QUESTION},
            SearchQueries,
            key=claim.id,
        )
        if not isinstance(reply, SearchQueries):
            return reply
        queries = list(dict.fromkeys(" ".join(q.split()) for q in reply.queries if q.strip()))
        if not queries:
            return ParseFailure(claim_id=claim.id, reason="no non-empty query in the reply")
        return queries[:MAX_QUERIES]


class LLMRater:
    """One call per relevant claim: the verdict from the numbered evidence passages alone."""

    backend = "llm"

    def __init__(self, caller: StructuredCaller, prompt: Prompt) -> None:
        self.caller = caller
        self.prompt = prompt

    async def rate(
        self, claim: FactClaim, passages: list[Passage], question: str | None = None
    ) -> ClaimRating | ParseFailure | CallError:
        evidence = "\n\n".join(
            f"[{p.id}]{' ' + p.title if p.title else ''}\n{' '.join(p.text.split())}"
            for p in passages
        )
        reply = await self.caller.call(
            self.prompt,
            {"claim": claim.text, "evidence": evidence or "(no passage was found)"},
            RatingReply,
            key=claim.id,
        )
        if not isinstance(reply, RatingReply):
            return reply
        known = {p.id for p in passages}
        return ClaimRating(
            verdict=reply.verdict if passages and reply.addressed else "not_supported",
            checkable=reply.addressed and bool(passages),
            rationale=reply.rationale,
            cited=[i for i in reply.evidence_ids if i in known],
        )
