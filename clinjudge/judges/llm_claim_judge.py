"""The per-claim protocol of the LLM backend, for small models (``protocol="claim"``, SPEC §1):
one call per claim, holding only the exchanges of the conversation around the claim's
best-matching sentences and the claim itself. Its calls share little but their instructions
(about half of each prompt), so a server re-reads most of every one; the prefix-stable per-claim
protocol, whose calls about one note all open with the whole transcript, is
:mod:`.llm_shared_claim_judge` (``claim-shared``). On the local Qwen2.5-Coder-1.5B model that one
reads worse (issue 38: every claim of the first aci-demo note flagged, against 6 of 12 here), so
this one stays the small models' protocol.

A batch of claims over the whole transcript asks a lot of a small local model (it answers the
first claims and drops the rest); here each call is short and asks for one label:

    inference-aware:  stated → tier 1 (restatement) when the quoted words carry the claim's
                      content words, else tier 2 (paraphrase); inferred → tier 3;
                      unsupported → tier 4; contradicted → tier 5
    lexical:          stated → tier 1; unsupported → tier 4; contradicted → tier 5

The evidence is :func:`~clinjudge.grounding.evidence.exchange_passages` over a hybrid (BM25 +
embedding) index of the transcript's sentences: each hit's whole turn, the turn before (the
question a "no" answers) and the turn after. A reply with another label, or none, is a recorded
``ParseFailure`` for the claim.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from clinjudge.grounding.evidence import exchange_passages, transcript_index
from clinjudge.grounding.note_input import NoteInput
from clinjudge.grounding.quotes import locate_quote
from clinjudge.judges.llm_judge import ModelVerifier
from clinjudge.judges.note_context import HITS_PER_CLAIM
from clinjudge.judges.severity import rate_harm
from clinjudge.text.normalize import content_tokens
from clinjudge.types import (
    CallError,
    Claim,
    Evidence,
    KnowledgeEntry,
    Mode,
    Outcome,
    ParseFailure,
    Verdict,
)

if TYPE_CHECKING:
    from clinjudge.judges.knowledge_context import KnowledgeLookup

#: Share of the claim's content words the evidence must carry for "stated" to be tier 1.
RESTATEMENT_COVERAGE = 0.8

Label = Literal["stated", "inferred", "unsupported", "contradicted"]
LABELS_BY_MODE: dict[str, tuple[str, ...]] = {
    "inference-aware": ("stated", "inferred", "unsupported", "contradicted"),
    "lexical": ("stated", "unsupported", "contradicted"),
}
FLAGS = ("unsupported", "contradicted")
TIER_OF_LABEL = {"inferred": 3, "unsupported": 4, "contradicted": 5}
SUBTYPE_OF_TIER = {1: "restatement", 2: "paraphrase", 3: "inference", 4: "no_basis"}


class ClaimLabel(BaseModel):
    """One claim's answer: a label and a quote (this protocol), or a label and, for a flag, a
    reason and turns (:mod:`.llm_shared_claim_judge`)."""

    label: Label
    reason: str = ""
    turns: list[int] = Field(default_factory=list)
    quote: str = ""


#: Longest quote a server is asked for (a small model otherwise copies whole passages).
QUOTE_CHARS = 120


def label_schema(mode: Mode) -> dict:
    """The schema sent for one claim: the mode's labels only, the label first (its first
    token is the decision), then a short quote."""
    return {
        "title": "ClaimLabel",
        "type": "object",
        "properties": {
            "label": {"type": "string", "enum": list(LABELS_BY_MODE[mode])},
            "quote": {"type": "string", "maxLength": QUOTE_CHARS},
        },
        "required": ["label", "quote"],
    }


class LLMClaimJudge(ModelVerifier):
    """Verifies claims one call each with a chat model through `StructuredCaller`."""

    async def verify(self, claims: list[Claim], note: NoteInput) -> list[Outcome]:
        if note.evidence_index is None:
            note.evidence_index = transcript_index(note.transcript, dense=True)
        return [await self._verify_one(c, note) for c in claims]

    def planned(self, claims: list[Claim], note: NoteInput) -> list[str]:
        """The prompts :meth:`verify` sends for ``claims``, one a claim, as the caller renders
        them -- no call is made."""
        if note.evidence_index is None:
            note.evidence_index = transcript_index(note.transcript, dense=True)
        schema = label_schema(self.mode)
        return [self.caller.rendered(self.prompt, self._inputs(c, note)[0], schema) for c in claims]

    def _inputs(self, claim: Claim, note: NoteInput) -> tuple[dict, list]:
        """The prompt's variables for ``claim`` and its knowledge entries."""
        passages = exchange_passages(
            note.transcript, note.evidence_index, claim.text, k=HITS_PER_CLAIM
        )
        entries = self.knowledge.entries(claim.text) if self.knowledge else []
        variables = {
            "evidence": "\n".join(passages) or "(nothing in the conversation matches)",
            "section": claim.section,
            "knowledge": "\n".join(self.knowledge.describe(e) for e in entries)
            if self.knowledge
            else "",
            "claim": claim.text,
        }
        return variables, entries

    async def _verify_one(self, claim: Claim, note: NoteInput) -> Outcome:
        variables, entries = self._inputs(claim, note)
        result = await self.caller.call(
            self.prompt, variables, ClaimLabel, key=claim.id, wire_schema=label_schema(self.mode)
        )
        if isinstance(result, ParseFailure | CallError):
            return result.model_copy(update={"claim_id": claim.id})
        unknown = unknown_label(claim, result, self.mode)
        if unknown is not None:
            return unknown
        tier = self._tier(result, claim.text)
        quote = result.quote.strip()
        evidence = [locate_quote(note.transcript_text, quote)] if quote else []
        detail = f"'{quote}'" if quote else ""
        return label_outcome(claim, result.label, tier, detail, evidence, entries, self.knowledge)

    def _tier(self, result: ClaimLabel, claim: str) -> int:
        if result.label != "stated":
            return TIER_OF_LABEL[result.label]
        if self.mode == "lexical":
            return 1
        return 1 if quote_carries(claim, result.quote) else 2


