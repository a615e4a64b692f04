"""Offline search queries for a claim (SPEC §3 step 2, offline backend).

Queries, in order, duplicates dropped: (1) the claim text itself; (2) its key concepts — the
surface forms of the knowledge-base concepts it mentions, with the preferred name when it differs
("Zestril" → "Zestril lisinopril") — when it mentions any. At most :data:`MAX_QUERIES`.
"""

from __future__ import annotations

from clinjudge.knowledge.base import KnowledgeBase

MAX_QUERIES = 3


def offline_queries(claim: str, kb: KnowledgeBase) -> list[str]:
    """Queries for ``claim`` by the rule of the module docstring."""
    queries = [" ".join(claim.split())]
    words: list[str] = []
    for mention in kb.concepts_in(claim):
        if "abbreviation" in mention.kinds and len(mention.kinds) == 1:
            continue  # an abbreviation alone is ambiguous; the claim text keeps it in context
        words.append(mention.surface)
        preferred = kb.concept(mention.concept_ids[0]).preferred
        if preferred.lower() != mention.surface.lower():
            words.append(preferred)
    concepts = " ".join(dict.fromkeys(words))
    if concepts and concepts.lower() != queries[0].lower():
        queries.append(concepts)
    return queries[:MAX_QUERIES]
