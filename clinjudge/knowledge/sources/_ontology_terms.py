"""Clean-up shared by the Disease and Symptom Ontology derivations."""

from __future__ import annotations

import re

#: SNOMED CT semantic tags and other bracketed qualifiers some DO synonyms carry.
_SEMANTIC_TAG = re.compile(
    r"(?<!\s)\s*\((disorder|finding|morphologic abnormality|situation|navigational concept|"
    r"qualifier value|observable entity|procedure|clinical)\)\s*$",
    re.I,
)
_NOS = re.compile(r"(?<!\s)\s+NOS\s*$")


def clean_term(term: str) -> str:
    """Drop a trailing SNOMED-style semantic tag and ``NOS``; collapse white space."""
    term = _SEMANTIC_TAG.sub("", term)
    term = _NOS.sub("", term)
    return " ".join(term.split())


def normalise_xref(xref: str) -> str | None:
    """``ICD10CM:I21`` stays; ``SNOMEDCT_US_2025_09_01:66514008`` -> ``SNOMED:66514008``;
    ``UMLS_CUI:C0027051`` -> ``UMLS:C0027051``; other vocabularies are dropped (``None``)."""
    prefix, _, code = xref.partition(":")
    if not code:
        return None
    if prefix == "ICD10CM":
        return "ICD10CM:" + code
    if prefix.startswith("SNOMEDCT"):
        return "SNOMED:" + code
    if prefix == "UMLS_CUI":
        return "UMLS:" + code.upper()
    return None
