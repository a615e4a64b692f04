"""Merging concepts of different sources into equivalence classes, and resolving relations.

Equivalence edges (union-find, ``scipy.cluster.hierarchy.DisjointSet``), in this order:

A. by id -- ``same_as`` an existing id; ``brand_of`` a single generic; ``xref`` one-to-one: an
   external code (``ICD10CM:I21``, ``SNOMED:…``, ``UMLS:…``) referenced by at most one concept per
   source, each of which has no other code of that vocabulary, merges those concepts with each
   other and with the concept whose id is the code (DO "myocardial infarction" = ICD-10-CM I21);
B. by preferred name -- a primary key (normalised preferred term, also without ``, unspecified``)
   carried by the concepts of exactly one class in each of two or more sources;
C. by surface -- ``same_as TERM:x`` (curated terms), a single ``lay_for`` reading, a single
   ``expands_to`` sense: merged into the one class whose reference concepts carry surface ``x``
   (when several do, the one having ``x`` as a primary key, if unique).

Reference concepts are those that are neither lay terms nor abbreviations. Ambiguous links
(several targets, several candidates) never merge: they stay relations, so ambiguity is kept.
After merging, every other relation is resolved to target classes (``TERM:`` targets to every
class carrying that surface) for :meth:`KnowledgeBase.related`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from clinjudge.knowledge.concept import TERM_PREFIX, Concept
from clinjudge.knowledge.normalize import key

#: Lower is preferred as the canonical (representative) id of a class.
SOURCE_PRIORITY = {
    "snomed": 0,
    "disease_ontology": 1,
    "symptom_ontology": 2,
    "icd10cm": 3,
    "drugs": 4,
    "curated": 6,
    "lay_terms": 7,
    "abbreviations": 8,
}
_OTHER_SOURCE = 5
_NOT_REFERENCE = frozenset({"lay_term", "abbreviation"})


@dataclass
class Linked:
    """``canon[i]``: representative concept index of concept ``i``'s class; ``edges[i]``:
    resolved ``(relation, class representative)`` pairs; ``term_edges[i]``: ``(relation, key)``
    for ``TERM:`` targets that no concept carries."""

    canon: list[int]
    edges: dict[int, tuple[tuple[str, int], ...]]
    term_edges: dict[int, tuple[tuple[str, str], ...]]


def class_rank(concept: Concept) -> tuple:
    """Sort key of a class member as representative (source priority, generic before brand)."""
    priority = SOURCE_PRIORITY.get(concept.source, _OTHER_SOURCE)
    return (priority, concept.id.startswith("BRAND:"), len(concept.id), concept.id)


class _Linker:
    def __init__(
        self,
        concepts: Sequence[Concept],
        surface_index: dict[str, list[int]],
        primary_keys: Sequence[tuple[str, ...]],
    ) -> None:
        self.concepts = concepts
        self.surface_index = surface_index
        self.primary_keys = primary_keys
        self.pos = {c.id: i for i, c in enumerate(concepts)}
        from scipy.cluster.hierarchy import DisjointSet  # only when linking (not on load)

        self.ds = DisjointSet(range(len(concepts)))
        self.reference = [c.kind not in _NOT_REFERENCE for c in concepts]

    def merge_by_id(self) -> None:
        refs: dict[str, list[int]] = defaultdict(list)
        per_vocab: list[Counter] = [Counter() for _ in self.concepts]
        for i, c in enumerate(self.concepts):
            brands = [t for r, t in c.relations if r == "brand_of"]
            for rel, target in c.relations:
                if rel == "same_as" and target in self.pos:
                    self.ds.merge(i, self.pos[target])
                elif rel == "xref":
                    refs[target].append(i)
                    per_vocab[i][target.split(":", 1)[0]] += 1
            if len(brands) == 1 and brands[0] in self.pos:
                self.ds.merge(i, self.pos[brands[0]])
        for target, members in refs.items():
            vocab = target.split(":", 1)[0]
            sources = Counter(self.concepts[i].source for i in members)
            if max(sources.values()) > 1 or any(per_vocab[i][vocab] != 1 for i in members):
                continue
            group = members + ([self.pos[target]] if target in self.pos else [])
            for other in group[1:]:
                self.ds.merge(group[0], other)

    def merge_by_preferred_name(self) -> None:
        by_key: dict[str, list[int]] = defaultdict(list)
        for i, c in enumerate(self.concepts):
            if self.reference[i] and c.source != "curated":
                for k in self.primary_keys[i]:
                    by_key[k].append(i)
        for members in by_key.values():
            classes: dict[str, set[int]] = defaultdict(set)
            for i in members:
                classes[self.concepts[i].source].add(self.ds[i])
            if len(classes) >= 2 and all(len(c) == 1 for c in classes.values()):
                for other in members[1:]:
                    self.ds.merge(members[0], other)

    def candidates(self, text: str, exclude: int) -> tuple[set[int], str]:
        k = key(text)
        found = {
            self.ds[j] for j in self.surface_index.get(k, ()) if j != exclude and self.reference[j]
        }
        return found, k

    def resolve_single(self, text: str, exclude: int) -> int | None:
        """The one class carrying ``text`` (see C in the module docstring), else ``None``."""
        found, k = self.candidates(text, exclude)
        if len(found) > 1:
            found = {
                self.ds[j]
                for j in self.surface_index.get(k, ())
                if j != exclude and self.reference[j] and k in self.primary_keys[j]
            }
        return next(iter(found)) if len(found) == 1 else None

    def merge_by_surface(self) -> None:
        for relation in ("same_as", "lay_for", "expands_to"):
            for i, c in enumerate(self.concepts):
                targets = [t for r, t in c.relations if r == relation]
                if len(targets) != 1 or not targets[0].startswith(TERM_PREFIX):
                    continue
                found = self.resolve_single(targets[0][len(TERM_PREFIX) :], i)
                if found is not None:
                    self.ds.merge(i, found)

    def result(self) -> Linked:
        canon = list(range(len(self.concepts)))
        for subset in self.ds.subsets():
            if len(subset) > 1:
                best = min(subset, key=lambda j: class_rank(self.concepts[j]))
                for j in subset:
                    canon[j] = best
        edges: dict[int, tuple[tuple[str, int], ...]] = {}
        term_edges: dict[int, tuple[tuple[str, str], ...]] = {}
        for i, c in enumerate(self.concepts):
            resolved: list[tuple[str, int]] = []
            unresolved: list[tuple[str, str]] = []
            for rel, target in c.relations:
                if rel == "same_as":
                    continue
                if target.startswith(TERM_PREFIX):
                    found, k = self.candidates(target[len(TERM_PREFIX) :], i)
                    if found:
                        resolved += [(rel, canon[j]) for j in sorted(found)]
                    else:
                        unresolved.append((rel, k))
                elif target in self.pos:
                    resolved.append((rel, canon[self.pos[target]]))
            if resolved:
                edges[i] = tuple(dict.fromkeys(resolved))
            if unresolved:
                term_edges[i] = tuple(dict.fromkeys(unresolved))
        return Linked(canon=canon, edges=edges, term_edges=term_edges)


def link(
    concepts: Sequence[Concept],
    surface_index: dict[str, list[int]],
    primary_keys: Sequence[tuple[str, ...]],
) -> Linked:
    """Equivalence classes and resolved relations of ``concepts`` (module docstring).

    ``surface_index`` maps every surface key to the indices of the concepts carrying it;
    ``primary_keys[i]`` are concept ``i``'s preferred-term keys.
    """
    linker = _Linker(concepts, surface_index, primary_keys)
    linker.merge_by_id()
    linker.merge_by_preferred_name()
    linker.merge_by_surface()
    return linker.result()
