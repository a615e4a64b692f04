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
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.laterality import lateralities_conflict, laterality_mentions
from clinjudge.text.normalize import content_tokens
from clinjudge.text.quantities import Quantity, quantities_agree
from clinjudge.types import Claim

#: Quantity kinds the safety floor protects (medication dose, frequency, duration).
FLOOR_QUANTITIES = frozenset({"dose", "frequency", "duration"})
#: Quantity kinds that can contradict a stated value.
CHECKED_QUANTITIES = FLOOR_QUANTITIES | {"vital", "percent"}
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
    own."""
    if analysis.claim.section not in ("subjective", "objective"):
        return None
    nearby = [t for u in window for t in facts.mentions[u.index]]
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
        opposite = [
            t for t in nearby if t.negated is not None and set(t.canonical) & set(m.canonical)
        ]
        if opposite:
            claim_says, transcript_says = (
                ("denies", "affirms") if m.negated else ("affirms", "denies")
            )
            return f"claim {claim_says} '{m.surface}', the transcript {transcript_says} it"
    return None


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
    either side, so it contradicts nothing."""
    near = [lat for u in window for lat in facts.lateralities[u.index]]
    everywhere = [lat for lats in facts.lateralities for lat in lats]
    for side in laterality_mentions(claim_text):
        if side.side == "bilateral":
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
    return None


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


def check_quantities(
    analysis: ClaimAnalysis, facts: TranscriptFacts, window: list[Unit]
) -> tuple[int, str] | None:
    """Each dose/frequency/duration/vital/percent of the claim must agree with a stated one.

    For a claim about a drug the value must be stated where that drug is discussed (so a
    frequency said of another drug does not count); otherwise anywhere in the transcript.
    Agreeing → accounted for. Otherwise, disagreeing with a value of the same kind in that
    evidence → tier 5; a floor quantity with no equivalent at all → tier 4."""
    for q in analysis.quantities:
        if q.kind not in CHECKED_QUANTITIES:
            continue
        context = drug_context(analysis, facts, window, near=q.start)
        nearby = [t for u in context for t in facts.quantities[u.index]]
        about_drug = any("drug" in m.kinds for m in analysis.mentions) and bool(context)
        stated = nearby if about_drug else [t for ts in facts.quantities for t in ts]
        owned = drug_quantities(analysis, facts, near=q.start) if about_drug else []
        if any(t.kind == q.kind for t in owned):  # the drug's own values decide
            stated = nearby = owned
        if any(quantities_agree(q, t) for t in stated) or any(_asr_variant(q, t) for t in nearby):
            analysis.accounted.append((q.start, q.end))
            continue
        if any(quantities_agree(q, t) is False for t in nearby):
            return 5, f"'{q.text}' disagrees with the value stated in the transcript"
        if q.kind in FLOOR_QUANTITIES:
            return 4, f"{q.kind} '{q.text}' has no equivalent in the transcript"
    return None


def _asr_variant(claim: Quantity, stated: Quantity) -> bool:
    """Spoken forms a parser cannot fully read: a dose said without its unit ("five hundred of
    metformin"), or a vital/percent whose decimal point was lost ("ninety seven . seven" read as
    97, "zero zero five percent" as 5: same unit, equal up to 2% or a power of ten)."""
    if claim.kind == "dose" and stated.kind == "other" and not stated.unit:
        return stated.value == claim.value
    if claim.unit != stated.unit or claim.kind not in ("vital", "percent") or not stated.value:
        return False
    ratio = claim.value / stated.value
    return abs(ratio - 1) <= 0.02 or any(abs(ratio - 10.0**k) < 1e-9 for k in (-3, -2, -1))


def drug_quantities(analysis: ClaimAnalysis, facts: TranscriptFacts, near: int) -> list[Quantity]:
    """Transcript quantities said of the claim's drug (the one named closest before ``near``):
    each quantity belongs to the last drug named before it in its sentence, or, when its sentence
    names none, to the last drug of the previous sentence ("lasix 80 milligrams once a day ...
    carvedilol 25 milligrams twice a day": "twice" belongs to carvedilol)."""
    drugs = [m for m in analysis.mentions if "drug" in m.kinds]
    before = [m for m in drugs if m.start <= near]
    wanted = set((before[-1] if before else drugs[0]).canonical)
    owned: list[Quantity] = []
    carried: ConceptMention | None = None
    for mentions, quantities in zip(facts.mentions, facts.quantities, strict=True):
        named = sorted((m for m in mentions if "drug" in m.kinds), key=lambda m: m.start)
        for q in quantities:
            owner = next((m for m in reversed(named) if m.start <= q.start), carried)
            if owner is not None and wanted & set(owner.canonical):
                owned.append(q)
        if named:
            carried = named[-1]
    return owned


def drug_context(
    analysis: ClaimAnalysis, facts: TranscriptFacts, window: list[Unit], near: int | None = None
) -> list[Unit]:
    """Transcript sentences (± two) that speak of the claim's drug — the drug named closest
    before offset ``near`` when the claim names several ("Norvasc 10 mg daily and carvedilol
    25 mg twice daily") — else ``window`` when the claim names no drug."""
    drugs = [m for m in analysis.mentions if "drug" in m.kinds]
    if not drugs:
        return window
    if near is not None and len(drugs) > 1:
        before = [m for m in drugs if m.start <= near]
        drugs = [before[-1]] if before else drugs[:1]
    wanted = {cid for m in drugs for cid in m.canonical}
    units = facts.index.units
    picked: dict[int, Unit] = {}
    for i, mentions in enumerate(facts.mentions):
        if any(cid in wanted for t in mentions for cid in t.canonical):
            for j in range(max(0, i - 2), min(len(units), i + 3)):
                picked[j] = units[j]
    return [picked[i] for i in sorted(picked)]


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
            facts.has_concept(m.canonical) or facts.phrase_said(kb.lay_phrases(m.canonical))
        ):
            continue
        return f"procedure/test '{m.surface}' is not mentioned in the transcript"
    return None


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


#: Numbers that are not clinical values: calendar dates (01/20/2020, 2018 — documentation
#: metadata, spoken in too many ways to match), clock times, anatomical ordinals, and numbers
#: that are part of a name ("type 2 diabetes", "COVID-19", "grade II", "L4-L5", "B12").
_DATE = re.compile(
    r"\b(?:\d{1,2}/){1,2}\d{2,4}\b|\b(?:19|20)\d{2}\b"  # dates
    r"|\b\d{1,2}:\d{2}\b"  # clock times
    r"|\b\d+(?:st|nd|rd|th)\b"  # ordinals naming anatomy ("5th metatarsal")
    r"|\ball \d quadrants\b"
    r"|\b(?:type|grade|stage|class|phase|cranial nerves?)\s+\d+\b"  # names with a number
    r"|[A-Za-z]-?\d+\b",  # COVID-19, L4, B12, A1c's "1"
    re.I,
)


def unstated_number(analysis: ClaimAnalysis, facts: TranscriptFacts) -> str | None:
    """A number of the claim the transcript never says (and no rule accounted for): specific
    values are never inferred (SPEC §1 safety floor)."""
    dates = [m.span() for m in _DATE.finditer(analysis.claim.text)]
    for token, start, end in analysis.tokens:
        if not token[:1].isdigit() or token in facts.tokens or token in facts.numbers:
            continue
        if any(s <= start and end <= e for s, e in dates):
            continue
        if not any(s <= start and end <= e for s, e in analysis.accounted):
            return f"'{analysis.claim.text[start:end]}'"
    return None
