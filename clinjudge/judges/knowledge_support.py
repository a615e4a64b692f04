"""What the knowledge base lets the inference-aware verifier accept (SPEC §1 steps 2–4).

- :meth:`KnowledgeSupport.equivalents`: claim concepts the transcript states in other words —
  the same concept class, an equivalence relation (lay term, abbreviation, brand), an
  abbreviation sense spelled out in the evidence, or a lay phrase said with other words between
  ("any blood in your stool ?" for hematochezia) → tier 2;
- :meth:`KnowledgeSupport.inferable`: a diagnosis that follows from what the transcript affirms —
  a relation other than ``has_symptom`` to an affirmed mention (``is_a`` a stated condition,
  ``treated_by`` a drug the visit names) or ``has_symptom`` links to at least ``min_findings``
  distinct affirmed findings → tier 3; :meth:`KnowledgeSupport.missing_diagnosis` is the safety
  floor's other side: a diagnosis neither stated nor inferable → tier 4.
"""

from __future__ import annotations

from clinjudge.grounding.evidence import Unit
from clinjudge.grounding.transcript_facts import ConceptMention, TranscriptFacts
from clinjudge.judges import offline_rules as rules
from clinjudge.judges.offline_rules import ClaimAnalysis
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.normalize import content_tokens
from clinjudge.types import KnowledgeEntry


class KnowledgeSupport:
    """Knowledge-base checks of one verifier."""

    def __init__(self, kb: KnowledgeBase, min_findings: int) -> None:
        self.kb = kb
        self.min_findings = min_findings

    def equivalents(self, analysis: ClaimAnalysis, facts: TranscriptFacts, window: list[Unit]):
        """Claim mentions the transcript states in other words: the same concept class, an
        equivalence relation (lay term, abbreviation, brand) with a transcript mention, or — for
        an abbreviation — one of its senses spelled out in the evidence. Returns their spans,
        knowledge entries and the sub-type."""
        spans: list[tuple[int, int]] = []
        used: list[KnowledgeEntry] = []
        kinds: set[str] = set()
        pool = set().union(*(u.tokens for u in window)) if window else set()
        surfaces = {t.surface.lower(): t.surface for ms in facts.mentions for t in ms}
        for m in analysis.mentions:
            if rules.literal_mention(m, facts):
                continue
            relation = "same_as" if facts.has_concept(m.canonical) else None
            if relation is None:
                relations = (self.kb.related(m.surface, t) for t in surfaces.values())
                relation = next((r for r in relations if r in rules.EQUIVALENCE_RELATIONS), None)
            if relation is None and self.sense_stated(m, pool):
                relation = "expands_to"
            if relation is None and facts.phrase_said(self.kb.lay_phrases(m.canonical)):
                relation = "lay_for"  # "any blood in your stool ?" for hematochezia
            if relation is None and rules.abbreviation_said(m, facts, self.kb):
                relation = "expands_to"  # "keep doing your pt" for physical therapy
            if relation is None:
                continue
            spans.append((m.start, m.end))
            used.extend(self.entries(m, relation))
            kinds |= set(m.kinds)
        if "drug" in kinds:
            subtype = "trade_generic"
        elif "abbreviation" in kinds:
            subtype = "abbreviation"
        else:
            subtype = "terminology"
        return spans, used, subtype

    def sense_stated(self, mention: ConceptMention, pool: set[str]) -> bool:
        """An abbreviation one of whose senses is spelled out in the evidence ("ROM" where the
        transcript says "range of motion"); the context decides between senses."""
        if "abbreviation" not in mention.kinds:
            return False
        for cid in mention.concept_ids:
            for relation, target in self.kb.concept(cid).relations:
                if relation != "expands_to":
                    continue
                if target.startswith("TERM:"):
                    sense = target.split(":", 1)[1]
                elif target in self.kb.lexicon.pos:
                    sense = self.kb.concept(target).preferred
                else:
                    continue
                words = content_tokens(sense)
                if words and all(w in pool for w in words):
                    return True
        return False

    def missing_diagnosis(self, analysis, facts, *, literal_only: bool) -> str | None:
        for m in analysis.mentions:
            if "disease" not in m.kinds or m.negated or rules.literal_mention(m, facts):
                continue
            if rules.sought_not_found(analysis.claim.text, m.start):
                continue
            if literal_only:
                return f"diagnosis '{m.surface}' is not stated in the transcript"
            if not facts.has_concept(m.canonical) and not self.inferable(m, facts):
                return f"diagnosis '{m.surface}' is neither stated nor inferable"
        return None

    def diagnosis_inference(self, analysis, facts) -> tuple[str, list[KnowledgeEntry]] | None:
        for m in analysis.mentions:
            if "disease" in m.kinds and not m.negated and not facts.has_concept(m.canonical):
                link = self.inferable(m, facts)
                if link:
                    analysis.accounted.append((m.start, m.end))
                    return f"'{m.surface}' is inferable: {link}", self.entries(m, "has_symptom")
        return None

    def inferable(self, mention: ConceptMention, facts: TranscriptFacts) -> str | None:
        """How the diagnosis follows from what the transcript affirms: a relation other than
        ``has_symptom`` to an affirmed mention (``is_a`` a stated condition, ``treated_by`` a
        drug the visit names — the standard-of-care reading), or ``has_symptom`` links to at
        least ``min_findings`` distinct affirmed findings — a symptom *picture*: one shared
        symptom ("shortness of breath") fits too many diagnoses to infer any of them."""
        seen: set[str] = set()
        findings: dict[tuple[str, ...], str] = {}  # one per knowledge class
        for unit_mentions in facts.mentions:
            for t in unit_mentions:
                if t.negated is not False or t.surface in seen:
                    continue
                seen.add(t.surface)
                relation = self.kb.related(mention.surface, t.surface)
                if relation == "has_symptom":
                    findings.setdefault(tuple(t.canonical), t.surface)
                elif relation:
                    return f"{relation} '{t.surface}'"
        if len(findings) >= self.min_findings:
            return "has_symptom " + ", ".join(f"'{f}'" for f in list(findings.values())[:3])
        return None

    def entries(self, mention: ConceptMention, relation: str) -> list[KnowledgeEntry]:
        return [
            self.kb.entry(self.kb.concept(cid), relation).model_copy(
                update={"matched": mention.surface}
            )
            for cid in mention.concept_ids[:2]
        ]
