"""The offline SOAP verifier: rules over retrieved transcript evidence and the knowledge base.

Per claim (SPEC §1), in this order:
  1. retrieve transcript evidence (hybrid BM25 + embeddings, widened to neighbouring sentences);
  2. contradictions → tier 5: a finding asserted where the transcript only denies it (or the
     reverse), left vs right on the same site, a statement the visit later corrected
     (inference-aware; :mod:`.corrections`);
  3. safety floor → tier 4 (5 when a stated value disagrees): a medication never named, a
     dose/frequency/duration with no equivalent, a procedure or test never mentioned, a diagnosis
     neither stated nor inferable, a cited guideline, study or organisation the transcript never
     talks about (offline_rules.py), a time the visit gives only to a worsening given to
     another event (inference-aware; :mod:`.time_of_event`);
  4. coverage = |claim content tokens found in the evidence or inside verified quantities| /
     |claim content tokens|; ≥ ``lexical_coverage`` (``strict_coverage`` in the lexical mode)
     → tier 1. The lexical mode stops here: tier 4;
  5. inference-aware only — tokens inside concepts the transcript states in other words
     (synonym, trade/generic name, abbreviation, lay term) also count → tier 2; a close
     paraphrase by embedding → tier 2; a diagnosis linked to stated findings (has_symptom, is_a),
     support from the note's other, transcript-grounded sections (cross-section), a standard
     documentation statement, or a looser semantic match → tier 3; else tier 4 (last resort).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from clinjudge import embeddings
from clinjudge.grounding.evidence import as_evidence
from clinjudge.grounding.exam_systems import claim_systems, unvoiced_reason
from clinjudge.grounding.note_input import NoteInput
from clinjudge.grounding.plan_items import plan_kinds
from clinjudge.grounding.transcript_facts import (
    TranscriptFacts,
    build_transcript_facts,
    concept_mentions,
)
from clinjudge.judges import offline_rules as rules
from clinjudge.judges import quantity_rules
from clinjudge.judges import unvoiced_orders as orders
from clinjudge.judges.attribution import finding_words, misattributed
from clinjudge.judges.claim_features import Assessment, Measures, claim_features
from clinjudge.judges.claim_reading import (
    claim_tokens,
    cross_section,
    exam_word_spans,
    max_cosine,
    tokens_of,
    widen,
)
from clinjudge.judges.combiner import (
    Combiner,
    default_combiner,
    supported_reason,
    unsupported_reason,
)
from clinjudge.judges.corrections import corrected_statement
from clinjudge.judges.denials import denial_answered_yes, other_symptoms_named
from clinjudge.judges.knowledge_support import KnowledgeSupport
from clinjudge.judges.offline_config import OfflineConfig
from clinjudge.judges.offline_rules import ClaimAnalysis
from clinjudge.judges.ongoing import stopped_since
from clinjudge.judges.pair_model import PairScoreMemo, default_pair_memo, pair_text
from clinjudge.judges.severity import lexical_reason, rate_harm
from clinjudge.judges.tiers import normalize_subtype
from clinjudge.judges.time_of_event import time_of_another_event, time_of_worsening
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.quantities import extract_quantities
from clinjudge.types import Claim, Mode, Outcome, Verdict

#: Documentation statements a clinician writes about the encounter itself (counselling given,
#: agreement, follow-up logistics): standard-of-care summaries, tier 3 (SPEC §1 step 4).
_BOILERPLATE = re.compile(
    r"\b(understands? and agrees?|agrees? with the (?:recommended )?(?:medical )?"
    r"(?:treatment )?plan|questions were answered|all (?:of (?:his|her|their) )?questions"
    r"|verbali[sz]ed understanding|discussed (?:the )?(?:findings|diagnosis|treatment options"
    r"|risks|plan|next steps)|(?:findings|diagnosis|options) (?:was|were) discussed"
    r"|continue to monitor|(?:contact|call) (?:my|our|the) office|prescription (?:was )?"
    r"(?:submitted|sent)|return (?:precautions|if)|follow[- ]up as needed)",
    re.I,
)


class OfflineVerifier:
    """Rule-and-retrieval verifier; one instance serves one mode."""

    backend = "offline"
    #: Claims of a note read together: the pair scorer reads them in batches of its own, and
    #: no verdict depends on the batch (the note's claims are embedded once, as a whole).
    claims_per_batch = 64

    def __init__(self, mode: Mode, kb: KnowledgeBase, config: OfflineConfig | None = None):
        self.mode: Mode = mode
        self.kb = kb
        # the lexical judge retrieves by words only (BM25): it has no use for paraphrase
        self.config = config or OfflineConfig(dense=mode != "lexical")
        self.knowledge = KnowledgeSupport(kb, self.config.min_findings)

    async def verify(self, claims: list[Claim], note: NoteInput) -> list[Outcome]:
        """One verdict per claim; a hallucinated one carries its harm category and severity
        (:mod:`.severity`)."""
        return [
            rate_harm(self.decide(a), a.claim.text, a.claim.section, self.kb)
            for a in await self.assess_claims(claims, note)
        ]

    def decide(self, a: Assessment) -> Verdict:
        """The final verdict: a hard rule's stays; otherwise, in inference-aware mode, the
        combiner's probability that a reviewer would call the claim unsupported decides
        between the rules' supported tier and tier 4 (module docstring of :mod:`.combiner`)."""
        combiner = self._combiner
        if a.decided_by_rule or combiner is None or a.features is None:
            return a.verdict
        p = combiner.probability(a.features)
        v = a.verdict
        if p >= combiner.threshold and v.supported:
            return v.model_copy(
                update={
                    "tier": 4,
                    "subtype": "no_basis",
                    "rationale": unsupported_reason(a, p, combiner.threshold),
                }
            )
        if p < combiner.threshold and not v.supported:
            return v.model_copy(
                update={
                    "tier": 3,
                    "subtype": "inference",
                    "rationale": supported_reason(a, p, combiner.threshold),
                }
            )
        return v

    def fingerprint(self) -> dict[str, object]:
        """What decides this verifier's verdicts besides the code: its settings and the digest
        of the combiner it applies (``None`` when it applies none)."""
        combiner = self._combiner
        scorer = self._pair_memo
        return {
            "config": dataclasses.asdict(self.config),
            "combiner": combiner.digest if combiner else None,
            "pair_model": scorer.scorer.digest if scorer else None,
        }

    @property
    def _combiner(self) -> Combiner | None:
        if self.mode == "lexical" or not self.config.combiner:
            return None
        packaged = default_combiner()
        threshold = self.config.combiner_threshold
        if packaged is None or threshold is None:
            return packaged
        return dataclasses.replace(packaged, threshold=threshold)

    @property
    def _pair_memo(self) -> PairScoreMemo | None:
        return default_pair_memo() if self._combiner is not None else None

    async def assess_claims(self, claims: list[Claim], note: NoteInput) -> list[Assessment]:
        """:meth:`assess` for every claim, in order (the transcript facts are built once);
        when the combiner will weigh them, the pair scorer reads every claim it will weigh
        beside its evidence, in one batch (its ``pair`` feature)."""
        assessed = self._assess_all(claims, note)
        scorer, combiner = self._pair_memo, self._combiner
        if scorer is None or combiner is None:
            return assessed
        weighed = [a for a in assessed if not a.decided_by_rule and a.features is not None]
        # The combiner is monotone in the pair score: when a score of 0 and one of 1 give the
        # same decision, the scorer cannot change it and is not run (the reason then gives the
        # bound of the combiner's score, :func:`.combiner.pair_bound`).
        read = []
        for a in weighed:
            feature = combiner.undecided_by(a.features, "pair")
            if feature is None:
                read.append(a)
            else:
                a.features["pair"] = feature
                a.pair_unread = True
        if read:
            pairs = [(a.claim.text, pair_text([e.text for e in a.verdict.evidence])) for a in read]
            for a, p in zip(read, scorer.scores(pairs), strict=True):
                a.features["pair"] = p
        return assessed

    def _assess_all(self, claims: list[Claim], note: NoteInput) -> list[Assessment]:
        facts = self._facts(note)
        if self.config.dense:
            if not note.note_encoded:  # one batch for the whole note, then cache hits
                embeddings.encode([c.text for c in note.sentence_claims()])
                note.note_encoded = True
            vectors: list = list(embeddings.encode([c.text for c in claims]))
        else:
            vectors = [None] * len(claims)
        return [self.assess(c, v, facts, note) for c, v in zip(claims, vectors, strict=True)]

    def _facts(self, note: NoteInput) -> TranscriptFacts:
        dense = self.config.dense
        if dense not in note.facts:
            note.facts[dense] = build_transcript_facts(note.transcript, self.kb, dense=dense)
        return note.facts[dense]

    # -- one claim ---------------------------------------------------------------------------
    def judge(
        self, claim: Claim, vector: np.ndarray | None, facts: TranscriptFacts, note: NoteInput
    ) -> Verdict:
        return self.decide(self.assess(claim, vector, facts, note))

    def assess(
        self, claim: Claim, vector: np.ndarray | None, facts: TranscriptFacts, note: NoteInput
    ) -> Assessment:
        """The rules' verdict on one claim, and — unless a contradiction or safety-floor rule
        decided it — what they measured on the way (:mod:`.claim_features`)."""
        cfg = self.config
        lexical = self.mode == "lexical"
        analysis = ClaimAnalysis(
            claim=claim,
            tokens=claim_tokens(claim.text),
            mentions=concept_mentions(self.kb, claim.text),
            quantities=extract_quantities(claim.text),
            vector=vector,
        )
        hits = facts.index.search(claim.text, k=cfg.top_k, query_vector=vector)
        window = widen(facts, [u for u, _ in hits])
        pool = tokens_of(window)
        evidence = [as_evidence(u, s) for u, s in hits[:3]]

        def verdict(tier: int, subtype: str, why: str, used=()) -> Verdict:
            return Verdict(
                claim_id=claim.id,
                tier=tier,
                subtype=normalize_subtype(tier, subtype),
                rationale=why,
                evidence=evidence,
                knowledge=list(used),
                backend="offline",
            )

        ruled = self._hard_rules(analysis, facts, window, [u for u, _ in hits[:3]], note.note.text)
        if ruled:
            return Assessment(claim, verdict(*ruled), decided_by_rule=True)
        best = hits[0][0] if hits else None
        m = self._measure(analysis, facts, note, window, pool, best)
        if not analysis.tokens:
            return Assessment(
                claim,
                verdict(1, "restatement", "no checkable content beyond polarity words"),
                features=m.features,
            )
        restated = cfg.strict_coverage if lexical else cfg.lexical_coverage
        if m.lexical_coverage >= restated:
            why = f"the visit says this ({m.lexical_coverage:.0%} of its content words appear)"
            return Assessment(
                claim, verdict(1, "restatement", why), features=m.features, novel=m.novel
            )
        if lexical:
            why = lexical_reason(m.novel, m.lexical_coverage)
            return Assessment(
                claim, verdict(4, "no_basis", why), features=m.features, novel=m.novel
            )
        tier, subtype, why, used = m.cascade
        return Assessment(
            claim,
            verdict(tier, subtype, why, used),
            m.number_rule or (m.by_knowledge and not m.novel.specifics()),
            features=m.features,
            novel=m.novel,
        )

    def _hard_rules(self, analysis, facts, window, closest, note_text: str) -> tuple | None:
        """Contradictions (tier 5) and the safety floor (tier 4): ``(tier, subtype, reason)``."""
        lexical, claim = self.mode == "lexical", analysis.claim.text
        attributed = self.config.attribution and not lexical
        reason = (
            rules.concept_contradiction(analysis, facts, window)
            or rules.laterality_contradiction(analysis.claim.text, facts, window)
            or orders.imaging_site_contradiction(analysis.claim.text, facts)
            or denial_answered_yes(analysis.claim.text, analysis.claim.section, facts, self.kb)
            or (
                other_symptoms_named(claim, analysis.claim.section, facts, self.kb, note_text)
                if not lexical
                else None
            )
            or (corrected_statement(analysis, facts) if not lexical else None)
            or (stopped_since(analysis, facts, self.kb) if not lexical else None)
            or (
                misattributed(claim, facts.reading, finding_words(analysis.mentions))
                if attributed
                else None
            )
        )
        if reason:
            return 5, "contradiction", reason
        reason = rules.missing_medication(analysis, facts, self.kb, literal_only=lexical)
        if reason:
            return 4, "no_basis", reason
        quantity = quantity_rules.check_quantities(analysis, facts, closest)
        if quantity:
            return quantity[0], "", quantity[1]
        reason = (
            rules.missing_procedure(analysis, facts, self.kb, literal_only=lexical)
            or self.knowledge.missing_diagnosis(analysis, facts, literal_only=lexical)
            or orders.unsupported_citation(analysis.claim.text, facts)
            or orders.unmentioned_referral(analysis.claim.text, facts)
            or (time_of_worsening(analysis, facts) if not lexical else None)
            or (time_of_another_event(analysis, facts) if not lexical else None)
        )
        return (4, "no_basis", reason) if reason else None

    def _measure(self, analysis, facts, note, window, pool, best) -> Measures:
        """Coverage, similarity and the inference checks of steps 2–4, and the tier the
        cascade of thresholds gives (:class:`Measures`)."""
        cfg = self.config
        m = Measures(lexical_coverage=analysis.coverage(pool))
        m.coverage = m.lexical_coverage
        if self.mode == "lexical":
            m.novel, m.features = claim_features(analysis, m, pool, facts)
            return m
        spans, used, subtype = self.knowledge.equivalents(analysis, facts, window)
        analysis.accounted.extend(spans)
        normal = rules.normal_exam_finding(analysis)
        objective = analysis.claim.section == "objective"
        systems = claim_systems(analysis.claim.text) if objective else []
        unvoiced = [name for name in systems if name not in facts.voiced]
        if normal and systems and not unvoiced:  # abstraction of an exam the visit voiced
            analysis.accounted.extend(exam_word_spans(analysis, systems))
        covered = m.coverage = analysis.coverage(pool)
        cosine = m.cosine = max_cosine(facts, window, analysis.vector)
        m.coverage_anywhere = analysis.coverage(facts.tokens)
        inferred = self.knowledge.diagnosis_inference(analysis, facts)
        cross = cross_section(analysis, note, pool, cfg)
        documentation = bool(_BOILERPLATE.search(analysis.claim.text))
        m.unstated_number = quantity_rules.unstated_number(analysis, facts)
        # the single best evidence sentence and its neighbours: words gathered from far apart
        # ("Protonix for his migraines") score low here and high on the window
        local = analysis.coverage(tokens_of(widen(facts, [best] if best else [])))
        m.flags = {
            "exam_unvoiced": bool(unvoiced),
            "local_coverage": local,
            "plan_unvoiced": any(k not in facts.plans for k in plan_kinds(analysis.claim.text)),
        }
        if used and covered >= cfg.knowledge_coverage:
            why = f"the visit says this in other terms ({covered:.0%} of its words, with synonyms)"
            m.cascade, m.by_knowledge = (2, subtype, why, used), True
        elif cosine >= cfg.paraphrase_cosine and covered >= cfg.paraphrase_coverage:
            why = f"the visit says this in other words (meaning similarity {cosine:.2f})"
            m.cascade = (2, "paraphrase", why, ())
        elif inferred:
            m.cascade, m.by_knowledge = (3, "inference", inferred[0], inferred[1]), True
        elif cross:
            m.cascade = (3, "inference", cross, used)
        elif documentation:
            m.cascade = (3, "inference", "standard documentation statement", ())
        elif m.unstated_number:  # a specific value is never inferred (safety floor)
            why = f"value {m.unstated_number} is not stated in the transcript"
            m.cascade, m.number_rule = (4, "no_basis", why, ()), True
        elif normal and unvoiced:
            why = unvoiced_reason(unvoiced[0])
            m.cascade = (4, "no_basis", why, ())
        elif normal:
            m.cascade = (3, "inference", "normal examination finding (exam abstraction)", ())
        elif (
            (cosine >= cfg.inference_cosine and covered >= cfg.inference_coverage)
            or (covered >= cfg.summary_min_coverage and cosine >= cfg.summary_min_cosine)
            or cosine >= cfg.semantic_cosine
        ):
            why = (
                "a fair clinical summary of what the visit says "
                f"(similarity {cosine:.2f}, {covered:.0%} of its words)"
            )
            m.cascade = (3, "inference", why, used)
        elif m.coverage_anywhere >= cfg.summary_coverage and cosine >= cfg.summary_cosine:
            share = m.coverage_anywhere
            why = f"sums up facts stated across the visit ({share:.0%} of its words appear)"
            m.cascade = (3, "inference", why, used)
        else:
            why = (
                "nothing in the visit supports this: no passage says it or something close "
                f"({covered:.0%} of its content words appear; best similarity {cosine:.2f})"
            )
            m.cascade = (4, "no_basis", why, ())
        m.novel, m.features = claim_features(analysis, m, pool, facts)
        return m
