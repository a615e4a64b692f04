"""clinjudge.knowledge: medical concepts (ICD-10-CM, Disease/Symptom Ontology, drugs, clinical
abbreviations, lay terms, user-supplied SNOMED CT / SKOS / OWL) behind one facade,
:class:`~clinjudge.knowledge.base.KnowledgeBase`."""

from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.knowledge.concept import Concept, Hit, Mention

__all__ = ["Concept", "Hit", "KnowledgeBase", "Mention"]