def quote_carries(claim: str, quote: str) -> bool:
    """Whether ``quote`` carries :data:`RESTATEMENT_COVERAGE` of ``claim``'s content words."""
    wanted = set(content_tokens(claim))
    said = set(content_tokens(quote))
    return (len(wanted & said) / len(wanted) if wanted else 1.0) >= RESTATEMENT_COVERAGE


def unknown_label(claim: Claim, result: ClaimLabel, mode: Mode) -> ParseFailure | None:
    """A reply whose label the mode does not have: a recorded parse failure, never a verdict."""
    if result.label in LABELS_BY_MODE[mode]:
        return None
    return ParseFailure(
        claim_id=claim.id,
        reason=f"label {result.label!r} does not exist in {mode} mode",
        raw=result.model_dump_json()[:2000],
    )


def label_outcome(
    claim: Claim,
    label: str,
    tier: int,
    detail: str,
    evidence: list[Evidence],
    entries: list[KnowledgeEntry],
    knowledge: KnowledgeLookup | None,
) -> Outcome:
    """The verdict of a per-claim answer (``detail``: the quote or reason it gave, or ``""``);
    a flag is rated for harm when the knowledge base is at hand (:mod:`.severity`)."""
    verdict = Verdict(
        claim_id=claim.id,
        tier=tier,
        subtype=SUBTYPE_OF_TIER.get(tier, "contradiction"),
        rationale=f"per-claim check: {label}" + (f" ({detail})" if detail else ""),
        evidence=evidence,
        knowledge=entries,
        backend="llm",
    )
    if verdict.supported or knowledge is None:
        return verdict
    return rate_harm(verdict, claim.text, claim.section, knowledge.kb)
