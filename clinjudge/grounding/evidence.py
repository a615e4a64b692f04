"""Evidence retrieval over transcript sentences: BM25 (bm25s) fused with dense cosine similarity.

Score of a sentence s for a query q (SPEC §1 "Facts": evidence comes from the whole transcript):
    hybrid(q, s) = w · bm25(q, s) / max_s' bm25(q, s') + (1 − w) · max(0, cos(e(q), e(s)))
with w = 0.5 when embeddings are on, 1 otherwise. Units are transcript sentences; a hit is
widened to its neighbours when read, because a doctor's question and the patient's "no" are
one fact spread over two turns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import bm25s
import numpy as np

from clinjudge import embeddings
from clinjudge.text.normalize import content_tokens
from clinjudge.text.transcript import transcript_sentences
from clinjudge.types import Evidence, Transcript


@dataclass(frozen=True)
class Unit:
    """A retrievable sentence with its offsets in the source text."""

    index: int
    start: int
    end: int
    text: str
    speaker: str = "unknown"
    turn: int = -1
    tokens: frozenset[str] = field(default_factory=frozenset)


class SentenceIndex:
    """Hybrid lexical + dense search over a fixed list of sentence units."""

    def __init__(self, units: list[Unit], *, dense: bool = True, bm25_weight: float = 0.5) -> None:
        self.units = units
        self.dense = dense and bool(units)
        self.bm25_weight = bm25_weight if self.dense else 1.0
        self._bm25 = bm25s.BM25()
        corpus = [sorted(u.tokens) or ["∅"] for u in units]
        self._bm25.index(corpus or [["∅"]], show_progress=False)
        self._vectors = embeddings.encode([u.text for u in units]) if self.dense else None

    def scores(self, query: str, query_vector: np.ndarray | None = None) -> np.ndarray:
        if not self.units:
            return np.zeros(0)
        tokens = content_tokens(query)
        lexical = np.asarray(self._bm25.get_scores(tokens), dtype=np.float64) if tokens else None
        if lexical is None or lexical.max() <= 0:
            lexical = np.zeros(len(self.units))
        else:
            lexical = lexical / lexical.max()
        if self._vectors is None:
            return lexical
        if query_vector is None:
            query_vector = embeddings.encode([query])[0]
        dense = np.clip(self._vectors @ query_vector, 0.0, None)
        return self.bm25_weight * lexical + (1 - self.bm25_weight) * dense

    def cosine(self, query_vector: np.ndarray) -> np.ndarray:
        """Cosine similarity of a query embedding to every unit (zeros without embeddings)."""
        if self._vectors is None:
            return np.zeros(len(self.units))
        return self._vectors @ query_vector

    def search(
        self, query: str, k: int = 5, query_vector: np.ndarray | None = None
    ) -> list[tuple[Unit, float]]:
        scores = self.scores(query, query_vector)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.units[i], float(scores[i])) for i in order if scores[i] > 0]

    def window(self, unit: Unit, before: int = 1, after: int = 1) -> list[Unit]:
        lo = max(0, unit.index - before)
        hi = min(len(self.units), unit.index + after + 1)
        return self.units[lo:hi]


def transcript_index(transcript: Transcript, *, dense: bool = True) -> SentenceIndex:
    """Index the sentences of every turn of a transcript."""
    units = [
        Unit(
            index=i,
            start=s.start,
            end=s.end,
            text=s.text,
            speaker=s.speaker,
            turn=s.turn_index,
            tokens=frozenset(content_tokens(s.text)),
        )
        for i, s in enumerate(transcript_sentences(transcript))
    ]
    return SentenceIndex(units, dense=dense)


def as_evidence(unit: Unit, score: float | None = None, source: str = "transcript") -> Evidence:
    return Evidence(source=source, start=unit.start, end=unit.end, text=unit.text, score=score)


#: Characters of a turn shown around a retrieved sentence, and of a turn shown as context (the
#: question before a hit, the answer after it); long dictations are cut. Small: a local model
#: reads about 36 prompt tokens a second on two cores.
TURN_CHARS = 450
CONTEXT_CHARS = 250


def exchange_passages(
    transcript: Transcript, index: SentenceIndex, query: str, k: int = 3
) -> list[str]:
    """The exchanges around the ``k`` sentences that best match ``query``: each hit's whole turn
    with the turn before it (the question a "no" answers) and the turn after it (the answer to
    a question), in transcript order, one ``"[speaker] text"`` line per turn, ``"…"`` between
    exchanges that are not adjacent. A hit's turn longer than :data:`TURN_CHARS` is cut around
    its hits; a context turn longer than :data:`CONTEXT_CHARS` keeps its end before a hit and
    its start after one."""
    hits = index.search(query, k=k)
    hit_spans: dict[int, list[tuple[int, int]]] = {}
    for unit, _ in hits:
        hit_spans.setdefault(unit.turn, []).append((unit.start, unit.end))
    shown = sorted(
        {t + d for t in hit_spans for d in (-1, 0, 1) if 0 <= t + d < len(transcript.turns)}
    )
    lines: list[str] = []
    previous = None
    for t in shown:
        if previous is not None and t != previous + 1:
            lines.append("…")
        turn = transcript.turns[t]
        if t in hit_spans:
            spans, limit = hit_spans[t], TURN_CHARS
        elif t + 1 in hit_spans:  # before a hit: the question is at its end
            spans, limit = [(turn.end, turn.end)], CONTEXT_CHARS
        else:  # after a hit: the answer is at its start
            spans, limit = [(turn.start, turn.start)], CONTEXT_CHARS
        text = _cut_around(transcript.text, turn.start, turn.end, spans, limit)
        lines.append(f"[{turn.speaker}] {text}")
        previous = t
    return lines


def _cut_around(text: str, start: int, end: int, spans: list[tuple[int, int]], limit: int) -> str:
    """``text[start:end]``, or at most ``limit`` characters of it centred on ``spans``, with
    "…" where it was cut (at word boundaries)."""
    body = text[start:end].strip()
    if len(body) <= limit:
        return body
    lo = min(s for s, _ in spans)
    hi = max(e for _, e in spans)
    slack = max(0, limit - (hi - lo)) // 2
    a = max(start, lo - slack)
    b = min(end, max(hi + slack, a + limit))
    a = max(start, min(a, b - limit))
    piece = text[a:b]
    if a > start:
        piece = "…" + piece.split(" ", 1)[-1]
    if b < end:
        piece = piece.rsplit(" ", 1)[0] + "…"
    return piece.strip()
