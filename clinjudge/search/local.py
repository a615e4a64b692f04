"""Local search backends (SPEC §3 step 3): a passage corpus and the knowledge index.

**Corpus** (:class:`CorpusSearch`): passages ``{id, text, url?, title?}`` from a JSONL file
(:func:`read_corpus`) or from a dataset row (:func:`passages_from_value`). A passage longer than
``max_chars`` is cut into windows of ``window`` sentences advancing by ``stride`` (one sentence of
overlap), each keeping the passage id. Retrieval is hybrid:

    hybrid(q, w) = λ · bm25(q, w) / max_w' bm25(q, w') + (1 − λ) · max(0, cos(e(q), e(w)))

with λ = 0.5 — the fusion of :mod:`clinjudge.grounding.evidence`, whose ``SentenceIndex``
supplies the normalised BM25 part (``bm25s`` over the project's content tokens). The dense part
is a FAISS inner-product index over MiniLM embeddings (:mod:`clinjudge.embeddings`,
L2-normalised: inner product = cosine); FAISS proposes the ``max(50, 10k)`` nearest windows
and BM25 scores every window, so a window found by words alone is never lost. Passages scoring
0 are not returned.

**Knowledge** (:class:`KnowledgeSearch`): :meth:`KnowledgeBase.search` hits as passages — id =
concept id, text = preferred name, kind, synonyms and named relations.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from clinjudge import embeddings
from clinjudge.errors import ConfigError
from clinjudge.files import parse_line
from clinjudge.grounding.evidence import SentenceIndex, Unit
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.search.base import Passage
from clinjudge.text.normalize import content_tokens
from clinjudge.text.sentences import split_sentences

BM25_WEIGHT = 0.5


def read_corpus(path: Path) -> list[Passage]:
    """Passages of a JSONL corpus: one object per line with ``id`` and ``text`` (``url`` and
    ``title`` optional). Raises :class:`ConfigError` naming the line of a bad record."""
    if not path.is_file():
        raise ConfigError(f"corpus file not found: {path}")
    passages: list[Passage] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            record, problem = parse_line(line, strict=False)
            if problem is not None:
                raise ConfigError(f"{path}: line {number}: {problem}")
            passages.append(_passage(record, f"{path}: line {number}", default_id=str(number)))
    if not passages:
        raise ConfigError(f"{path}: no passages")
    return passages


def passages_from_value(value: Any, where: str = "evidence") -> list[Passage]:
    """A row's own corpus: a list of strings or of ``{id, text, url?, title?}`` objects, or a JSON
    string holding one. Strings get ids ``e1, e2, …``. Raises :class:`ConfigError`."""
    if isinstance(value, str):
        try:
            value = json.loads(value, strict=False)
        except json.JSONDecodeError:
            raise ConfigError(f"{where}: not a JSON list of passages") from None
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list of passages, got {type(value).__name__}")
    passages = []
    for i, entry in enumerate(value, 1):
        record = {"id": f"e{i}", "text": entry} if isinstance(entry, str) else entry
        passages.append(_passage(record, f"{where}[{i - 1}]", default_id=f"e{i}"))
    return [p for p in passages if p.text.strip()]


def _passage(record: Any, where: str, *, default_id: str) -> Passage:
    if not isinstance(record, dict):
        raise ConfigError(f"{where}: a passage must be an object or a string")
    text = record.get("text")
    if not isinstance(text, str):
        raise ConfigError(f"{where}: passage has no text")
    pid = record.get("id", default_id)
    if not isinstance(pid, str | int) or isinstance(pid, bool):
        raise ConfigError(f"{where}: passage id must be text or an integer")
    return Passage(
        id=str(pid),
        text=text.strip(),
        url=str(record.get("url") or ""),
        title=str(record.get("title") or ""),
        source="corpus",
    )


def split_passage(
    passage: Passage, *, max_chars: int = 400, window: int = 3, stride: int = 2
) -> list[Passage]:
    """``passage`` itself if short, else windows of ``window`` sentences every ``stride``."""
    if len(passage.text) <= max_chars:
        return [passage]
    spans = split_sentences(passage.text)
    if len(spans) <= window:
        return [passage]
    windows = []
    for first in range(0, len(spans), stride):
        chunk = spans[first : first + window]
        text = passage.text[chunk[0].start : chunk[-1].end]
        windows.append(passage.model_copy(update={"text": text}))
        if first + window >= len(spans):
            break
    return windows


class CorpusSearch:
    """Hybrid BM25 + FAISS search over a list of passages (module docstring)."""

    name = "corpus"

    def __init__(self, passages: list[Passage], *, dense: bool = True, label: str = "") -> None:
        self.passages = passages
        self.label = label
        self.windows = [w for p in passages for w in split_passage(p)]
        units = [
            Unit(
                index=i,
                start=0,
                end=len(w.text),
                text=w.text,
                tokens=frozenset(content_tokens(w.text)),
            )
            for i, w in enumerate(self.windows)
        ]
        self._lexical = SentenceIndex(units, dense=False)  # normalised BM25 only
        self._faiss = (
            _faiss_index(embeddings.encode([w.text for w in self.windows]))
            if (dense and self.windows)
            else None
        )

    def describe(self) -> dict[str, object]:
        digest = hashlib.sha256(
            json.dumps([[p.id, p.text] for p in self.passages], ensure_ascii=False).encode()
        ).hexdigest()[:16]
        return {
            "backend": self.name,
            "corpus": self.label,
            "n_passages": len(self.passages),
            "n_windows": len(self.windows),
            "sha256": digest,
            "dense": self._faiss is not None,
        }

    async def search(self, query: str, k: int) -> list[Passage]:
        return self.search_sync(query, k)

    def search_sync(self, query: str, k: int) -> list[Passage]:
        if not self.windows or not query.strip():
            return []
        scores = self._lexical.scores(query)
        if self._faiss is not None:
            lexical_weight = BM25_WEIGHT
            dense = np.zeros(len(self.windows))
            vector = embeddings.encode([query])[:1].astype(np.float32)
            depth = min(len(self.windows), max(50, 10 * k))
            found, rows = self._faiss.search(vector, depth)
            for score, row in zip(found[0], rows[0], strict=True):
                if row >= 0:
                    dense[row] = max(0.0, float(score))
            scores = lexical_weight * scores + (1 - lexical_weight) * dense
        order = np.argsort(-scores, kind="stable")[:k]
        return [
            self.windows[i].model_copy(update={"score": round(float(scores[i]), 4)})
            for i in order
            if scores[i] > 0
        ]


def _faiss_index(vectors: np.ndarray) -> Any:
    import faiss

    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


class KnowledgeSearch:
    """The knowledge layer's concept index as a search backend (id = concept id)."""

    name = "knowledge"

    def __init__(self, kb: KnowledgeBase, *, max_synonyms: int = 6, max_relations: int = 6):
        self.kb = kb
        self.max_synonyms = max_synonyms
        self.max_relations = max_relations

    def describe(self) -> dict[str, object]:
        return {"backend": self.name, "knowledge_digest": self.kb.digest}

    async def search(self, query: str, k: int) -> list[Passage]:
        if not query.strip():
            return []
        return [
            Passage(
                id=hit.concept_id,
                text=self.concept_text(hit.concept_id),
                title=hit.preferred,
                score=hit.score,
                source=self.name,
            )
            for hit in self.kb.search(query, k=k)
        ]

    def concept_text(self, concept_id: str) -> str:
        """``"<preferred> is a <kind>. Also called: …. <relation> <target>."``"""
        concept = self.kb.concept(concept_id)
        parts = [f"{concept.preferred} is a {concept.kind.replace('_', ' ')}."]
        synonyms = [s for s in concept.synonyms if s.lower() != concept.preferred.lower()]
        if synonyms:
            parts.append("Also called: " + ", ".join(synonyms[: self.max_synonyms]) + ".")
        shown = 0
        for relation, target in concept.relations:
            if shown >= self.max_relations or relation == "xref":
                continue
            name = self._name(target)
            if name:
                parts.append(f"{concept.preferred} {relation.replace('_', ' ')} {name}.")
                shown += 1
        return " ".join(parts)

    def _name(self, target: str) -> str:
        if target.startswith("TERM:"):
            return target.split(":", 1)[1]
        if target in self.kb.lexicon.pos:
            return self.kb.concept(target).preferred
        return ""
