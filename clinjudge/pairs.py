"""Paired notes for error detection (SPEC §4 "Pairs"): the notes to judge, the pairs they form,
and one-to-one matching of erroneous notes to clean notes where no twin is given.

**Similarities.**
- word Jaccard = |W(a) ∩ W(b)| / |W(a) ∪ W(b)|, W = set of case-folded ``\\w+`` words
  (MEDEC: pair at ≥ 0.6);
- character overlap = normalized Indel similarity 1 − indel(a, b) / (|a| + |b|), i.e. 2·LCS-ish
  matched characters over total length (``rapidfuzz.fuzz.ratio`` / 100; Japanese: ≥ 0.85).

**Matching.** One-to-one: each erroneous note gets at most one clean note and vice versa. Among
the candidate pairs at or above the threshold, the assignment of maximum total similarity is taken
(Hungarian algorithm, ``scipy.optimize.linear_sum_assignment``). Notes left unmatched count for
pointwise metrics only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np
from rapidfuzz import fuzz, process
from scipy.optimize import linear_sum_assignment

Similarity = Literal["word_jaccard", "char_overlap"]
Member = Literal["error", "clean"]
THRESHOLDS: dict[str, float] = {"word_jaccard": 0.6, "char_overlap": 0.85}
_WORD = re.compile(r"\w+")


def words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.casefold()))


def word_jaccard(a: str, b: str) -> float:
    """|W(a) ∩ W(b)| / |W(a) ∪ W(b)|; two texts without words have similarity 0."""
    wa, wb = words(a), words(b)
    union = wa | wb
    return len(wa & wb) / len(union) if union else 0.0


def char_overlap(a: str, b: str) -> float:
    """Normalized Indel similarity of the two character sequences, in [0, 1]."""
    return fuzz.ratio(a, b) / 100.0


def similarity_matrix(
    left: Sequence[str], right: Sequence[str], kind: Similarity = "word_jaccard"
) -> np.ndarray:
    """``len(left) × len(right)`` matrix of similarities."""
    if kind == "char_overlap":
        return process.cdist(left, right, scorer=fuzz.ratio, dtype=np.float64) / 100.0
    if kind != "word_jaccard":
        raise ValueError(f"similarity must be word_jaccard or char_overlap, got {kind!r}")
    right_words = [words(t) for t in right]
    out = np.zeros((len(left), len(right)))
    for i, text in enumerate(left):
        wl = words(text)
        for j, wr in enumerate(right_words):
            union = len(wl | wr)
            out[i, j] = len(wl & wr) / union if union else 0.0
    return out


class Matched(NamedTuple):
    left: int
    right: int
    similarity: float


def match_one_to_one(
    left: Sequence[str],
    right: Sequence[str],
    *,
    similarity: Similarity = "word_jaccard",
    threshold: float | None = None,
) -> list[Matched]:
    """One-to-one matches (index in ``left``, index in ``right``, similarity) at or above the
    threshold (default: 0.6 for word Jaccard, 0.85 for character overlap), maximizing the total
    similarity; sorted by ``left`` index."""
    if not left or not right:
        return []
    limit = THRESHOLDS[similarity] if threshold is None else threshold
    sims = similarity_matrix(left, right, similarity)
    eligible = sims >= limit
    rows, cols = linear_sum_assignment(np.where(eligible, sims, 0.0), maximize=True)
    return sorted(
        Matched(int(i), int(j), float(sims[i, j]))
        for i, j in zip(rows, cols, strict=True)
        if eligible[i, j]
    )


@dataclass(frozen=True)
class DetectionNote:
    """One note to judge. ``has_error`` is the ground truth; ``source_id`` the dataset's id."""

    note_id: str
    text: str
    has_error: bool
    source_id: str
    error_type: str | None = None


@dataclass(frozen=True)
class NotePair:
    """An erroneous note and its correct counterpart, with the sentence that differs."""

    pair_id: str
    error_note_id: str
    clean_note_id: str
    error_sentence: str
    corrected_sentence: str
    error_type: str | None = None
    how: Literal["twin", "matched"] = "twin"
    similarity: float | None = None


@dataclass
class PairDataset:
    """The notes of a paired dataset and the pairs among them. A note may be in several pairs
    (a reused clean note) or in none (pointwise metrics only)."""

    name: str
    notes: list[DetectionNote]
    pairs: list[NotePair]
    pairing: str = "twins"
    path: str = ""
    sha256: str = ""
    _by_note: dict[str, list[NotePair]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        ids = [n.note_id for n in self.notes]
        if len(set(ids)) != len(ids):
            raise ValueError("note ids must be unique")
        known = set(ids)
        for pair in self.pairs:
            for note_id in (pair.error_note_id, pair.clean_note_id):
                if note_id not in known:
                    raise ValueError(f"pair {pair.pair_id} names unknown note {note_id}")
            self._by_note.setdefault(pair.error_note_id, []).append(pair)
            self._by_note.setdefault(pair.clean_note_id, []).append(pair)

    def pairs_of(self, note_id: str) -> list[NotePair]:
        return self._by_note.get(note_id, [])

    def head(self, n_pairs: int) -> PairDataset:
        """The first ``n_pairs`` pairs and only the notes they use."""
        pairs = self.pairs[:n_pairs]
        used = {i for p in pairs for i in (p.error_note_id, p.clean_note_id)}
        notes = [n for n in self.notes if n.note_id in used]
        return PairDataset(self.name, notes, pairs, self.pairing, self.path, self.sha256)

    def provenance(self) -> dict[str, object]:
        return {
            "name": self.name,
            "path": self.path,
            "sha256": self.sha256,
            "pairing": self.pairing,
            "n_notes": len(self.notes),
            "n_error_notes": sum(n.has_error for n in self.notes),
            "n_pairs": len(self.pairs),
            "n_matched_pairs": sum(p.how == "matched" for p in self.pairs),
        }
