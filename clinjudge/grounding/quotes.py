"""Where a quoted string stands: a model's evidence quote in the transcript, an extracted
claim's quote in the note (its span and section).

Both go exact, then case-insensitive (:func:`clinjudge.text.quotes.find_verbatim`), then fuzzy
(rapidfuzz ``partial_ratio``): a transcript quote aligns at ≥ :data:`QUOTE_MATCH_SCORE`; a claim
quote that is not verbatim takes the note sentence that best contains it, at ≥
:data:`SENTENCE_MATCH_SCORE`. What cannot be found is reported as such, never guessed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel
from rapidfuzz import fuzz

from clinjudge.text.quotes import find_verbatim
from clinjudge.text.sentences import split_sentences
from clinjudge.types import Claim, Evidence, Note, Section, SoapSection

#: Minimum partial-ratio for a quoted evidence string to be located in the transcript.
QUOTE_MATCH_SCORE = 90.0
#: Minimum partial-ratio for a claim's quote to be anchored on a note sentence.
SENTENCE_MATCH_SCORE = 85.0


class ExtractedClaim(BaseModel):
    text: str
    section: Literal["subjective", "objective", "assessment", "plan"] | None = None
    quote: str


def locate_quote(transcript: str, quote: str) -> Evidence:
    """The transcript span of a quoted string: exact, case-insensitive, then fuzzy alignment.

    A quote that cannot be found keeps ``start = end = -1`` so that readers see the model cited
    something the transcript does not contain.
    """
    quote = quote.strip()
    found = find_verbatim(transcript, quote)
    if found:
        return Evidence(source="transcript", start=found[0], end=found[1], text=quote)
    alignment = fuzz.partial_ratio_alignment(quote.lower(), transcript.lower())
    if alignment is not None and alignment.score >= QUOTE_MATCH_SCORE:
        start, end = alignment.dest_start, alignment.dest_end
        return Evidence(source="transcript", start=start, end=end, text=transcript[start:end])
    return Evidence(source="transcript", start=-1, end=-1, text=quote)


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
    if best is None or best_score < SENTENCE_MATCH_SCORE:
        return None
    return best.start, best.end
