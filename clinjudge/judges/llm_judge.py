"""The LLM backend of the SOAP judge: one structured call per batch of claims (SPEC §1).

Each call carries the whole transcript, the note grouped by SOAP section (cross-section
verification), and per claim its retrieved transcript candidates and knowledge entries. The
reply is read strictly: a verdict whose tier does not exist in the mode, or a claim the model
skipped, is a `ParseFailure` for that claim — never a guessed verdict.
"""

from __future__ import annotations

import json
from typing import get_args

from pydantic import BaseModel, Field

from clinjudge.grounding.evidence import SentenceIndex, transcript_index
from clinjudge.grounding.note_input import NoteInput
from clinjudge.grounding.quotes import locate_quote
from clinjudge.judges.base import failure_for_all
from clinjudge.judges.knowledge_context import KnowledgeLookup
from clinjudge.judges.severity import rate_harm
from clinjudge.judges.tiers import normalize_subtype, tier_allowed
from clinjudge.llm import StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.types import (
    Claim,
    HarmCategory,
    Mode,
    Note,
    Outcome,
    ParseFailure,
    Severity,
    Verdict,
)

SEVERITIES = frozenset(get_args(Severity))
HARM_CATEGORIES = frozenset(get_args(HarmCategory))
#: Candidate transcript sentences shown to the model per claim.
CANDIDATES_PER_CLAIM = 3


class LLMVerdictItem(BaseModel):
    claim_id: str
    tier: int
    subtype: str | None = None
    rationale: str = ""
    evidence: list[str] = Field(default_factory=list)
    #: Tiers 4–5: the model's severity and harm category. A missing or unknown value is rated
    #: by the offline rules instead (:mod:`.severity`); it never fails the verdict.
    severity: str | None = None
    harm_category: str | None = None


class LLMVerdicts(BaseModel):
    verdicts: list[LLMVerdictItem]


class LLMJudge:
    """Verifies batches of claims with a chat model through `StructuredCaller`."""

    backend = "llm"

    def __init__(
        self,
        mode: Mode,
        caller: StructuredCaller,
        prompt: Prompt,
        knowledge: KnowledgeLookup | None = None,
    ) -> None:
        self.mode: Mode = mode
        self.caller = caller
        self.prompt = prompt
        self.knowledge = knowledge

    async def verify(self, claims: list[Claim], note: NoteInput) -> list[Outcome]:
        if note.bm25_index is None:
            note.bm25_index = transcript_index(note.transcript, dense=False)
        index = note.bm25_index
        entries = {c.id: self.knowledge.entries(c.text) if self.knowledge else [] for c in claims}
        payload = [self._claim_payload(c, index, entries[c.id]) for c in claims]
        variables = {
            "transcript": note.transcript_text,
            "note_sections": note_by_section(note.note),
            "claims": json.dumps(payload, ensure_ascii=False, indent=1),
        }
        result = await self.caller.call(self.prompt, variables, LLMVerdicts, key=claims[0].id)
        if not isinstance(result, LLMVerdicts):
            return list(failure_for_all(claims, result))
        items = {}
        for item in result.verdicts:
            items.setdefault(item.claim_id.strip(), item)
        return [
            self._outcome(c, items.get(c.id), note.transcript_text, entries[c.id]) for c in claims
        ]

    def _claim_payload(self, claim: Claim, index: SentenceIndex, entries: list) -> dict:
        hits = index.search(claim.text, k=CANDIDATES_PER_CLAIM)
        return {
            "id": claim.id,
            "section": claim.section,
            "text": claim.text,
            "candidate_evidence": [u.text for u, _ in hits],
            "knowledge": [self.knowledge.describe(e) for e in entries] if self.knowledge else [],
        }

    def _outcome(self, claim: Claim, item, transcript: str, entries) -> Outcome:
        if item is None:
            return ParseFailure(claim_id=claim.id, reason="model returned no verdict for claim")
        if not tier_allowed(self.mode, item.tier):
            return ParseFailure(
                claim_id=claim.id,
                reason=f"tier {item.tier} does not exist in {self.mode} mode",
                raw=item.model_dump_json()[:2000],
            )
        verdict = Verdict(
            claim_id=claim.id,
            tier=item.tier,
            subtype=normalize_subtype(item.tier, item.subtype),
            rationale=item.rationale.strip(),
            evidence=[locate_quote(transcript, q) for q in item.evidence if q.strip()],
            knowledge=entries,
            backend="llm",
        )
        if verdict.supported:
            return verdict
        if self.knowledge is not None:
            verdict = rate_harm(verdict, claim.text, claim.section, self.knowledge.kb)
        said: dict[str, str] = {}
        if item.severity in SEVERITIES:
            said["severity"] = item.severity
        if item.harm_category in HARM_CATEGORIES:
            said["harm_category"] = item.harm_category
        return verdict.model_copy(update=said) if said else verdict


def note_by_section(note: Note) -> str:
    """The note's text grouped under its SOAP class and original header."""
    blocks = []
    for section in note.sections:
        body = note.text[section.start : section.end].strip()
        if body:
            title = section.soap.upper() + (f" — {section.header}" if section.header else "")
            blocks.append(f"[{title}]\n{body}")
    return "\n\n".join(blocks) or note.text
