"""Concept sources of the knowledge layer: one module per source, each with ``iter_concepts``.

:data:`DEFAULT_SOURCES` are the sources built into every knowledge base, with the bundled data
files each reads (their hashes go into the build manifest). SNOMED CT (:mod:`.snomed`) and
user vocabularies (:mod:`.rdf`) are added by :meth:`KnowledgeBase.load` on request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from clinjudge.knowledge.concept import Concept
from clinjudge.knowledge.sources import (
    abbreviations,
    curated,
    disease_ontology,
    drugs,
    icd10cm,
    lay_terms,
    symptom_ontology,
)

#: name -> (concept iterator, bundled data files it reads)
DEFAULT_SOURCES: dict[str, tuple[Callable[[], Iterable[Concept]], tuple[str, ...]]] = {
    "icd10cm": (icd10cm.iter_concepts, ()),
    "drugs": (drugs.iter_concepts, ("drug_brands.csv", "drug_brands_nhs.csv", "drug_classes.csv")),
    "disease_ontology": (disease_ontology.iter_concepts, (disease_ontology.DATA_FILE,)),
    "symptom_ontology": (symptom_ontology.iter_concepts, (symptom_ontology.DATA_FILE,)),
    "abbreviations": (abbreviations.iter_concepts, (abbreviations.DATA_FILE,)),
    "lay_terms": (lay_terms.iter_concepts, (lay_terms.DATA_FILE,)),
    "curated": (curated.iter_concepts, (curated.DATA_FILE,)),
}

#: Installed packages whose data the sources read (their versions go into the manifest).
SOURCE_PACKAGES = ("simple-icd-10-cm", "drug-named-entity-recognition", "rdflib")
