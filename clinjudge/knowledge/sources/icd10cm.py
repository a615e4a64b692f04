"""ICD-10-CM concepts from the ``simple-icd-10-cm`` package (CDC tabular list; public domain).

Every chapter, block, category and subcategory becomes a concept ``ICD10CM:<code>`` (chapters
``ICD10CM:chapter-<n>``); 7th-character extensions (``S72.001A`` ...) are skipped: they repeat
their parent with an encounter qualifier. Surface forms are the description, the inclusion
terms, and their :func:`term_variants`. Relations: ``is_a`` the parent;
``same_as`` the parent when the description is the parent's plus ``, unspecified``
(``I21.9`` "Acute myocardial infarction, unspecified" = ``I21``).

Kind by chapter: R00-R69 symptom, R70-R99 finding, Z finding (health status, history),
V-Y other (external causes), everything else disease.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.metadata import version

from clinjudge.knowledge.concept import Concept

SOURCE = "icd10cm"
PREFIX = "ICD10CM:"

_UNSPECIFIED = re.compile(r"(,\s*unspecified|(?<!\s)\s+NOS|,\s*not elsewhere classified)\s*$", re.I)
_PARENS = re.compile(r"(?<!\s)\s*\([^()]*\)")


def package_version() -> str:
    return version("simple-icd-10-cm")


def strip_unspecified(term: str) -> str:
    """``"Acute myocardial infarction, unspecified"`` -> ``"Acute myocardial infarction"``."""
    return _UNSPECIFIED.sub("", term).strip()


def term_variants(term: str) -> list[str]:
    """The term, without ``, unspecified``/``NOS``, and without parenthesised nonessential
    modifiers or code ranges (``Essential (primary) hypertension`` -> ``Essential
    hypertension``)."""
    stripped = strip_unspecified(term)
    forms = [term, stripped, _PARENS.sub("", term).strip(), _PARENS.sub("", stripped).strip()]
    return [f for f in dict.fromkeys(forms) if f]


def concept_id(code: str, is_chapter: bool = False) -> str:
    return f"{PREFIX}chapter-{code}" if is_chapter else PREFIX + code


def kind_of(code: str) -> str:
    """Kind of a code by its chapter letter (module docstring)."""
    letter = code[:1]
    if letter == "R":
        number = code[1:3]
        return "symptom" if number.isdigit() and int(number) < 70 else "finding"
    if letter == "Z":
        return "finding"
    if letter in "VWXY":
        return "other"
    return "disease"


def iter_concepts() -> Iterator[Concept]:
    """One concept per ICD-10-CM chapter, block, category and subcategory."""
    import simple_icd_10_cm as cm

    for code in cm.get_all_codes(with_dots=True):
        if cm.is_extended_subcategory(code):
            continue
        chapter = cm.is_chapter(code)
        description = cm.get_description(code)
        terms = [description, *cm.get_inclusion_term(code)]
        synonyms = [t for term in terms for t in term_variants(term)]
        relations: list[tuple[str, str]] = []
        parent = cm.get_parent(code)
        if parent:
            parent_id = concept_id(parent, cm.is_chapter(parent))
            relations.append(("is_a", parent_id))
            stripped = strip_unspecified(description)
            if stripped != description and stripped.lower() == (cm.get_description(parent).lower()):
                relations.append(("same_as", parent_id))
        if chapter:
            kind = "other"
        else:
            first = code.split("-")[0]
            kind = kind_of(first)
        yield Concept(
            id=concept_id(code, chapter),
            source=SOURCE,
            kind=kind,
            preferred=description,
            synonyms=tuple(dict.fromkeys(s for s in synonyms if s != description)),
            relations=tuple(relations),
        )
