"""Offline rating of a claim from its retrieved evidence alone (SPEC §3 step 4).

The evidence text is the retrieved passages joined in rank order, one per line; the claim is
judged against it by the SOAP judge's :class:`~clinjudge.judges.offline.OfflineVerifier` in the
``inference-aware`` mode, with the evidence in the place of the transcript and the claim alone in
the place of the note (so nothing else of the answer can support it):

- ``supported`` ⇔ tier ≤ 3 (stated, stated in equivalent terms, or a knowledge-base inference
  from the evidence); tiers 4–5 (no basis, contradiction: another dose, a drug the evidence never
  names, a negation flipped) → ``not_supported``. No evidence at all → ``not_supported``. The
  verifier keeps its SOAP thresholds (``config`` may replace them): switching off its loose tier-3
  rules (a "clinical summary" by embedding similarity with partial word coverage) was measured on
  60 MedHallu rows and made things worse — paired AUROC 0.59 → 0.53, ground-truth answers flagged
  30% → 68% (bench/bench_factcheck.py).
- ``checkable`` (the evidence addressed the claim): at least ``checkable_coverage`` (½) of the
  claim's content words occur in the evidence, or a clinical concept of the claim is mentioned in
  the evidence (same knowledge class) and ``concept_coverage`` (⅓) of its words occur there.

The verifier was built for dialogue: on prose it reads the evidence as a plain transcript with no
speakers, so the question–answer polarity rule never fires and negation is read per sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from clinjudge.factcheck.decompose import CLINICAL_KINDS
from clinjudge.factcheck.models import ClaimRating, FactClaim
from clinjudge.judges.base import NoteInput
from clinjudge.judges.offline import OfflineConfig, OfflineVerifier
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.search.base import Passage
from clinjudge.text.normalize import content_tokens
from clinjudge.types import CallError, Claim, ParseFailure, Verdict


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
    """The offline verifier over retrieved passages (module docstring)."""

    backend = "offline"

    def __init__(
        self,
        kb: KnowledgeBase,
        rule: CheckableRule | None = None,
        config: OfflineConfig | None = None,
    ) -> None:
        self.kb = kb
        self.verifier = OfflineVerifier("inference-aware", kb, config)
        self.rule = rule or CheckableRule()

    async def rate(
        self, claim: FactClaim, passages: list[Passage], question: str | None = None
    ) -> ClaimRating:
        if not passages:
            return ClaimRating(
                verdict="not_supported", checkable=False, rationale="no evidence retrieved"
            )
        evidence = "\n".join(" ".join(p.text.split()) for p in passages)
        note = NoteInput(evidence, claim.text)
        section = note.note.sections[0].soap if note.note.sections else "subjective"
        probe = Claim(id=claim.id, text=claim.text, section=section, start=0, end=len(claim.text))
        outcome = (await self.verifier.verify([probe], note))[0]
        assert isinstance(outcome, Verdict)  # the offline verifier always gives a verdict
        return ClaimRating(
            verdict="supported" if outcome.supported else "not_supported",
            checkable=self.checkable(claim.text, evidence),
            rationale=f"tier {outcome.tier} ({outcome.subtype}): "
            + outcome.rationale.replace("transcript", "evidence"),
            cited=_cited(outcome, passages),
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


def _cited(verdict: Verdict, passages: list[Passage]) -> list[str]:
    """Ids of the passages holding the verifier's evidence sentences."""
    cited: list[str] = []
    for ev in verdict.evidence:
        for p in passages:
            if ev.text and ev.text in " ".join(p.text.split()) and p.id not in cited:
                cited.append(p.id)
                break
    return cited
