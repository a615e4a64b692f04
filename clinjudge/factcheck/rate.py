"""Offline rating of a claim from its retrieved evidence alone (SPEC §3 step 4).

The evidence is the retrieved passages (whitespace normalised). The verdict is the prose-evidence
support rule of :mod:`clinjudge.factcheck.support`: ``supported`` ⇔ the claim asserts no
unsupported specific — no clinical concept, number, named source or strength word
("significantly", "essential", "always" …) the evidence lacks, no evidence sentence about the
claim saying the opposite (effect denied / asserted, direction swapped), and, unless the claim is
a hedged inference ("may", "suggests", "should" …), fewer than 4 uncommon words the evidence never
uses. No evidence at all → ``not_supported``.
The rating keeps the continuous ``support_score`` (1 / (1 + unsupported specifics)).
Measured (bench/bench_factcheck.py --split all, 500 rows): paired AUROC of 1 − unsupported rate
0.776 dev / 0.767 held-out, ties 32% / 31% (0.684 / 0.678 and 44% / 39% before hedged inference
and strength words; 0.531 / 0.529 and 59% / 58% with the SOAP verifier); of the answer's mean
support score 0.829 dev / 0.836 held-out (0.754 / 0.720 before). Ground-truth answers with ≥ 1
not-supported claim 46% (65% before; 26–31% with the verifier, which passed hallucinations too)
against 77–80% of hallucinated ones; 0.08 s per answer (median; the verifier took 1.5 s).

- ``checkable`` (the evidence addressed the claim): at least ``checkable_coverage`` (½) of the
  claim's content words occur in the evidence, or a clinical concept of the claim is mentioned in
  the evidence (same knowledge class) and ``concept_coverage`` (⅓) of its words occur there.

What was measured and dropped (MedHallu, paired AUROC of 1 − unsupported rate, ground truth vs
hallucinated answer; bench/bench_factcheck.py; "dev" = even rows, 228 scored pairs):

- The SOAP judge's :class:`~clinjudge.judges.offline.OfflineVerifier` (inference-aware mode, the
  evidence in place of the transcript), used until issue-6 quality work: 0.531 on dev, 0.529 on
  held-out, 59% ties, ground truths flagged 26–31%. Its loose tier-3 rule (embedding similarity with
  partial word coverage) passes on-topic hallucinations; switching it off flagged ground truths
  too (60 rows: 0.59 → 0.53, ground truths flagged 30% → 68%).
- Embedding similarity as support: a hallucinated answer paraphrases the abstract and the question,
  a true conclusion generalises beyond it, so similarity points the wrong way — per-claim best
  sentence cosine averaged over the answer 0.40, best two-sentence window 0.37, rate of claims with
  window cosine ≥ t 0.42–0.48 for t = 0.4…0.7. Any "cosine ≥ t AND coverage ≥ c" rule inherits it.
- Share of the claim's content words found in the evidence: 0.54 (mean), 0.47 (minimum).
- Novel numbers alone 0.55 (86% ties), novel sources alone 0.53 (93% ties), novel clinical concepts
  alone 0.60 (67% ties): kept as parts of the rule, too rare to carry it.
- Flagging a claim for one uncommon novel word: 0.59 (Zipf < 4.5) to 0.56 (< 5.0) — almost every
  claim has one; a count threshold works better (< 4 words at Zipf < 5.0: 0.67, 0.68 with concepts).
- Clause-level claims (cutting a sentence at "; ", ", which", ", indicating", ", suggesting",
  " because ", " due to ", " rather than ", " while " when both sides keep ≥ 3 content words, so an
  invented mechanism is rated alone): 0.684 → 0.599 (support score 0.754 → 0.674); with ≥ 6
  words 0.636 / 0.686. Shorter claims carry fewer novel words each and fall under the count
  threshold, so the invented specifics of a hallucination are diluted rather than isolated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from clinjudge.factcheck.decompose import CLINICAL_KINDS
from clinjudge.factcheck.models import ClaimRating, FactClaim
from clinjudge.factcheck.support import SupportRule, assess
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.search.base import Passage
from clinjudge.text.normalize import content_tokens
from clinjudge.types import CallError, ParseFailure

#: Passage texts whose concepts are remembered per rater (they repeat across an answer's claims).
CONCEPT_CACHE_SIZE = 5000


class ClaimRater(Protocol):
    backend: str

    async def rate(
        self, claim: FactClaim, passages: list[Passage], question: str | None
    ) -> ClaimRating | ParseFailure | CallError: ...


@dataclass(frozen=True)
class CheckableRule:
    checkable_coverage: float = 0.5
    concept_coverage: float = 1 / 3


class OfflineRater:
    """The prose-evidence support rule over retrieved passages (module docstring)."""

    backend = "offline"

    def __init__(
        self,
        kb: KnowledgeBase,
        rule: CheckableRule | None = None,
        support: SupportRule | None = None,
    ) -> None:
        self.kb = kb
        self.rule = rule or CheckableRule()
        self.support = support or SupportRule()
        self._concepts: dict[str, set[str]] = {}

    async def rate(
        self, claim: FactClaim, passages: list[Passage], question: str | None = None
    ) -> ClaimRating:
        if not passages:
            return ClaimRating(
                verdict="not_supported",
                checkable=False,
                rationale="no evidence retrieved",
                support_score=0.0,
            )
        texts = [" ".join(p.text.split()) for p in passages]
        if len(self._concepts) > CONCEPT_CACHE_SIZE:
            self._concepts.clear()
        found = assess(claim.text, texts, self.kb, self.support, self._concepts)
        return ClaimRating(
            verdict="supported" if found.supported else "not_supported",
            checkable=self.checkable(claim.text, "\n".join(texts)),
            rationale=found.rationale(),
            cited=_cited(claim.text, passages, texts),
            support_score=round(found.score, 4),
        )

    def checkable(self, claim: str, evidence: str) -> bool:
        """The evidence addressed the claim (rule in the module docstring)."""
        words = set(content_tokens(claim))
        if not words:
            return False
        coverage = len(words & set(content_tokens(evidence))) / len(words)
        if coverage >= self.rule.checkable_coverage:
            return True
        found = {c for m in self.kb.concepts_in(evidence) for c in m.canonical}
        shared = any(
            set(m.kinds) & CLINICAL_KINDS and set(m.canonical) & found
            for m in self.kb.concepts_in(claim)
        )
        return shared and coverage >= self.rule.concept_coverage


def _cited(claim: str, passages: list[Passage], texts: list[str]) -> list[str]:
    """Ids of the passages sharing the most content words with the claim (the evidence the verdict
    rests on): the best one, and any other within one word of it; none when no word is shared."""
    words = set(content_tokens(claim))
    shared = [len(words & set(content_tokens(t))) for t in texts]
    best = max(shared, default=0)
    if not best:
        return []
    return list(dict.fromkeys(p.id for p, n in zip(passages, shared, strict=True) if n >= best - 1))
