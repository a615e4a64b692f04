"""Knowledge entries handed to the LLM judge as extra context per claim (SPEC §1 "Knowledge
retrieval"): the concepts the claim mentions, with synonyms and trade/generic names."""

from __future__ import annotations

from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.types import KnowledgeEntry

MAX_ENTRIES_PER_CLAIM = 6
MAX_SYNONYMS = 6
#: Other names of one mention in a per-claim prompt (:meth:`KnowledgeLookup.brief`).
BRIEF_NAMES = 4


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

    def brief(self, entries: list[KnowledgeEntry], most: int = BRIEF_NAMES) -> str:
        """The other names of what a claim mentions, one line per mention, at most ``most``
        names each -- ``Tramadol = conzip, rybix, ultram`` -- for a prompt that pays per claim
        (the prefix-stable claim protocol); mentions with no other name are left out."""
        names: dict[str, list[str]] = {}
        for entry in entries:
            concept = self.kb.concept(entry.concept_id)
            said = names.setdefault(entry.matched, [])
            for name in (entry.preferred, *concept.synonyms):
                if name.lower() != entry.matched.lower() and name.lower() not in map(
                    str.lower, said
                ):
                    said.append(name)
        return "\n".join(
            f"{matched} = {', '.join(others[:most])}" for matched, others in names.items() if others
        )
