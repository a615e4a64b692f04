"""The offline verifier's rules on numbers (SPEC §1 safety floor and contradictions): each
dose, frequency, duration, vital sign and percentage of a claim must agree with one the
transcript states of the same thing (:func:`check_quantities`), and a number the transcript
never says is never inferred (:func:`unstated_number`)."""

from __future__ import annotations

import re

from clinjudge.grounding.evidence import Unit
from clinjudge.grounding.transcript_facts import ConceptMention, TranscriptFacts
from clinjudge.judges.offline_rules import ClaimAnalysis
from clinjudge.text.quantities import Quantity, quantities_agree

#: Quantity kinds the safety floor protects (medication dose, frequency, duration).
FLOOR_QUANTITIES = frozenset({"dose", "frequency", "duration"})
#: Quantity kinds that can contradict a stated value.
CHECKED_QUANTITIES = FLOOR_QUANTITIES | {"vital", "percent"}


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
        said = next((t for t in nearby if quantities_agree(q, t) is False), None)
        if said is not None:
            return 5, f"'{q.text}' disagrees with what the visit says: '{said.text}'"
        if q.kind in FLOOR_QUANTITIES:
            return 4, f"the visit never gives this {q.kind}: '{q.text}' has no equivalent"
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
