"""Symptom Ontology concepts (CC0 1.0), from a compact file bundled with the package.

``data/symptom_ontology.jsonl.gz`` holds one object per non-obsolete SYMP term:
``{"id", "name", "synonyms", "xrefs", "is_a"}``, derived by :func:`derive_rows` from
``symp.obo`` (parsed with ``obonet``). Only EXACT synonyms are kept (RELATED/BROAD/NARROW ones
are not the same concept); xrefs keep UMLS CUIs, which the lexicon uses to merge a SYMP term
with a Disease Ontology term carrying the same CUI one-to-one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from clinjudge.knowledge.bundled import data_path, read_jsonl_gz
from clinjudge.knowledge.concept import Concept
from clinjudge.knowledge.sources._ontology_terms import clean_term, normalise_xref

SOURCE = "symptom_ontology"
DATA_FILE = "symptom_ontology.jsonl.gz"

_SYNONYM = re.compile(r'^"(?P<text>(?:[^"\\]|\\.)*)"\s+(?P<scope>EXACT|RELATED|BROAD|NARROW)')


def derive_rows(obo_path: Path) -> Iterator[dict]:
    """Compact rows from an OBO file (``obonet`` graph nodes; obsolete terms are dropped)."""
    import obonet

    graph = obonet.read_obo(str(obo_path), ignore_obsolete=True)
    for node_id, data in sorted(graph.nodes(data=True)):
        name = clean_term(data.get("name", ""))
        if not name or not node_id.startswith("SYMP:"):
            continue
        synonyms = []
        for raw in data.get("synonym", []):
            match = _SYNONYM.match(raw)
            if match and match["scope"] == "EXACT":
                synonyms.append(clean_term(match["text"].replace('\\"', '"')))
        xrefs = [x for x in map(normalise_xref, data.get("xref", [])) if x]
        yield {
            "id": node_id,
            "name": name,
            "synonyms": sorted({s for s in synonyms if s and s != name}),
            "xrefs": sorted(set(xrefs)),
            "is_a": sorted(set(data.get("is_a", []))),
        }


def iter_concepts(path: Path | None = None) -> Iterator[Concept]:
    """Concepts of the bundled SYMP file (or of a file in the same format)."""
    for row in read_jsonl_gz(path or data_path(DATA_FILE)):
        relations = [("is_a", p) for p in row["is_a"]] + [("xref", x) for x in row["xrefs"]]
        yield Concept(
            id=row["id"],
            source=SOURCE,
            kind="symptom",
            preferred=row["name"],
            synonyms=tuple(row["synonyms"]),
            relations=tuple(relations),
        )
