"""Claim extraction: the offline splitter, or an LLM that lists atomic claims (SPEC §1 "Claims").

Both return claims with a section and a character span in the note. LLM claims are anchored on
the verbatim quote they cite; a claim whose quote cannot be found in the note is kept out and
counted (``unaligned``), and a failed extraction call falls back to the splitter, recorded in the
returned info so that reports show it.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel
from rapidfuzz import fuzz

from clinjudge.judges.base import NoteInput
from clinjudge.llm import StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.text.claims import split_claims
from clinjudge.text.quotes import find_verbatim
from clinjudge.text.sentences import split_sentences
from clinjudge.types import Claim, Note, Section, SoapSection

#: Minimum rapidfuzz partial-ratio for a quote to be anchored on a note sentence.
MIN_QUOTE_SCORE = 85.0


class ClaimExtractor(Protocol):
    method: str

    async def extract(self, note: NoteInput) -> tuple[list[Claim], dict]:
        """Claims in note order, and an info dict (method, failure, counts)."""
        ...


class SplitterExtractor:
    """Sentence-level claims from the offline splitter (deterministic, no model)."""

    method = "splitter"

    async def extract(self, note: NoteInput) -> tuple[list[Claim], dict]:
        claims = split_claims(note.note)
        return claims, {"method": self.method, "failure": None, "n_claims": len(claims)}


class ExtractedClaim(BaseModel):
    text: str
    section: Literal["subjective", "objective", "assessment", "plan"] | None = None
    quote: str


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


def anchor_claims(note: Note, extracted: list[ExtractedClaim]) -> tuple[list[Claim], int]:
    """Give each extracted claim the span of its quote (exact, then fuzzy sentence match)."""
    sentences = split_sentences(note.text)
    claims: list[Claim] = []
    unaligned = 0
    for item in extracted:
        span = _locate(note.text, item.quote, sentences)
        if span is None:
            unaligned += 1
            continue
        section = section_at(note, span[0])
        soap: SoapSection = section.soap if section else (item.section or "subjective")
        claims.append(
            Claim(
                id=f"c{len(claims) + 1}",
                text=item.text.strip(),
                section=soap,
                header=section.header if section else "",
                start=span[0],
                end=span[1],
            )
        )
    return claims, unaligned


def section_at(note: Note, offset: int) -> Section | None:
    """The section whose span holds ``offset`` (the last one starting at or before it)."""
    found = None
    for section in note.sections:
        if section.start <= offset:
            found = section
    return found


def _locate(text: str, quote: str, sentences) -> tuple[int, int] | None:
    """The quote's own span, else the note sentence that best contains it (fuzzy)."""
    quote = quote.strip()
    if not quote:
        return None
    found = find_verbatim(text, quote)
    if found:
        return found
    best, best_score = None, 0.0
    for sentence in sentences:
        score = fuzz.partial_ratio(quote.lower(), sentence.text.lower())
        if score > best_score:
            best, best_score = sentence, score
    if best is None or best_score < MIN_QUOTE_SCORE:
        return None
    return best.start, best.end
