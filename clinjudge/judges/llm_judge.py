"""The LLM backend of the SOAP judge: one structured call per batch of claims (SPEC §1).

Each call opens with what every call about the note shares (:mod:`.note_context`): the
instructions, the answer's form, the turn-numbered transcript and the note grouped by SOAP section
(cross-section verification); it ends with the batch's claims, each with the turns to read first
and its knowledge entries -- so a server reuses the prefix from one batch to the next. The answer
is small: a tier, and only for tiers 4–5 a short reason, the turns that decide it, a severity and a
harm category. The server is asked to follow a schema that admits exactly the claim ids of the
batch, each once, and only the mode's tiers (:func:`verdict_schema`). The reply is read strictly: a
verdict whose tier does not exist in the mode, or a claim the model skipped, is a `ParseFailure`
for that claim — never a guessed verdict. Claims a reply missed are asked again in smaller batches,
down to one claim a call (a small model often answers only the first claims of a batch); what even
a one-claim call cannot answer stays a recorded parse failure.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar, get_args

from pydantic import BaseModel, Field

from clinjudge.grounding.evidence import SentenceIndex, transcript_index
from clinjudge.grounding.note_input import NoteInput
from clinjudge.grounding.quotes import locate_quote
from clinjudge.judges.base import failure_for_all
from clinjudge.judges.knowledge_context import KnowledgeLookup
from clinjudge.judges.note_context import (
    look_first,
    numbered_transcript,
    turn_evidence,
    turn_list,
)
from clinjudge.judges.severity import rate_harm
from clinjudge.judges.tiers import normalize_subtype, tier_allowed
from clinjudge.llm import StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.types import (
    TIERS_BY_MODE,
    CallError,
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
#: Sentences retrieved per claim; their turns (and the turns before them) are read first.
CANDIDATES_PER_CLAIM = 3
#: Longest reason a server is asked for, and most turns cited (tiers 4–5 only).
REASON_CHARS = 100
MOST_TURNS = 3
#: The schema of a flag's small answer beyond its label or tier: a short reason and the turns.
FLAG_FIELDS: dict[str, dict] = {
    "reason": {"type": "string", "maxLength": REASON_CHARS},
    "turns": {"type": "array", "items": {"type": "integer", "minimum": 1}, "maxItems": MOST_TURNS},
}


class LLMVerdictItem(BaseModel):
    """One claim's answer. ``reason`` and ``turns`` are asked for tiers 4–5 only;
    ``subtype``, ``rationale`` and ``evidence`` (quotes) are read when a reply gives them (the
    prompts before issue 38 asked for them; a user's prompt may), never asked for."""

    claim_id: str
    tier: int
    reason: str = ""
    turns: list[int] = Field(default_factory=list)
    subtype: str | None = None
    rationale: str = ""
    evidence: list[str] = Field(default_factory=list)
    #: Tiers 4–5: the model's severity and harm category. A missing or unknown value is rated
    #: by the offline rules instead (:mod:`.severity`); it never fails the verdict.
    severity: str | None = None
    harm_category: str | None = None


class LLMVerdicts(BaseModel):
    verdicts: list[LLMVerdictItem]


@dataclass
class ModelVerifier:
    """What a verifier on the LLM backend holds: its mode, the caller, its prompt and the
    knowledge entries it hands the model."""

    backend: ClassVar[str] = "llm"
    mode: Mode
    caller: StructuredCaller
    prompt: Prompt
    knowledge: KnowledgeLookup | None = None


class LLMJudge(ModelVerifier):
    """Verifies batches of claims with a chat model through `StructuredCaller`."""

    async def verify(self, claims: list[Claim], note: NoteInput) -> list[Outcome]:
        context, payloads, entries = self._inputs(claims, note)
        outcomes: dict[str, Outcome] = {}
        await self._ask(claims, context, payloads, entries, note, outcomes)
        return [outcomes[c.id] for c in claims]

    def planned(self, claims: list[Claim], note: NoteInput) -> list[str]:
        """The prompt :meth:`verify` sends first for ``claims`` (re-asks of claims a reply
        misses are not foreseen), as the caller renders it -- no call is made."""
        context, payloads, _ = self._inputs(claims, note)
        ids = tuple(c.id for c in claims)
        schema = verdict_schema(ids, self.mode)
        return [self.caller.rendered(self.prompt, self._variables(ids, context, payloads), schema)]

    def _inputs(self, claims: list[Claim], note: NoteInput) -> tuple[dict, dict, dict]:
        """The note's context, each claim's payload (candidates, knowledge) and entries."""
        if note.bm25_index is None:
            note.bm25_index = transcript_index(note.transcript, dense=False)
        index = note.bm25_index
        entries = {c.id: self.knowledge.entries(c.text) if self.knowledge else [] for c in claims}
        payloads = {c.id: self._claim_payload(c, index, entries[c.id]) for c in claims}
        context = {
            "transcript": numbered_transcript(note.transcript),
            "note_sections": note_by_section(note.note),
        }
        return context, payloads, entries

    @staticmethod
    def _variables(ids: Sequence[str], context: dict[str, str], payloads: dict) -> dict:
        """The note's context first, then the batch's claims, one JSON object a line."""
        claims = "\n".join(json.dumps(payloads[i], ensure_ascii=False) for i in ids)
        return {**context, "claims": claims}

    async def _ask(
        self,
        claims: list[Claim],
        context: dict[str, str],
        payloads: dict[str, dict],
        entries: dict[str, list],
        note: NoteInput,
        outcomes: dict[str, Outcome],
    ) -> None:
        """Ask for ``claims`` in one call; ask again for those the reply missed, in halves,
        down to one claim a call. A transport error is final (it was retried below)."""
        ids = [c.id for c in claims]
        result = await self.caller.call(
            self.prompt,
            self._variables(ids, context, payloads),
            LLMVerdicts,
            key=ids[0],
            wire_schema=verdict_schema(tuple(ids), self.mode),
        )
        if isinstance(result, CallError):
            outcomes.update((f.claim_id, f) for f in failure_for_all(claims, result))
            return
        if isinstance(result, ParseFailure):
            batch = {c.id: f for c, f in zip(claims, failure_for_all(claims, result), strict=True)}
        else:
            items: dict[str, LLMVerdictItem] = {}
            for item in result.verdicts:
                items.setdefault(item.claim_id.strip(), item)
            batch = {c.id: self._outcome(c, items.get(c.id), note, entries[c.id]) for c in claims}
        outcomes.update(batch)
        missed = [c for c in claims if isinstance(batch[c.id], ParseFailure)]
        if not missed or len(claims) == 1:
            return
        size = max(1, len(claims) // 2)
        for i in range(0, len(missed), size):
            await self._ask(missed[i : i + size], context, payloads, entries, note, outcomes)

    def _claim_payload(self, claim: Claim, index: SentenceIndex, entries: list) -> dict:
        payload: dict[str, Any] = {
            "id": claim.id,
            "section": claim.section,
            "text": claim.text,
            "read_first": turn_list(look_first(index, claim.text, k=CANDIDATES_PER_CLAIM)),
        }
        # the lexical check reads no other names (its prompt says so): none are sent
        wanted = self.knowledge is not None and entries and self.mode != "lexical"
        names = self.knowledge.brief(entries) if wanted else ""
        if names:
            payload["knowledge"] = names.splitlines()
        return payload

    def _outcome(self, claim: Claim, item, note: NoteInput, entries) -> Outcome:
        if item is None:
            return ParseFailure(claim_id=claim.id, reason="model returned no verdict for claim")
        if not tier_allowed(self.mode, item.tier):
            return ParseFailure(
                claim_id=claim.id,
                reason=f"tier {item.tier} does not exist in {self.mode} mode",
                raw=item.model_dump_json()[:2000],
            )
        flagged = item.tier >= 4
        quotes = [locate_quote(note.transcript_text, q) for q in item.evidence if q.strip()]
        verdict = Verdict(
            claim_id=claim.id,
            tier=item.tier,
            subtype=normalize_subtype(item.tier, item.subtype),
            rationale=(item.rationale or (item.reason if flagged else "")).strip(),
            evidence=(turn_evidence(note.transcript, item.turns) if flagged else []) + quotes,
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


@cache
def verdict_schema(ids: tuple[str, ...], mode: Mode) -> dict[str, Any]:
    """The JSON schema a server is asked to follow for one batch: :class:`LLMVerdicts` with
    ``claim_id`` one of ``ids``, ``tier`` one of the mode's tiers (both required), the small
    answer's optional fields of a flag (a short reason, at most three turns, the severity and
    harm category), and exactly ``len(ids)`` verdicts (a grammar-constrained server cannot skip
    or invent a claim)."""
    schema = copy.deepcopy(LLMVerdicts.model_json_schema())
    item = schema["$defs"]["LLMVerdictItem"]
    item["required"] = ["claim_id", "tier"]
    item["properties"] = {
        "claim_id": {"type": "string", "enum": list(ids)},
        "tier": {"type": "integer", "enum": sorted(TIERS_BY_MODE[mode])},
        **copy.deepcopy(FLAG_FIELDS),
        "severity": {"type": "string", "enum": sorted(SEVERITIES)},
        "harm_category": {"type": "string", "enum": sorted(HARM_CATEGORIES)},
    }
    verdicts = schema["properties"]["verdicts"]
    verdicts["minItems"] = verdicts["maxItems"] = len(ids)
    return schema


def note_by_section(note: Note) -> str:
    """The note's text grouped under its SOAP class and original header."""
    blocks = []
    for section in note.sections:
        body = note.text[section.start : section.end].strip()
        if body:
            title = section.soap.upper() + (f" — {section.header}" if section.header else "")
            blocks.append(f"[{title}]\n{body}")
    return "\n\n".join(blocks) or note.text
