"""Legitimate *rewrites*: one meaning-preserving change of a real note that an inference-aware
judge must not flag (SPEC §1 tier 2: paraphrase, medical translation, trade–generic
equivalence, abbreviation).

Each rewrite replaces words that the transcript itself uses, so the original claim is
grounded and the rewritten one states the same fact in other words:

* ``generic_to_brand`` — a generic drug name (the note writes the generic, the transcript
  names the same drug) → one of its well-known brand names: the hand-curated brand lists of
  the knowledge layer (``drug_brands.csv``, ``drug_brands_nhs.csv``), confirmed by
  ``KnowledgeBase.related(brand, generic) == "brand_of"``;
* ``lay_to_clinical`` — a lay phrase of :data:`~clinjudge.inject.tables.LAY_TO_CLINICAL` →
  its clinical term, only for pairs the knowledge base puts in one concept class
  (``same_concept``);
* ``term_to_abbreviation`` — a term of :data:`~clinjudge.inject.tables.ABBREVIATIONS` → its
  standard abbreviation.

Matches are whole words, case-insensitive; a longer phrase wins over a phrase inside it; the
replacement takes the case style of the words it replaces (brands keep their capital).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from functools import lru_cache

from clinjudge.inject.material import NoteMaterial, phrase_pattern
from clinjudge.inject.tables import ABBREVIATIONS, LAY_TO_CLINICAL
from clinjudge.inject.types import Edit, Perturber, match_case
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.knowledge.bundled import data_path, read_csv

#: The knowledge layer's curated brand lists: the brands a note writer would use.
BRAND_FILES = ("drug_brands.csv", "drug_brands_nhs.csv")


@lru_cache(maxsize=4)
def well_known_brands(kb: KnowledgeBase) -> dict[str, tuple[str, ...]]:
    """Generic drug concept id → its curated brand names that the knowledge base confirms
    (``related(brand, generic) == "brand_of"``); combination products are left out."""
    brands: dict[str, list[str]] = defaultdict(list)
    for name in BRAND_FILES:
        for row in read_csv(data_path(name)):
            brand, generic = row["brand"], row["generic"]
            if "+" in generic or kb.related(brand, generic) != "brand_of":
                continue
            for concept in kb.lookup(generic):
                if concept.id.startswith("DRUG:") and brand not in brands[concept.id]:
                    brands[concept.id].append(brand)
    return {k: tuple(v) for k, v in brands.items()}


def find_generic_to_brand(src: NoteMaterial) -> list[Edit]:
    brands = well_known_brands(src.kb)
    edits = []
    for m in src.note_mentions:
        if "drug" not in m.kinds or any(c.startswith("BRAND:") for c in m.concept_ids):
            continue
        if not set(m.canonical) & src.transcript_concepts:
            continue
        for cid in m.concept_ids:
            if not cid.startswith("DRUG:"):
                continue
            if src.kb.concept(cid).preferred.lower() != m.surface.lower():
                continue  # a generic written as its generic name, not a salt or variant
            for brand in brands.get(cid, ()):
                after = brand.upper() if m.surface.isupper() and len(m.surface) > 1 else brand
                why = f"'{m.surface}' → its brand '{brand}' (brand_of); the transcript names it"
                edits.append(Edit(m.start, m.end, after, why))
    return edits


def _phrase_edits(
    src: NoteMaterial,
    table: tuple[tuple[str, str], ...],
    accept: Callable[[str, str], str | None],
) -> list[Edit]:
    """Edits replacing phrases of ``table`` (longest first, non-overlapping) that the
    transcript also says; ``accept(term, replacement)`` gives the rationale or ``None``."""
    taken: list[tuple[int, int]] = []
    edits = []
    for term, replacement in sorted(table, key=lambda row: -len(row[0])):
        if not src.transcript_says(term):
            continue
        why = accept(term, replacement)
        if why is None:
            continue
        for m in phrase_pattern(term).finditer(src.note):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append(m.span())
            after = match_case(m.group(), replacement) if replacement.islower() else replacement
            edits.append(Edit(m.start(), m.end(), after, f"'{m.group()}' → '{after}': {why}"))
    return edits


def find_lay_to_clinical(src: NoteMaterial) -> list[Edit]:
    def accept(lay: str, clinical: str) -> str | None:
        if not src.kb.same_concept(lay, clinical):
            return None
        return "same concept in the knowledge base; the transcript says it in lay terms"

    return _phrase_edits(src, LAY_TO_CLINICAL, accept)


def find_term_to_abbreviation(src: NoteMaterial) -> list[Edit]:
    def accept(term: str, abbreviation: str) -> str:
        relation = src.kb.related(abbreviation, term)
        known = f"knowledge base: {relation}" if relation else "not in the knowledge base"
        return f"standard abbreviation ({known}); the transcript says '{term}'"

    return _phrase_edits(src, ABBREVIATIONS, accept)


generic_to_brand = Perturber(
    "generic_to_brand", "rewrite", find_generic_to_brand, "a generic drug name → its brand name"
)
lay_to_clinical = Perturber(
    "lay_to_clinical", "rewrite", find_lay_to_clinical, "a lay phrase → the clinical term"
)
term_to_abbreviation = Perturber(
    "term_to_abbreviation",
    "rewrite",
    find_term_to_abbreviation,
    "a term → its standard clinical abbreviation",
)
