"""Knowledge entries handed to the LLM judge as extra context per claim (SPEC §1 "Knowledge
retrieval"): the concepts the claim mentions, with synonyms and trade/generic names."""

from __future__ import annotations

from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.types import KnowledgeEntry

MAX_ENTRIES_PER_CLAIM = 6
MAX_SYNONYMS = 6


class KnowledgeLookup:
    def __init__(self, kb: KnowledgeBase, max_entries: int = MAX_ENTRIES_PER_CLAIM) -> None:
        self.kb = kb
        self.max_entries = max_entries

    def entries(self, text: str) -> list[KnowledgeEntry]:
        """One entry per distinct concept mentioned in ``text`` (first sense of each mention)."""
        seen: set[str] = set()
        found: list[KnowledgeEntry] = []
        for mention in self.kb.concepts_in(text):
            for cid in mention.concept_ids:
                if cid in seen:
                    continue
                seen.add(cid)
                entry = self.kb.entry(self.kb.concept(cid))
                found.append(entry.model_copy(update={"matched": mention.surface}))
                if len(found) >= self.max_entries:
                    return found
        return found

    def describe(self, entry: KnowledgeEntry) -> str:
        """``"Zestril" → lisinopril (drug, drugs); also: Prinivil, Qbrelis`` for the prompt."""
        concept = self.kb.concept(entry.concept_id)
        synonyms = [s for s in concept.synonyms if s.lower() != entry.matched.lower()]
        also = f"; also: {', '.join(synonyms[:MAX_SYNONYMS])}" if synonyms else ""
        return f'"{entry.matched}" → {entry.preferred} ({entry.kind}, {entry.source}){also}'
