"""Human Disease Ontology concepts (CC0 1.0), from a compact file bundled with the package.

``data/disease_ontology.jsonl.gz`` holds one object per non-obsolete DO term:
``{"id", "name", "synonyms", "xrefs", "symptoms"}``, derived by :func:`derive_rows` from the DO
export ``do_terms_synonyms_xrefs.jsonl`` and ``reports/disease-symptom.tsv`` (see
``data/PROVENANCE.md``). Relations: ``xref`` to ICD-10-CM / SNOMED CT / UMLS ids (used by the
lexicon to merge DO terms with ICD-10-CM codes one-to-one) and ``has_symptom`` to SYMP ids.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from clinjudge.knowledge.bundled import data_path, read_jsonl_gz
from clinjudge.knowledge.concept import Concept
from clinjudge.knowledge.sources._ontology_terms import clean_term, normalise_xref

SOURCE = "disease_ontology"
DATA_FILE = "disease_ontology.jsonl.gz"


def derive_rows(terms_jsonl: Path, disease_symptom_tsv: Path) -> Iterator[dict]:
    """Compact rows from the raw DO files: obsolete terms dropped, synonyms cleaned,
    xrefs normalised (ICD10CM, SNOMED, UMLS only), symptom links attached."""
    symptoms: dict[str, list[str]] = defaultdict(list)
    with open(disease_symptom_tsv, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            symptoms[row["disease_id"]].append(row["symptom_id"])
    with open(terms_jsonl, encoding="utf-8") as fh:
        for line in fh:
            term = json.loads(line)
            name = clean_term(term["name"])
            if not name or name.lower().startswith("obsolete "):
                continue
            synonyms = [clean_term(s) for s in term.get("synonyms", [])]
            xrefs = [x for x in map(normalise_xref, term.get("xrefs", [])) if x]
            yield {
                "id": term["id"],
                "name": name,
                "synonyms": sorted({s for s in synonyms if s and s != name}),
                "xrefs": sorted(set(xrefs)),
                "symptoms": sorted(set(symptoms.get(term["id"], []))),
            }


def iter_concepts(path: Path | None = None) -> Iterator[Concept]:
    """Concepts of the bundled DO file (or of a file in the same format)."""
    for row in read_jsonl_gz(path or data_path(DATA_FILE)):
        relations = [("xref", x) for x in row["xrefs"]]
        relations += [("has_symptom", s) for s in row["symptoms"]]
        yield Concept(
            id=row["id"],
            source=SOURCE,
            kind="disease",
            preferred=row["name"],
            synonyms=tuple(row["synonyms"]),
            relations=tuple(relations),
        )
