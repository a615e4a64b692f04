"""The prefix-stable per-claim protocol of the LLM backend (``protocol="claim-shared"``, SPEC §1;
issue 38): one call per claim, and every call about one note beginning with the same bytes.
Each prompt (:mod:`.note_context`) is

    instructions · the answer's form (and schema) · <conversation> numbered turns
        -- the same for every claim of the note: a server reuses it from the call before
    <sentence> the claim · the transcript sentences closest to it · its other names · the question
        -- the claim's own, about a hundred tokens

so the transcript is read once per note by a server that keeps the previous request's prefix
(llama.cpp, vLLM, Ollama) or billed at the cached rate by a hosted API. The note is not shown:
on the local 1.5B model it was read as the evidence ("not mentioned in the note") and 11 of
the first aci-demo note's 12 claims were flagged; the batch protocol, for larger models, shows
it (cross-section verification). The closest sentences keep the small model's focus (what the
focused layout gave it) at a fraction of the exchanges' tokens.

The answer is small: a label, and only for a flag a short reason and the numbers of the turns
that decide it (no echo of the claim, no reason for a supported claim):

    inference-aware:  stated → tier 1 when the closest sentences' turns carry ≥ 80% of the claim's
                      content words (a quote, when a reply gives one, instead), else tier 2
                      (paraphrase); inferred → tier 3; unsupported → 4; contradicted → 5
    lexical:          stated → tier 1; unsupported → tier 4; contradicted → tier 5

A reply with another label, or none, is a recorded ``ParseFailure`` for the claim. For a small
model, the focused layout (each claim with only the exchanges around it) reads better:
:mod:`.llm_claim_judge` (``protocol="claim"``, the default per-claim protocol).
"""

from __future__ import annotations

import copy

from clinjudge.grounding.evidence import transcript_index
from clinjudge.grounding.note_input import NoteInput
from clinjudge.grounding.quotes import locate_quote
from clinjudge.judges.llm_claim_judge import (
    FLAGS,
    LABELS_BY_MODE,
    RESTATEMENT_COVERAGE,
    TIER_OF_LABEL,
    ClaimLabel,
    label_outcome,
    quote_carries,
    unknown_label,
)
from clinjudge.judges.llm_judge import FLAG_FIELDS, ModelVerifier
from clinjudge.judges.note_context import (
    closest_lines,
    look_first,
    numbered_transcript,
    turn_evidence,
    words_carried,
)
from clinjudge.types import CallError, Claim, Mode, Outcome, ParseFailure


def answer_schema(mode: Mode) -> dict:
    """The schema sent for one claim: the mode's labels, the label first (its first token is
    the decision); a reason and the deciding turns, both optional (asked for flags only)."""
    return {
        "title": "ClaimAnswer",
        "type": "object",
        "properties": {
            "label": {"type": "string", "enum": list(LABELS_BY_MODE[mode])},
            **copy.deepcopy(FLAG_FIELDS),
        },
        "required": ["label"],
    }


class SharedClaimJudge(ModelVerifier):
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
        knowledge entries and the turns of its closest sentences."""
        if note.evidence_index is None:
            note.evidence_index = transcript_index(note.transcript, dense=True)
        turns = look_first(note.evidence_index, claim.text)
        entries = self.knowledge.entries(claim.text) if self.knowledge else []
        variables = {
            "transcript": numbered_transcript(note.transcript),
            "section": claim.section,
            "claim": claim.text,
            "closest": closest_lines(note.evidence_index, note.transcript, claim.text),
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
        unknown = unknown_label(claim, result, self.mode)
        if unknown is not None:
            return unknown
        tier = self._tier(result, claim.text, note, turns)
        quote = result.quote.strip()
        flagged = result.label in FLAGS
        evidence = turn_evidence(note.transcript, result.turns) if flagged else []
        if quote:
            evidence.append(locate_quote(note.transcript_text, quote))
        reason = result.reason.strip() if flagged else ""
        return label_outcome(claim, result.label, tier, reason, evidence, entries, self.knowledge)

    def _tier(self, result: ClaimLabel, claim: str, note: NoteInput, turns: list[int]) -> int:
        if result.label != "stated":
            return TIER_OF_LABEL[result.label]
        if self.mode == "lexical":
            return 1
        if result.quote.strip():
            return 1 if quote_carries(claim, result.quote) else 2
        carried = words_carried(claim, note.transcript, turns)
        return 1 if carried >= RESTATEMENT_COVERAGE else 2
