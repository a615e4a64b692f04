"""Claim extraction: the offline splitter, or an LLM that lists atomic claims (SPEC §1 "Claims").

Both return claims with a section and a character span in the note. LLM claims are anchored on
the verbatim quote they cite; a claim whose quote cannot be found in the note is kept out and
counted (``unaligned``), and a failed extraction call falls back to the splitter, recorded in the
returned info so that reports show it.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel

from clinjudge.grounding.note_input import NoteInput
from clinjudge.grounding.quotes import ExtractedClaim, anchor_claims
from clinjudge.llm import StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.types import Claim


class ClaimExtractor(Protocol):
    method: str

    async def extract(self, note: NoteInput) -> tuple[list[Claim], dict]:
        """Claims in note order, and an info dict (method, failure, counts)."""
        ...


class SplitterExtractor:
    """Sentence-level claims from the offline splitter (deterministic, no model)."""

    method = "splitter"

    async def extract(self, note: NoteInput) -> tuple[list[Claim], dict]:
        claims = note.sentence_claims()
        return claims, {"method": self.method, "failure": None, "n_claims": len(claims)}


class ExtractedClaims(BaseModel):
    claims: list[ExtractedClaim]


class LLMExtractor:
    """Atomic claims from the ``soap.claim_extraction`` prompt, anchored on their quotes."""

    method = "llm"

    def __init__(self, caller: StructuredCaller, prompt: Prompt) -> None:
        self.caller = caller
        self.prompt = prompt
        self.fallback = SplitterExtractor()

    async def extract(self, note: NoteInput) -> tuple[list[Claim], dict]:
        result = await self.caller.call(
            self.prompt, {"note": note.note_text}, ExtractedClaims, key="extraction"
        )
        if not isinstance(result, ExtractedClaims):
            claims, _ = await self.fallback.extract(note)
            return claims, {
                "method": "splitter",
                "failure": {"kind": result.kind, "reason": result.reason},
                "n_claims": len(claims),
            }
        claims, unaligned = anchor_claims(note.note, result.claims)
        return claims, {
            "method": self.method,
            "failure": None,
            "n_claims": len(claims),
            "unaligned": unaligned,
        }
