"""The hard rules of the offline verifier: contradictions (tier 5) and the safety floor (tier 4).

SPEC §1 "Safety floor (both modes, never relaxed by inference)": a claim is hallucinated when it
states a medication, dose, frequency or duration with no equivalent in the facts, a diagnosis
neither stated nor inferable, a procedure or test not mentioned, or any detail that directly
contradicts a stated fact. Each rule returns a one-line reason, or ``None`` when it holds.
(Cited sources, referrals and imaging sites: :mod:`clinjudge.judges.unvoiced_orders`.)
Also here: the two rules that gate tier 3 — a number the transcript never says is never inferred,
and a normal examination finding is an abstraction of the exam (tier 3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from clinjudge.grounding.evidence import Unit
from clinjudge.grounding.transcript_facts import FINDING_KINDS, ConceptMention, TranscriptFacts
from clinjudge.grounding.visit_reading import corrects
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.hedges import hedged_before
from clinjudge.text.laterality import Laterality, lateralities_conflict, laterality_mentions
from clinjudge.text.negation import answer_polarity, history_or_hypothetical
from clinjudge.text.normalize import content_tokens
from clinjudge.text.quantities import Quantity
from clinjudge.types import Claim

#: Findings too generic to compare without their site: "pain" with flexion in the note and "no
#: pain" at rest in the transcript are different facts. Site-bearing forms ("knee pain") are kept.
GENERIC_FINDINGS = frozenset(
    ["pain", "tenderness", "swelling", "injury", "injuries", "mass", "masses", "stool", "stools"]
    + ["blood pressure", "discomfort", "symptoms"]
)
#: Relations that make two names the same thing (tier 2) rather than an inference (tier 3).
EQUIVALENCE_RELATIONS = frozenset({"same_as", "lay_for", "expands_to", "brand_of", "xref"})


@dataclass
class ClaimAnalysis:
    """A claim with what the rules read from it."""

    claim: Claim
    tokens: list[tuple[str, int, int]]  # content token, start, end (offsets in the claim)
    mentions: list[ConceptMention]
    quantities: list[Quantity]
    vector: np.ndarray | None
    accounted: list[tuple[int, int]] = field(default_factory=list)  # spans verified by rules

    def covered(self, pool: set[str]) -> list[bool]:
        """Per content token: in ``pool`` or inside a span already verified by a rule."""
        return [
            token in pool or any(s <= start and end <= e for s, e in self.accounted)
            for token, start, end in self.tokens
        ]

    def coverage(self, pool: set[str]) -> float:
        """Share of :meth:`covered` tokens (1 for a claim with none)."""
        hits = self.covered(pool)
        return sum(hits) / len(hits) if hits else 1.0


def concept_contradiction(
    analysis: ClaimAnalysis, facts: TranscriptFacts, window: list[Unit]
) -> str | None:
    """A finding the claim asserts where the transcript denies it, or the reverse.

    Only symptoms, findings and diseases of the Subjective and Objective sections are compared
    (assessment and plan talk of conditions to rule out, which is not an assertion), and only
    when the closest evidence holds the opposite status and the transcript never the claim's
    own. The opposite status must be *said* of the patient (:func:`says_status`,
    :func:`_same_context`): not an affirmation under a spoken hedge ("it sounds like it
    could've been gout"), not a patient's echo of the question, not a relative's or a
    hypothetical finding; and a denied *history* of a symptom ("no history of shoulder pain")
    is contradicted only by an earlier episode, not by today's complaint."""
    if analysis.claim.section not in ("subjective", "objective"):
        return None
    nearby = [(u, t) for u in window for t in facts.mentions[u.index]]
    for m in analysis.mentions:
        if not set(m.kinds) & FINDING_KINDS or not facts.has_concept(m.canonical):
            continue
        if m.surface.lower() in GENERIC_FINDINGS:
            continue
        if m.negated in facts.statuses(m.canonical):
            continue
        if m.negated and not directly_negated(analysis, m):
            continue
        if _narrower_with_same_status(m, facts):
            continue
        history = m.negated and _denies_history(analysis, m) and "disease" not in m.kinds
        opposite = [
            t
            for u, t in nearby
            if t.negated is not None
            and set(t.canonical) & set(m.canonical)
            and says_status(facts, u, t)
            and _same_context(history, u, history_or_hypothetical(u.text, t.start, t.end))
        ]
        if opposite:
            claim_says, transcript_says = (
                ("denies", "affirms") if m.negated else ("affirms", "denies")
            )
            return f"claim {claim_says} '{m.surface}', the transcript {transcript_says} it"
    return None


def says_status(facts: TranscriptFacts, unit: Unit, mention: ConceptMention) -> bool:
    """Whether the transcript sentence states the mention's status: an affirmation under the
    clinician's spoken hedge does not, nor does a reply that only repeats words of the
    question before it ("chest pain or shortness of breath" to "how about chest pain or
    shortness of breath?")."""
    if (
        mention.negated is False
        and unit.speaker == "doctor"
        and hedged_before(unit.text, mention.start)
    ):
        return False  # the clinician's guess; a patient's hedged report is still a report
    if unit.speaker == "doctor" or unit.index == 0:
        return True
    asked = facts.index.units[unit.index - 1]
    return not (
        asked.speaker == "doctor"
        and asked.turn != unit.turn
        and unit.tokens
        and unit.tokens <= asked.tokens
        and answer_polarity(unit.text) is None
    )


def _same_context(claim_history: bool, unit: Unit, said_in: str | None) -> bool:
    """Whether a transcript mention in context ``said_in`` (``"family"``, ``"hypothetical"``,
    ``"historical"`` or ``None``) speaks of what the claim does: a relative's finding never
    does, nor the clinician's hypothetical ("if you get chest pain, call") — the patient's
    "it might have been chills" is a hedged report —; a denied history of a symptom needs an
    earlier one."""
    if said_in == "family" or (said_in == "hypothetical" and unit.speaker == "doctor"):
        return False
    return not claim_history or said_in == "historical"


def _denies_history(analysis: ClaimAnalysis, mention: ConceptMention) -> bool:
    """The claim's negation is of a past history of the finding ("no history of", "denies a
    history of", "never had")."""
    before = analysis.claim.text[max(0, mention.start - 40) : mention.start].lower()
    return re.search(r"\b(?:history|hx|previous|prior|before|never had)\b", before) is not None


def _narrower_with_same_status(mention: ConceptMention, facts: TranscriptFacts) -> bool:
    """The transcript states the claim's status of a narrower form of the finding ("seasonal
    allergies" affirmed, "allergies" to medication denied): no contradiction."""
    words = set(content_tokens(mention.surface))
    return any(
        t.negated is mention.negated and words <= set(content_tokens(t.surface))
        for ms in facts.mentions
        for t in ms
    )


_NEGATION = re.compile(
    r"\b(?:no|not|denies|denied|deny|without|negative for|nor|never|nil)\b", re.I
)
GAP_WORDS = frozenset(
    [
        "any",
        "a",
        "an",
        "the",
        "of",
        "or",
        "and",
        "other",
        "significant",
        "recent",
        "new",
        "her",
        "his",
        "their",
        "associated",
        "left",
        "right",
        "bilateral",
        "mild",
        "moderate",
        "severe",
        "acute",
        "chronic",
        # the verbs of "has not had any", "denies having", "no history of"
        "had",
        "have",
        "has",
        "having",
        "been",
        "experienced",
        "experiencing",
        "noticed",
        "history",
        "felt",
        # a denial that names its findings as examples: "denies any other symptoms such as"
        "symptoms",
        "signs",
        "such",
        "as",
        "like",
        "including",
    ]
)


def directly_negated(analysis: ClaimAnalysis, mention: ConceptMention) -> bool:
    """The negation applies to the finding itself ("denies chest pain", "no fever, chills or
    rash"), not to something about it ("denies previous treatment for her acne")."""
    text = analysis.claim.text
    before = text[: mention.start]
    cues = list(_NEGATION.finditer(before))
    if not cues:
        return False
    gap = before[cues[-1].end() :]
    for other in analysis.mentions:  # other findings listed in between are fine
        if other.end <= mention.start and other.start >= cues[-1].end():
            s, e = other.start - cues[-1].end(), other.end - cues[-1].end()
            gap = gap[:s] + " " * (e - s) + gap[e:]
    words = re.findall(r"[a-z]+", gap.lower())
    return all(w in GAP_WORDS for w in words)


def laterality_contradiction(claim_text: str, facts: TranscriptFacts, window: list[Unit]):
    """Left vs right where the transcript never states the claim's side: compared with the
    evidence, and with every transcript mention of the same site ("left knee" against a
    transcript that only ever says "right knee").

    Only left and right oppose each other: "bilateral" in the note or the transcript covers
    either side, so it contradicts nothing; nor does a claim that names both sides of one site
    ("a splint on the right wrist all the time and on the left only intermittently") clash
    with the transcript's other side, which it states too."""
    near = [lat for u in window for lat in facts.lateralities[u.index]]
    everywhere = [lat for lats in facts.lateralities for lat in lats]
    sides = laterality_mentions(claim_text)
    both = {lat.site for lat in sides if any(lateralities_conflict(lat, other) for other in sides)}
    for side in sides:
        if side.side == "bilateral" or side.site in both:
            continue
        same_site = [lat for lat in everywhere if side.site and lat.site == side.site]
        stated = [lat for lat in near + same_site if lat.side != "bilateral"]
        clash = [s for s in stated if lateralities_conflict(side, s)]
        agree = [
            s
            for s in stated
            if s.side == side.side and (not side.site or not s.site or s.site == side.site)
        ]
        if clash and not agree:
            return f"'{side.side}' contradicts '{clash[0].side}' in the transcript"
        if clash and agree and (later := _corrected_to(facts, side)):
            other = "left" if side.side == "right" else "right"
            return f"the visit corrects '{side.side}' to '{other}': \"{later.text[:120]}\""
    return None


def _corrected_to(facts: TranscriptFacts, side: Laterality) -> Unit | None:
    """The transcript sentence that corrects the claim's side of a site: the last sentence
    naming that site, on the other side, with a cue of correction
    (:func:`clinjudge.grounding.visit_reading.corrects`), after every sentence on the claim's
    side — what the visit says last, and says as a correction, wins (issue 36)."""
    if not side.site:
        return None
    said = [
        (i, lat)
        for i, lats in enumerate(facts.lateralities)
        for lat in lats
        if lat.site == side.site and lat.side != "bilateral"
    ]
    if not said:
        return None
    last_index, last = said[-1]
    unit = facts.index.units[last_index]
    if not lateralities_conflict(side, last) or not corrects(unit.text):
        return None
    return unit


#: Substances the drug dictionaries list that a note names as a nutrient, a lab analyte or a
#: body constituent ("limiting her sodium intake", "glucose levels", "hemoglobin A1c"): not a
#: medication claim. Their words are still checked like any other words.
NOT_MEDICATIONS = frozenset(
    content_tokens(
        "sodium salt potassium glucose sugar hemoglobin haemoglobin iron calcium magnesium "
        "cholesterol oxygen water alcohol caffeine nicotine protein creatinine albumin urea "
        "bicarbonate chloride phosphorus phosphate zinc fiber carbohydrate carbohydrates fat "
        "bilirubin lactate ketones uric acid"
    )
)


def missing_medication(
    analysis: ClaimAnalysis, facts: TranscriptFacts, kb: KnowledgeBase, *, literal_only: bool
) -> str | None:
    """A medication the transcript never names (lexical: by its very name; inference-aware:
    by any name of the same drug, and a drug class by any drug of the class the transcript
    names: "statin" ← "crestor")."""
    for m in analysis.mentions:
        if "drug" not in m.kinds or m.negated:
            continue
        if set(content_tokens(m.surface)) <= NOT_MEDICATIONS:
            continue
        found = literal_mention(m, facts) or (
            not literal_only and (facts.has_concept(m.canonical) or _class_named(m, facts, kb))
        )
        if not found:
            return f"medication '{m.surface}' is not mentioned in the transcript"
    return None


def _class_named(mention: ConceptMention, facts: TranscriptFacts, kb: KnowledgeBase) -> bool:
    """A drug class of which the transcript names a member."""
    if "drug_class" not in mention.kinds:
        return False
    drugs = {t.surface for ms in facts.mentions for t in ms if "drug" in t.kinds}
    return any(kb.related(mention.surface, d) == "in_class" for d in drugs)


def missing_procedure(
    analysis: ClaimAnalysis, facts: TranscriptFacts, kb: KnowledgeBase, *, literal_only: bool
) -> str | None:
    """A procedure or test the transcript never mentions (inference-aware: by any name,
    lay phrasing included — "they took my appendix out" for appendectomy)."""
    for m in analysis.mentions:
        if not (set(m.kinds) & {"procedure", "test"}) or m.negated:
            continue
        if literal_mention(m, facts):
            continue
        if not literal_only and (
            facts.has_concept(m.canonical)
            or facts.phrase_said(kb.lay_phrases(m.canonical))
            or abbreviation_said(m, facts, kb)
        ):
            continue
        return f"procedure/test '{m.surface}' is not mentioned in the transcript"
    return None


def abbreviation_said(mention: ConceptMention, facts: TranscriptFacts, kb: KnowledgeBase) -> bool:
    """The transcript says a short abbreviation of the mention, as speech recognition writes
    it in lower case ("keep doing your pt" for physical therapy): one of its abbreviations
    (:attr:`TranscriptFacts.abbreviations`) expands to the mention."""
    return any(kb.related(w, mention.surface) == "expands_to" for w in facts.abbreviations)


#: Words that make a diagnosis the *object* of a test or a search, not a finding: "a stress
#: test to evaluate for ischemia", "EMG to localize the nerve compression", "rule out DVT".
_PURPOSE = re.compile(
    r"\b(?:(?:evaluat|assess|screen|check|look|test|monitor|watch|work(?:-?up)?)\w*\s+for"
    r"|rul(?:e|ing)\s+out|r/o|to\s+(?:confirm|localize|locali[sz]e|determine|exclude|identify|"
    r"investigate|see\s+if|assess|evaluate)|concern(?:ed)?\s+for|suspicious\s+for)\b",
    re.I,
)


def sought_not_found(claim_text: str, start: int) -> bool:
    """The mention at ``start`` follows a purpose phrase of its clause (:data:`_PURPOSE`)."""
    clause = re.split(r"[.;]", claim_text[:start])[-1]
    return bool(_PURPOSE.search(clause))


def literal_mention(mention: ConceptMention, facts: TranscriptFacts) -> bool:
    """Every content word of the mention occurs in the transcript (as the transcript spells
    it: :meth:`TranscriptFacts.says`)."""
    words = content_tokens(mention.surface)
    return bool(words) and all(facts.says(w) for w in words)


_NORMAL_FINDING = re.compile(
    r"\b(no|without|normal|clear|intact|supple|regular|soft|non-?tender|unremarkable|"
    r"within normal limits|symmetric(?:al)?|alert|oriented|no (?:apparent|acute) distress|"
    r"nontoxic|well-appearing|negative)\b",
    re.I,
)


def normal_exam_finding(analysis: ClaimAnalysis) -> bool:
    """An Objective claim that records a normal or absent finding and states no value: the
    abstraction of an examination the clinician summarised (SPEC §1, tier 3)."""
    claim = analysis.claim
    return (
        claim.section == "objective"
        and not analysis.quantities
        and not any(ch.isdigit() for ch in claim.text)
        and bool(_NORMAL_FINDING.search(claim.text))
    )
