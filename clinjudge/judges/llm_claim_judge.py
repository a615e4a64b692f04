"""The per-claim protocol of the LLM backend, for small models (SPEC §1; issue 38): one call
per claim, and every call about one note beginning with the same bytes.

A batch of claims asks a lot of a small local model (it answers the first claims and drops the
rest); here each call asks for one label. Each prompt (:mod:`.note_context`) is

    instructions · the answer's form · <conversation> numbered turns · <note> by section
        -- the same for every claim of the note: a server reuses it from the call before
    <sentence> the claim · the turns to read first · its knowledge terms
        -- the claim's own, a few dozen tokens

so the transcript and the note are read once per note by a server that keeps the previous
request's prefix (llama.cpp, vLLM, Ollama) or billed at the cached rate by a hosted API.

The answer is small: a label, and only for a flag a short reason and the numbers of the turns
that decide it (no echo of the claim, no reason for a supported claim):

    inference-aware:  stated → tier 1 when the turns to read first carry ≥ 80% of the claim's
                      content words (a quote, when a reply gives one, instead), else tier 2
                      (paraphrase); inferred → tier 3; unsupported → 4; contradicted → 5
    lexical:          stated → tier 1; unsupported → tier 4; contradicted → tier 5

A reply with another label, or none, is a recorded ``ParseFailure`` for the claim. The focused
layout of before (each claim with only the exchanges around it) is
:mod:`.llm_focused_judge` (``protocol="claim-focused"``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from clinjudge.grounding.evidence import transcript_index
from clinjudge.grounding.note_input import NoteInput
from clinjudge.grounding.quotes import locate_quote
from clinjudge.judges.llm_judge import (
    MOST_TURNS,
    REASON_CHARS,
    ModelVerifier,
    note_by_section,
)
from clinjudge.judges.note_context import (
    look_first,
    numbered_transcript,
    turn_evidence,
    turn_list,
    words_carried,
)
from clinjudge.judges.severity import rate_harm
from clinjudge.text.normalize import content_tokens
from clinjudge.types import CallError, Claim, Mode, Outcome, ParseFailure, Verdict

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
    """One claim's answer. ``quote`` is read when a reply gives one (the focused prompt asks
    for it; a user's prompt may), never asked for by the prefix-stable prompts."""

    label: Label
    reason: str = ""
    turns: list[int] = Field(default_factory=list)
    quote: str = ""


def answer_schema(mode: Mode) -> dict:
    """The schema sent for one claim: the mode's labels, the label first (its first token is
    the decision); a reason and the deciding turns, both optional (asked for flags only)."""
    return {
        "title": "ClaimAnswer",
        "type": "object",
        "properties": {
            "label": {"type": "string", "enum": list(LABELS_BY_MODE[mode])},
            "reason": {"type": "string", "maxLength": REASON_CHARS},
            "turns": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1},
                "maxItems": MOST_TURNS,
            },
        },
        "required": ["label"],
    }


class LLMClaimJudge(ModelVerifier):
    """Verifies claims one call each, every call of a note sharing its prefix."""

    async def verify(self, claims: list[Claim], note: NoteInput) -> list[Outcome]:
        return [await self._verify_one(c, note) for c in claims]

    def planned(self, claims: list[Claim], note: NoteInput) -> list[str]:
        """The prompts :meth:`verify` sends for ``claims``, one a claim, as the caller renders
        them -- no call is made."""
        schema = answer_schema(self.mode)
        return [self.caller.rendered(self.prompt, self._inputs(c, note)[0], schema) for c in claims]

    def _inputs(self, claim: Claim, note: NoteInput) -> tuple[dict, list, list[int]]:
        """The prompt's variables for ``claim`` (the note's first, the claim's last), its
        knowledge entries and the turns it is told to read first."""
        if note.evidence_index is None:
            note.evidence_index = transcript_index(note.transcript, dense=True)
        turns = look_first(note.evidence_index, claim.text)
        entries = self.knowledge.entries(claim.text) if self.knowledge else []
        variables = {
            "transcript": numbered_transcript(note.transcript),
            "note": note_by_section(note.note),
            "section": claim.section,
            "claim": claim.text,
            "turns": turn_list(turns),
            "knowledge": self.knowledge.brief(entries) if self.knowledge else "",
        }
        return variables, entries, turns

    async def _verify_one(self, claim: Claim, note: NoteInput) -> Outcome:
        variables, entries, turns = self._inputs(claim, note)
        result = await self.caller.call(
            self.prompt, variables, ClaimLabel, key=claim.id, wire_schema=answer_schema(self.mode)
        )
        if isinstance(result, ParseFailure | CallError):
            return result.model_copy(update={"claim_id": claim.id})
        if result.label not in LABELS_BY_MODE[self.mode]:
            return ParseFailure(
                claim_id=claim.id,
                reason=f"label {result.label!r} does not exist in {self.mode} mode",
                raw=result.model_dump_json()[:2000],
            )
        tier = self._tier(result, claim.text, note, turns)
        quote = result.quote.strip()
        flagged = result.label in FLAGS
        evidence = turn_evidence(note.transcript, result.turns) if flagged else []
        if quote:
            evidence.append(locate_quote(note.transcript_text, quote))
        reason = result.reason.strip() if flagged else ""
        verdict = Verdict(
            claim_id=claim.id,
            tier=tier,
            subtype=SUBTYPE_OF_TIER.get(tier, "contradiction"),
            rationale=f"per-claim check: {result.label}" + (f" ({reason})" if reason else ""),
            evidence=evidence,
            knowledge=entries,
            backend="llm",
        )
        if verdict.supported or self.knowledge is None:
            return verdict
        return rate_harm(verdict, claim.text, claim.section, self.knowledge.kb)

    def _tier(self, result: ClaimLabel, claim: str, note: NoteInput, turns: list[int]) -> int:
        if result.label != "stated":
            return TIER_OF_LABEL[result.label]
        if self.mode == "lexical":
            return 1
        if result.quote.strip():
            return 1 if quote_carries(claim, result.quote) else 2
        carried = words_carried(claim, note.transcript, turns)
        return 1 if carried >= RESTATEMENT_COVERAGE else 2


def quote_carries(claim: str, quote: str) -> bool:
    """Whether ``quote`` carries :data:`RESTATEMENT_COVERAGE` of ``claim``'s content words."""
    wanted = set(content_tokens(claim))
    said = set(content_tokens(quote))
    return (len(wanted & said) / len(wanted) if wanted else 1.0) >= RESTATEMENT_COVERAGE
