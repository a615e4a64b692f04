"""Length bounds of the text layer (issue 35, :mod:`clinjudge.text.bounds`): long sentences are
read in windows, a huge run of letters is no word, and every reading of text costs time in
proportion to its length — hostile strings of 30 kB finish each entry point of the layer within
a budget that a quadratic reading (seconds at 10 kB, minutes at 30 kB) cannot meet."""

from __future__ import annotations

import time

import pytest
import regex_audit as audit

from clinjudge.knowledge.normalize import tokenize
from clinjudge.text.bounds import MAX_SENTENCE_CHARS, MAX_WORD_CHARS, windows
from clinjudge.text.claims import split_claims
from clinjudge.text.laterality import laterality_mentions
from clinjudge.text.negation import answer_polarity, history_or_hypothetical, negated_spans
from clinjudge.text.normalize import content_tokens
from clinjudge.text.numbers import spoken_numbers
from clinjudge.text.quantities import extract_quantities
from clinjudge.text.sections import segment_note
from clinjudge.text.sentences import split_sentences
from clinjudge.text.transcript import parse_transcript, transcript_sentences

#: Seconds one entry point may take on one 30 kB hostile string (a loaded machine included).
BUDGET = 8.0
SIZE = 30_000

ENTRY_POINTS = {
    "negation": negated_spans,
    "context": lambda t: history_or_hypothetical(t, 0, 1),
    "answer": answer_polarity,
    "sentences": split_sentences,
    "claims": lambda t: split_claims(segment_note(t)),
    "quantities": extract_quantities,
    "laterality": laterality_mentions,
    "tokens": content_tokens,
    "transcript": lambda t: transcript_sentences(parse_transcript(t)),
    "numbers": spoken_numbers,
    "lexicon tokens": tokenize,
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_entry_point_is_linear_on_hostile_text(entry):
    read = ENTRY_POINTS[entry]
    for name, text in audit.HOSTILE.items():
        long = audit._fill(text[:200], SIZE)
        started = time.perf_counter()
        read(long)
        seconds = time.perf_counter() - started
        assert seconds < BUDGET, f"{entry} on 30 kB of {name!r}: {seconds:.1f} s"


def test_windows_cut_at_blanks_and_cover_the_text():
    text = ("chest pain " * 4000)[: 2 * MAX_SENTENCE_CHARS + 1000]
    pieces = windows(text)
    assert pieces[0][0] == 0 and pieces[-1][1] == len(text)
    assert all(b - a <= MAX_SENTENCE_CHARS for a, b in pieces)
    assert all(a == previous for (_, previous), (a, _) in zip(pieces, pieces[1:], strict=False))
    assert all(text[b] == " " for _, b in pieces[:-1])  # no word cut
    glued = "a" * (MAX_SENTENCE_CHARS + 10)
    assert windows(glued) == [(0, MAX_SENTENCE_CHARS), (MAX_SENTENCE_CHARS, len(glued))]


def test_a_line_without_sentence_end_becomes_bounded_sentences():
    line = "no chest pain or shortness of breath and " * (MAX_SENTENCE_CHARS // 10)  # no full stop
    spans = split_sentences(line)
    assert len(spans) == 5
    assert all(len(s.text) <= MAX_SENTENCE_CHARS for s in spans)
    assert all(line[s.start : s.end] == s.text for s in spans)
    assert not any(s.text[0].isspace() or s.text[-1].isspace() for s in spans)


def test_a_long_line_of_sentences_is_cut_after_a_sentence_end():
    line = "Dr. Smith saw the patient. " * 400  # 400 sentence ends on one line
    sentences = [s.text for s in split_sentences(line)]
    assert set(sentences) == {"Dr. Smith saw the patient."}  # never cut after "Dr."


def test_negation_reads_a_long_text_window_by_window():
    item = "denies chest pain, fever, "
    text = item * (MAX_SENTENCE_CHARS // len(item) + 20) + "and reports cough"
    spans = negated_spans(text)
    assert all(b - a <= MAX_SENTENCE_CHARS for a, b in spans)
    cough = text.index("cough")
    assert not any(a <= cough < b for a, b in spans)
    fever = text.index("fever", MAX_SENTENCE_CHARS - 500)
    assert any(a <= fever < b for a, b in spans)


def test_a_list_read_once_gives_each_trigger_the_same_scope():
    text = "no fever , no chills , no cough , no nausea"
    spans = negated_spans(text)
    assert spans[0] == (3, len(text))  # the first "no" reaches the end of the list
    assert all(b == len(text) for _, b in spans)


def test_a_run_longer_than_a_word_is_no_lexicon_token():
    glued = "x" * (MAX_WORD_CHARS + 1)
    tokens = tokenize(f"chest {glued} pain")
    assert [t.norm for t in tokens] == ["chest", "pain"]
    assert tokens[0].segment != tokens[1].segment  # "chest pain" is not read across it
    assert [t.norm for t in tokenize("x" * MAX_WORD_CHARS)] == ["x" * MAX_WORD_CHARS]
