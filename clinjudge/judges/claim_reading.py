"""How the offline verifier reads a claim in its context: the claim's content words, the
transcript window around its evidence, and support from the note's other sections (SPEC §1
"cross-section verification": a claim may follow from facts the note states elsewhere, when
those facts are themselves stated in the transcript)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from clinjudge.grounding.evidence import Unit
from clinjudge.grounding.exam_systems import SYSTEMS
from clinjudge.grounding.note_input import NoteInput
from clinjudge.grounding.transcript_facts import TranscriptFacts
from clinjudge.text.normalize import content_token_spans, content_tokens

if TYPE_CHECKING:
    from clinjudge.judges.offline_rules import ClaimAnalysis

#: Words that carry polarity, not content: negation is checked by its own rule.
POLARITY_WORDS = frozenset(
    content_tokens("denies denied deny negative positive endorses endorsed reports no not without")
)
_LABEL = re.compile(r"^\s*(?:[-•*#]+\s*)?[A-Za-z][A-Za-z /&,()-]{0,50}:\s")


def claim_tokens(text: str) -> list[tuple[str, int, int]]:
    """Content tokens of a claim with their spans; polarity words and a leading list label
    ("Medical Treatment:", "Cardiovascular:") are left out — they structure the note, they
    state nothing."""
    label = _LABEL.match(text)
    skip = label.end() if label and len(label.group().split()) <= 7 else 0
    return [
        (token, start, end)
        for token, start, end in content_token_spans(text)
        if start >= skip and token not in POLARITY_WORDS
    ]


def exam_word_spans(analysis: ClaimAnalysis, systems: list[str]) -> list[tuple[int, int]]:
    """Spans of the claim's examination words of these systems ("wheezes", "rhonchi")."""
    words = set().union(*(SYSTEMS[name].claim_words for name in systems))
    return [(start, end) for token, start, end in analysis.tokens if token in words]


def cross_section(analysis: ClaimAnalysis, note: NoteInput, pool: set[str], cfg) -> str | None:
    """Support from transcript-grounded facts of the note's *other* sections (SPEC §1)."""
    extended = pool | words_outside(note, analysis.claim.section, cfg.note_fact_coverage)
    covered = analysis.coverage(extended)
    if covered >= cfg.lexical_coverage and analysis.coverage(pool) < covered:
        return f"follows from facts stated elsewhere in the note ({covered:.0%} of its words)"
    return None


def note_facts(note: NoteInput, threshold: float) -> list[tuple[str, set[str]]]:
    """Sentences of the note whose words the transcript states (cached per note)."""
    if note.grounded_sentences is not None:
        return note.grounded_sentences
    facts = next(iter(note.facts.values()), None)
    tokens = facts.tokens if facts is not None else set()
    grounded = []
    for claim in note.sentence_claims():
        words = set(content_tokens(claim.text)) - POLARITY_WORDS
        if words and sum(w in tokens for w in words) / len(words) >= threshold:
            grounded.append((claim.section, words))
    note.grounded_sentences = grounded
    return grounded


def words_outside(note: NoteInput, section: str, threshold: float) -> frozenset[str]:
    """The words of the note's grounded sentences (:func:`note_facts`) outside ``section``,
    cached per note and section: a long note's claims each read them, and uniting the
    sentences for every claim again grows with the square of the note's length."""
    held = note.grounded_outside.get(section)
    if held is None:
        words: set[str] = set()
        for other, sentence_words in note_facts(note, threshold):
            if other != section:
                words |= sentence_words
        held = note.grounded_outside[section] = frozenset(words)
    return held


def tokens_of(units: list[Unit]) -> set[str]:
    return set().union(*(u.tokens for u in units)) if units else set()


def widen(facts: TranscriptFacts, units: list[Unit]) -> list[Unit]:
    seen: dict[int, Unit] = {}
    for unit in units:
        for u in facts.index.window(unit, before=1, after=1):
            seen[u.index] = u
    return [seen[i] for i in sorted(seen)]


def max_cosine(facts: TranscriptFacts, window: list[Unit], vector: np.ndarray | None) -> float:
    if vector is None or not window:
        return 0.0
    sims = facts.index.cosine(vector)
    return float(max(sims[u.index] for u in window)) if len(sims) else 0.0
