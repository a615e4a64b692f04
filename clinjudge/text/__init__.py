"""clinjudge.text: transcripts, SOAP sections, sentences, claims, negation, quantities, laterality
and the shared token normaliser (SPEC §1, "Claims" and "Facts"). No LangGraph, no network."""

from clinjudge.text.claims import split_claims
from clinjudge.text.laterality import Laterality, lateralities_conflict, laterality_mentions
from clinjudge.text.negation import (
    answer_polarity,
    history_or_hypothetical,
    is_negated,
    negated_spans,
)
from clinjudge.text.normalize import content_tokens, word_tokens
from clinjudge.text.quantities import Quantity, extract_quantities, quantities_agree
from clinjudge.text.sections import segment_note
from clinjudge.text.sentences import split_sentences
from clinjudge.text.transcript import TranscriptSentence, parse_transcript, transcript_sentences

__all__ = [
    "Laterality",
    "Quantity",
    "TranscriptSentence",
    "answer_polarity",
    "content_tokens",
    "extract_quantities",
    "history_or_hypothetical",
    "is_negated",
    "lateralities_conflict",
    "laterality_mentions",
    "negated_spans",
    "parse_transcript",
    "quantities_agree",
    "segment_note",
    "split_claims",
    "split_sentences",
    "transcript_sentences",
    "word_tokens",
]
