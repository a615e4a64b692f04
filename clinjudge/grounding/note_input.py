"""The two texts a claim is judged against, parsed once per note, and what the verifiers
derive from them once per note (indexes, transcript facts) so that a note's batches share it.
The derived fields are rebuilt on demand and never serialised."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clinjudge.text.claims import split_claims
from clinjudge.text.sections import segment_note
from clinjudge.text.transcript import parse_transcript
from clinjudge.types import Claim, Note, Transcript

if TYPE_CHECKING:
    from clinjudge.grounding.evidence import SentenceIndex
    from clinjudge.grounding.transcript_facts import TranscriptFacts


@dataclass
class NoteInput:
    transcript_text: str
    note_text: str
    transcript: Transcript = field(init=False)
    note: Note = field(init=False)
    #: Transcript facts, by whether their index has embeddings (the offline verifier).
    facts: dict[bool, TranscriptFacts] = field(default_factory=dict, repr=False)
    #: A BM25-only sentence index of the transcript (the LLM judge's candidate evidence).
    bm25_index: SentenceIndex | None = field(default=None, repr=False)
    #: A hybrid (BM25 + embeddings) sentence index (the LLM judge's per-claim evidence).
    evidence_index: SentenceIndex | None = field(default=None, repr=False)
    #: Whether every claim of the note has been embedded in one batch.
    note_encoded: bool = field(default=False, repr=False)
    #: The note's sentences whose words the transcript states: (SOAP section, content words).
    grounded_sentences: list[tuple[str, set[str]]] | None = field(default=None, repr=False)
    #: The words of those sentences outside each SOAP section (cross-section support).
    grounded_outside: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _sentences: list[Claim] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.transcript = parse_transcript(self.transcript_text)
        self.note = segment_note(self.note_text)

    def sentence_claims(self) -> list[Claim]:
        """The note's sentence-level claims (:func:`~clinjudge.text.claims.split_claims`),
        split once per note: the splitter's claims, the note's embedding batch and the
        cross-section facts all read them. A new list each call."""
        if self._sentences is None:
            self._sentences = split_claims(self.note)
        return list(self._sentences)
