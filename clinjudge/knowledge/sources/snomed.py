"""SNOMED CT from a user-supplied, licensed release -- never bundled with clinjudge.

Two inputs:

- an RF2 release directory (searched recursively): ``sct2_Concept_Snapshot*.txt``,
  ``sct2_Description_Snapshot-en*.txt``, ``sct2_Relationship_Snapshot*.txt`` and, if present,
  ``der2_cRefset_LanguageSnapshot-en*.txt`` (US/GB preferred terms). Only active rows are read.
  The fully specified name's semantic tag gives the kind (``(disorder)`` -> disease,
  ``(finding)`` -> finding, ``(procedure)`` -> procedure, ``(substance)`` -> drug, ...); the
  preferred term is the language refset's preferred synonym, else the FSN without its tag.
  Relationship ``116680003 |Is a|`` becomes ``is_a``; other attributes are named after their
  type concept's FSN in snake case (``363698007 |Finding site|`` -> ``finding_site``);
- an OWL/Turtle rendering, read through :mod:`.rdf` (labels carrying the semantic tag).

Concept ids are ``SNOMED:<conceptId>``; the Disease Ontology's ``SNOMED:`` cross-references
then merge DO terms with these concepts one-to-one (see :mod:`clinjudge.knowledge.linking`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from clinjudge.knowledge.concept import Concept
from clinjudge.knowledge.sources import rdf

SOURCE = "snomed"
IS_A = "116680003"
FSN = "900000000000003001"
SYNONYM = "900000000000013009"
PREFERRED = "900000000000548007"

_TAG = re.compile(r"(?<!\s)\s*\(([^()]+)\)\s*$")
_KIND_BY_TAG = {
    "disorder": "disease",
    "finding": "finding",
    "morphologic abnormality": "finding",
    "procedure": "procedure",
    "regime/therapy": "procedure",
    "observable entity": "test",
    "body structure": "anatomy",
    "substance": "drug",
    "product": "drug",
    "medicinal product": "drug",
    "medicinal product form": "drug",
    "clinical drug": "drug",
}
_FILES = {
    "concept": "sct2_Concept_Snapshot*.txt",
    "description": "sct2_Description_Snapshot-en*.txt",
    "relationship": "sct2_Relationship_Snapshot*.txt",
    "language": "der2_cRefset_LanguageSnapshot-en*.txt",
}


class SnomedError(ValueError):
    """The SNOMED CT input is missing files or is unreadable."""


def semantic_tag(term: str) -> str | None:
    match = _TAG.search(term)
    return match.group(1).strip().lower() if match else None


def strip_tag(term: str) -> str:
    return _TAG.sub("", term).strip()


def kind_of(fsn: str) -> str:
    return _KIND_BY_TAG.get(semantic_tag(fsn) or "", "other")


def attribute_name(fsn: str) -> str:
    """``"Finding site (attribute)"`` -> ``"finding_site"``."""
    return re.sub(r"[^a-z0-9]+", "_", strip_tag(fsn).lower()).strip("_") or "attribute"


def release_files(root: Path) -> dict[str, Path]:
    """The RF2 snapshot files under ``root`` (the language refset is optional)."""
    root = Path(root)
    if not root.exists():
        raise SnomedError(f"{root}: no such file or directory")
    found: dict[str, Path] = {}
    for name, pattern in _FILES.items():
        matches = sorted(root.rglob(pattern))
        if matches:
            found[name] = matches[0]
        elif name != "language":
            raise SnomedError(f"{root}: no {pattern} (is this an RF2 Snapshot release?)")
    return found


def _rows(path: Path) -> Iterator[list[str]]:
    """Tab-separated rows without the header; only ``active == "1"`` rows (column 3)."""
    with open(path, encoding="utf-8") as fh:
        header = fh.readline()
        if "\t" not in header:
            raise SnomedError(f"{path}: not a tab-separated RF2 file")
        for line in fh:
            cols = line.rstrip("\r\n").split("\t")
            if len(cols) > 2 and cols[2] == "1":
                yield cols


def iter_rf2_concepts(root: Path) -> Iterator[Concept]:
    """Concepts of an RF2 Snapshot release (module docstring)."""
    files = release_files(root)
    active = {cols[0] for cols in _rows(files["concept"])}
    preferred_ids: set[str] = set()
    if "language" in files:
        # refset columns: id effectiveTime active moduleId refsetId referencedComponentId accept.
        preferred_ids = {c[5] for c in _rows(files["language"]) if len(c) > 6 and c[6] == PREFERRED}
    fsn: dict[str, str] = {}
    preferred: dict[str, str] = {}
    synonyms: dict[str, list[str]] = defaultdict(list)
    for cols in _rows(files["description"]):
        # id effectiveTime active moduleId conceptId languageCode typeId term caseSignificanceId
        desc_id, concept_id, type_id, term = cols[0], cols[4], cols[6], cols[7]
        if concept_id not in active:
            continue
        if type_id == FSN:
            fsn[concept_id] = term
        else:
            synonyms[concept_id].append(term)
            if desc_id in preferred_ids:
                preferred.setdefault(concept_id, term)
    relations: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for cols in _rows(files["relationship"]):
        # id effectiveTime active moduleId sourceId destinationId group typeId charType modifier
        source_id, destination, type_id = cols[4], cols[5], cols[7]
        if source_id in active and destination in active:
            name = "is_a" if type_id == IS_A else attribute_name(fsn.get(type_id, type_id))
            relations[source_id].append((name, "SNOMED:" + destination))
    for concept_id in sorted(active):
        full = fsn.get(concept_id)
        if full is None:
            continue
        pref = preferred.get(concept_id) or strip_tag(full)
        terms = [strip_tag(full), *synonyms.get(concept_id, [])]
        yield Concept(
            id="SNOMED:" + concept_id,
            source=SOURCE,
            kind=kind_of(full),
            preferred=pref,
            synonyms=tuple(t for t in dict.fromkeys(terms) if t != pref),
            relations=tuple(dict.fromkeys(relations.get(concept_id, []))),
        )


def iter_owl_concepts(path: Path) -> Iterator[Concept]:
    """Concepts of a SNOMED CT OWL/Turtle file: labels lose their semantic tag, and the first
    tagged label sets the kind."""
    for c in rdf.iter_concepts(path, source=SOURCE):
        tagged = [t for t in (c.preferred, *c.synonyms) if semantic_tag(t)]
        kind = kind_of(tagged[0]) if tagged else "other"
        preferred = strip_tag(c.preferred)
        synonyms = tuple(
            s for s in dict.fromkeys(strip_tag(x) for x in c.synonyms) if s != preferred
        )
        yield Concept(c.id, c.source, kind, preferred, synonyms, c.relations)


def iter_concepts(path: Path) -> Iterator[Concept]:
    """RF2 when ``path`` is a directory, OWL/Turtle when it is a file."""
    path = Path(path)
    if path.is_dir():
        return iter_rf2_concepts(path)
    if path.is_file():
        return iter_owl_concepts(path)
    raise SnomedError(f"{path}: no such file or directory")
