"""Exact lexicon: normalised surface form -> concepts, and longest-match scanning of text.

Every surface form of every concept is indexed under its key(s) (:mod:`.normalize`). Each
(key, concept) entry carries two flags:

- ``GATED`` -- abbreviation-like forms (abbreviation concepts, acronyms written in capitals such
  as ``COPD``/``HbA1c``, forms of three characters or fewer). In text they match only when written
  in capitals (``SOB``), exactly as the source writes a mixed-case form (``HbA1c``), or when the
  key is in the curated lower-case whitelist ``data/abbreviation_whitelist.txt`` (``bid``, ``prn``,
  ``sob``, ``bp`` ...). Curated and lay terms are never gated.
- ``NOSCAN`` -- reachable by :meth:`Lexicon.lookup` but never matched in free text: keys in
  ``data/stoplist.txt`` (common English words that collide with drug brands, abbreviations or
  ontology synonyms: ``today``, ``sure``, ``all``, ``well`` ...), ICD-10-CM external-cause codes
  and chapter titles (``shot`` is a firearm discharge there), numbers, and forms longer than
  :data:`MAX_TOKENS` tokens. Curated and lay terms are never stopped.

Scanning walks the tokens left to right and takes, at each position, the longest n-gram
(``MAX_TOKENS`` down to 1, never across punctuation) that has an admissible entry.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from clinjudge.knowledge.bundled import data_path, read_word_list
from clinjudge.knowledge.concept import Concept, ConceptTable, Mention
from clinjudge.knowledge.linking import link
from clinjudge.knowledge.normalize import key, key_variants, tokenize
from clinjudge.knowledge.sources.icd10cm import strip_unspecified

MAX_TOKENS = 6
GATED = 1
NOSCAN = 2
_CURATED_SOURCES = frozenset({"curated", "lay_terms"})
_ACRONYM = re.compile(r"(?=(?:.*[A-Z]){2})[A-Za-z0-9][A-Za-z0-9./&+-]{1,9}")


def load_stoplist() -> frozenset[str]:
    return frozenset(key(w) for w in read_word_list(data_path("stoplist.txt")))


def load_whitelist() -> frozenset[str]:
    return frozenset(key(w) for w in read_word_list(data_path("abbreviation_whitelist.txt")))


def is_acronym(surface: str) -> bool:
    """``COPD``, ``HbA1c``, ``ACE-I``: one short token with two or more capitals and no
    lower-case run longer than two letters (so ``Zestril``/``ProAir`` are not acronyms)."""
    return bool(_ACRONYM.fullmatch(surface)) and not re.search(r"[a-z]{3,}", surface)


def _merge_duplicates(concepts: Iterable[Concept]) -> list[Concept]:
    """Concepts with the same id (a curated term yielded by two files) become one: the first
    keeps its kind, source and preferred term; synonyms and relations are united."""
    merged: dict[str, Concept] = {}
    for c in concepts:
        old = merged.get(c.id)
        if old is None:
            merged[c.id] = c
            continue
        merged[c.id] = Concept(
            id=old.id,
            source=old.source,
            kind=old.kind,
            preferred=old.preferred,
            synonyms=tuple(
                s for s in dict.fromkeys((*old.synonyms, *c.surfaces())) if s != old.preferred
            ),
            relations=tuple(dict.fromkeys((*old.relations, *c.relations))),
        )
    return list(merged.values())


@dataclass
class Lexicon:
    """The built lexicon; see :func:`build_lexicon`. ``entries`` values encode
    ``concept index << 2 | flags``; ``concepts`` (any sequence of them) is kept as a
    :class:`~clinjudge.knowledge.concept.ConceptTable`, which pickles fast."""

    concepts: ConceptTable
    entries: dict[str, tuple[int, ...]]
    canon: list[int]
    edges: dict[int, tuple[tuple[str, int], ...]]
    term_edges: dict[int, tuple[tuple[str, str], ...]]
    whitelist: frozenset[str]
    pos: dict[str, int] = field(default_factory=dict)
    members: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.concepts, ConceptTable):
            self.concepts = ConceptTable(self.concepts)
        if not self.pos:
            self.pos = {c.id: i for i, c in enumerate(self.concepts)}
        if not self.members:
            groups: dict[int, list[int]] = defaultdict(list)
            for i, root in enumerate(self.canon):
                groups[root].append(i)
            self.members = {root: tuple(ms) for root, ms in groups.items() if len(ms) > 1}

    # -- exact lookup ----------------------------------------------------------------------
    def indices(self, term: str) -> list[int]:
        """Indices of the concepts whose surface forms include ``term`` (after normalisation)."""
        return [e >> 2 for e in self.entries.get(key(term), ())]

    def lookup(self, term: str) -> list[Concept]:
        """Concepts carrying ``term``: the class representatives first, then by source rank."""
        found = self.indices(term)
        found.sort(key=lambda i: (self.canon[i] != i, i))
        return [self.concepts[i] for i in found]

    def class_of(self, index: int) -> tuple[int, ...]:
        root = self.canon[index]
        return self.members.get(root, (root,))

    def canonical_id(self, index: int) -> str:
        return self.concepts[self.canon[index]].id

    # -- scanning ----------------------------------------------------------------------------
    def _admissible(self, encoded: Sequence[int], k: str, span: str) -> list[int]:
        capital = sum(ch.isalpha() for ch in span) >= 2 and span.upper() == span
        out = []
        for e in encoded:
            if e & NOSCAN:
                continue
            if e & GATED and not (capital or k in self.whitelist):
                c = self.concepts[e >> 2]
                if not (is_acronym(span) and span in c.surfaces()):
                    continue
            out.append(e >> 2)
        return out

    def scan(self, text: str) -> list[Mention]:
        """Longest-match concept mentions of ``text`` with character offsets."""
        tokens = tokenize(text)
        mentions: list[Mention] = []
        i = 0
        while i < len(tokens):
            step = 1
            for n in range(min(MAX_TOKENS, len(tokens) - i), 0, -1):
                last = tokens[i + n - 1]
                if last.segment != tokens[i].segment:
                    continue
                k = " ".join(t.norm for t in tokens[i : i + n])
                encoded = self.entries.get(k)
                if not encoded:
                    continue
                start, end = tokens[i].start, last.end
                found = self._admissible(encoded, k, text[start:end])
                if found:
                    mentions.append(self._mention(text, start, end, found))
                    step = n
                    break
            i += step
        return mentions

    def _mention(self, text: str, start: int, end: int, found: list[int]) -> Mention:
        found.sort(key=lambda j: (self.canon[j] != j, j))
        return Mention(
            start=start,
            end=end,
            surface=text[start:end],
            concept_ids=tuple(self.concepts[j].id for j in found),
            kinds=tuple(self.concepts[j].kind for j in found),
            canonical=tuple(dict.fromkeys(self.canonical_id(j) for j in found)),
        )


def _flags(concept: Concept, surface: str, k: str, stoplist: frozenset[str]) -> int:
    if concept.source in _CURATED_SOURCES:
        return 0
    flags = 0
    if concept.kind == "abbreviation" or is_acronym(surface) or len(k.replace(" ", "")) <= 3:
        flags |= GATED
    tokens = k.split()
    external_cause = concept.source == "icd10cm" and concept.kind == "other"
    if (
        k in stoplist
        or external_cause
        or all(t.isdigit() for t in tokens)
        or len(tokens) > MAX_TOKENS
    ):
        flags |= NOSCAN
    return flags


def build_lexicon(
    concepts: Iterable[Concept],
    stoplist: frozenset[str] | None = None,
    whitelist: frozenset[str] | None = None,
) -> Lexicon:
    """Index every surface form, link the concepts (:mod:`.linking`) and return the lexicon."""
    stoplist = load_stoplist() if stoplist is None else stoplist
    whitelist = load_whitelist() if whitelist is None else whitelist
    unique = _merge_duplicates(concepts)
    flags_of: dict[str, dict[int, int]] = defaultdict(dict)
    primary: list[tuple[str, ...]] = []
    for i, c in enumerate(unique):
        for surface in c.surfaces():
            for k in key_variants(surface):
                f = _flags(c, surface, k, stoplist)
                old = flags_of[k].get(i)
                flags_of[k][i] = f if old is None else old & f
        forms = (c.preferred, strip_unspecified(c.preferred))
        primary.append(tuple(dict.fromkeys(key(p) for p in forms)))
    surface_index = {k: list(v) for k, v in flags_of.items()}
    linked = link(unique, surface_index, primary)
    entries = {k: tuple(i << 2 | f for i, f in v.items()) for k, v in flags_of.items()}
    return Lexicon(
        concepts=ConceptTable(unique),
        entries=entries,
        canon=linked.canon,
        edges=linked.edges,
        term_edges=linked.term_edges,
        whitelist=whitelist,
    )
