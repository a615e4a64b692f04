"""What the perturbers read from a note and its transcript, each part parsed at most once.

The transcript side reuses the offline judge's fact extraction
(:func:`clinjudge.grounding.transcript_facts.build_transcript_facts`, without embeddings): per
sentence, the knowledge concepts with their assertion status (a doctor's question takes the
patient's yes/no), the quantities and the laterality mentions. A perturber only edits a detail
the transcript states (an error must contradict a stated fact; a rewrite must restate one), so
it asks the same questions of the transcript as the judge does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from clinjudge.grounding.transcript_facts import TranscriptFacts, build_transcript_facts
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.knowledge.concept import Mention
from clinjudge.text.laterality import Laterality
from clinjudge.text.negation import is_negated
from clinjudge.text.quantities import Quantity
from clinjudge.text.sections import segment_note
from clinjudge.text.sentences import split_sentences
from clinjudge.text.transcript import parse_transcript
from clinjudge.types import Section, Span


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """Case-insensitive, word-bounded pattern of ``phrase`` (any run of spaces between words)."""
    words = [re.escape(w) for w in phrase.split()]
    return re.compile(r"(?<![\w/-])" + r"\s+".join(words) + r"(?![\w/-])", re.IGNORECASE)


@dataclass
class NoteMaterial:
    """A note, its transcript and the knowledge base, with lazily parsed views of them."""

    note: str
    transcript: str
    kb: KnowledgeBase = field(repr=False)

    @cached_property
    def sections(self) -> list[Section]:
        return segment_note(self.note).sections

    @cached_property
    def sentences(self) -> list[Span]:
        """The note's sentences (:func:`split_sentences` over the whole note)."""
        return split_sentences(self.note)

    def sentence_at(self, position: int) -> Span | None:
        """The note sentence containing ``position`` (``None`` between sentences)."""
        return next((s for s in self.sentences if s.start <= position < s.end), None)

    def negated_in_note(self, start: int, end: int) -> bool:
        """Whether ``note[start:end]`` lies in a negation scope of its sentence ("no
        fracture"); ``False`` outside any sentence."""
        sentence = self.sentence_at(start)
        if sentence is None:
            return False
        return is_negated(sentence.text, start - sentence.start, end - sentence.start)

    @cached_property
    def note_mentions(self) -> list[Mention]:
        return self.kb.concepts_in(self.note)

    @cached_property
    def facts(self) -> TranscriptFacts:
        return build_transcript_facts(parse_transcript(self.transcript), self.kb, dense=False)

    @cached_property
    def transcript_concepts(self) -> frozenset[str]:
        """Canonical concept ids the transcript mentions (asserted, denied or asked about)."""
        return frozenset(self.facts.status)

    @cached_property
    def transcript_quantities(self) -> list[Quantity]:
        return [q for qs in self.facts.quantities for q in qs]

    @cached_property
    def transcript_lateralities(self) -> list[Laterality]:
        return [lat for lats in self.facts.lateralities for lat in lats]

    def transcript_says(self, phrase: str) -> bool:
        """Whether the transcript contains ``phrase`` as whole words (case-insensitive)."""
        return bool(phrase_pattern(phrase).search(self.transcript))

    def section_at(self, position: int) -> Section | None:
        """The section whose body contains ``position`` (``None`` in headers and gaps)."""
        return next((s for s in self.sections if s.start <= position < s.end), None)


@lru_cache(maxsize=16)
def _cached(note: str, transcript: str, kb: KnowledgeBase) -> NoteMaterial:
    return NoteMaterial(note, transcript, kb)


def material(note: str, transcript: str, kb: KnowledgeBase | None = None) -> NoteMaterial:
    """The shared :class:`NoteMaterial` of a (note, transcript) pair: every perturber applied
    to the same pair parses it once. ``kb`` defaults to :meth:`KnowledgeBase.default`."""
    return _cached(note, transcript, kb or KnowledgeBase.default())
