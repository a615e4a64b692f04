"""The offline verifier's rules on numbers (SPEC §1 safety floor and contradictions): each
dose, frequency, duration, vital sign and percentage of a claim must agree with one the
transcript states of the same thing (:func:`check_quantities`), and a number the transcript
never says is never inferred (:func:`unstated_number`)."""

from __future__ import annotations

import re

from clinjudge.grounding.evidence import Unit
from clinjudge.grounding.transcript_facts import ConceptMention, TranscriptFacts
from clinjudge.judges.offline_rules import ClaimAnalysis
from clinjudge.judges.unvoiced_orders import SITES
from clinjudge.text.clauses import CLAUSE_BREAK, change_target, from_now
from clinjudge.text.normalize import content_token_spans, stem
from clinjudge.text.numbers import format_number
from clinjudge.text.quantities import Quantity, quantities_agree

#: Quantity kinds the safety floor protects (medication dose, frequency, duration).
FLOOR_QUANTITIES = frozenset({"dose", "frequency", "duration"})
#: Quantity kinds that can contradict a stated value.
CHECKED_QUANTITIES = FLOOR_QUANTITIES | {"vital", "percent"}


def check_quantities(
    analysis: ClaimAnalysis, facts: TranscriptFacts, window: list[Unit]
) -> tuple[int, str] | None:
    """Each dose/frequency/duration/vital/percent of the claim must agree with a stated one.

    A value bound to a drug in the claim (:func:`bound_drug`: "metformin 1000 mg") must be
    stated of that drug, or where it is discussed when the transcript binds it no value of
    the kind, or as a dose said of no drug a few sentences from it ("the new prescription will
    be for four milligrams"; a frequency of no drug only where the drug is discussed); a value
    said of another drug does not count. Any other value may be stated anywhere in the
    transcript. A new value of a change ("increase the lisinopril to 40 milligrams") and the
    regimen the patient is on ("takes 20 mg") are of different times: neither contradicts
    the other. Agreeing → accounted for. Otherwise tier 5 only when the visit states another
    value **of the same thing**: a value the transcript binds to the same drug
    (:func:`drug_quantities`) — or, when it binds none of the kind, one said of no drug where
    the drug is discussed ("how often? — just once a day"); a vital sign or percentage in the
    claim's evidence (its unit names the measure); any other value bound to no drug only in a
    sentence that shares a content word with the claim's words around it (not "sitting a
    half-hour" vs "a work note for six weeks"). A paired reading whose first number the visit
    says on its own ("116/60" where it says "116 on the dot" and "140 over 60") is another
    occasion's reading given in part: tier 4. A value said of a body site (within
    :data:`SITE_REACH` characters: "facial wash twice daily") has no rival said only of other
    sites ("wash to the back in the shower daily"). A floor quantity with no equivalent at all →
    tier 4."""
    for q in analysis.quantities:
        if q.kind not in CHECKED_QUANTITIES:
            continue
        drug = bound_drug(analysis, q)
        near = drug.start if drug else q.start
        context = drug_context(analysis, facts, window, near=near) if drug else window
        nearby = [t for u in context for t in facts.quantities[u.index]]
        about_drug = drug is not None and bool(context)
        stated = nearby if about_drug else [t for ts in facts.quantities for t in ts]
        owned, free = drug_quantities(analysis, facts, near=near) if about_drug else ([], [])
        close = {id(t) for t in nearby}
        free_near = [t for t in free if id(t) in close]
        if any(t.kind == q.kind for t in owned):  # the drug's values, and values of no drug
            stated = nearby = owned + [t for t in free if t.kind == "dose"] + free_near
        if any(quantities_agree(q, t) for t in stated) or any(_asr_variant(q, t) for t in nearby):
            analysis.accounted.append((q.start, q.end))
            continue
        if about_drug:  # the drug's own values; else values of no drug where it is discussed
            rivals = (
                owned
                if any(t.kind == q.kind for t in owned)
                else [t for t in free_near if t.kind != "dose"]  # a bare dose is often another's
            )
        elif q.kind in ("vital", "percent"):  # the unit names the measure
            rivals = nearby
        else:
            near_words = words_around(analysis, q)
            rivals = [t for u in window if near_words & u.tokens for t in facts.quantities[u.index]]
        claimed_sites = sites_near(analysis.claim.text, q.start, q.end)
        if claimed_sites:  # "facial wash twice daily" vs "wash to the back … daily"
            rivals = [t for t in rivals if not _other_site(facts, t, claimed_sites)]
        target = change_target(analysis.claim.text, q)
        said = next(
            (
                t
                for t in rivals
                if quantities_agree(q, t) is False and _is_target(facts, t) == target
            ),
            None,
        )
        if said is not None and (part := _reading_in_part(q, said, facts)):
            return 4, f"the visit gives '{part}' but never the reading '{q.text}'"
        if said is not None:
            return 5, f"'{q.text}' disagrees with what the visit says: '{said.text}'"
        if q.kind in FLOOR_QUANTITIES:
            of = f" for {drug.surface}" if drug else ""
            return 4, f"the visit never gives this {q.kind}{of}: '{q.text}' has no equivalent"
    return None


#: How many sentences from a mention of the drug a value said of no drug may be its value.
FREE_REACH = 12
#: How many sentences without a drug a drug named before still owns their values.
CARRY = 2
#: Words a value's neighbourhood shares with too many sentences to tie it to one thing.
_GENERIC_NEAR = frozenset(
    stem(w)
    for w in (
        "time", "times", "daily", "day", "days", "week", "weeks", "month", "months", "year",
        "years", "hour", "hours", "minute", "minutes", "every", "about", "patient", "take",
        "takes", "taking", "since", "last", "past", "ago", "once", "twice",
    )
)  # fmt: skip


def bound_drug(analysis: ClaimAnalysis, q: Quantity) -> ConceptMention | None:
    """The drug of the claim this value belongs to: the closest drug named before it in the
    same clause (at most ten words between), or one named right after it ("twice daily
    metformin"); ``None`` when the value is about something else."""
    drugs = [m for m in analysis.mentions if "drug" in m.kinds]
    text = analysis.claim.text
    if from_now(text, q):
        return None  # "recheck … in four months": when, not how long the drug is taken
    before = [m for m in drugs if m.end <= q.start]
    if before:
        m = before[-1]
        between = text[m.end : q.start]
        if not CLAUSE_BREAK.search(between) and len(between.split()) <= 10:
            return m
    after = [m for m in drugs if m.start >= q.end]
    if after and len(text[q.end : after[0].start].split()) <= 3:
        return after[0]
    return None


def _reading_in_part(q: Quantity, said: Quantity, facts: TranscriptFacts) -> str | None:
    """The first number of a paired reading ("116/60") when the visit says it although the
    rival reading ("140 over 60") has another: the claim is a reading the visit gives in part
    ("a couple of weeks ago it was 116 on the dot"), another occasion than the rival's, so
    unsaid rather than contradicted."""
    if q.value2 is None or said.value2 is None or q.value == said.value:
        return None
    first = format_number(q.value)
    return first if first in facts.numbers else None


def _sentence_of(facts: TranscriptFacts, t: Quantity) -> str:
    """The transcript sentence a transcript quantity was read from."""
    for unit, quantities in zip(facts.index.units, facts.quantities, strict=True):
        if any(x is t for x in quantities):
            return unit.text
    return ""


def _is_target(facts: TranscriptFacts, t: Quantity) -> bool:
    """:func:`change_target` of a transcript quantity, read in its own sentence."""
    return change_target(_sentence_of(facts, t), t)


#: Adjectives that name a body site ("facial wash" is a wash for the face).
_SITE_ADJECTIVES = {"facial": "face", "pulmonary": "lung", "renal": "kidney", "hepatic": "liver"}
#: How far (characters) from a value the site it is said of may stand.
SITE_REACH = 60


def sites_near(text: str, start: int, end: int, reach: int = SITE_REACH) -> set[str]:
    """Body sites (stems of :data:`~clinjudge.judges.unvoiced_orders.SITES`) named within
    ``reach`` characters of ``text[start:end]``: the site a value is said of ("benzoyl peroxide
    facial wash twice daily", "foaming wash to the back in the shower daily")."""
    found = set()
    for token, s, e in content_token_spans(text):
        if start - reach <= s and e <= end + reach:
            site = _SITE_ADJECTIVES.get(token, token)
            if site in SITES:
                found.add(site)
    return found


def _other_site(facts: TranscriptFacts, t: Quantity, claimed: set[str]) -> bool:
    """The transcript value is said of other body sites than the claim's value: another
    entity (the back wash's "daily" against the face wash's "twice daily")."""
    said = sites_near(_sentence_of(facts, t), t.start, t.end)
    return bool(said) and not said & claimed


def words_around(analysis: ClaimAnalysis, q: Quantity, reach: int = 40) -> set[str]:
    """Content tokens of the claim within ``reach`` characters of a value, less the value's own
    words and time words."""
    return {
        token
        for token, start, end in analysis.tokens
        if (q.start - reach <= start < q.start or q.end < end <= q.end + reach)
        and not token[:1].isdigit()
        and token not in _GENERIC_NEAR
    }


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


def drug_quantities(
    analysis: ClaimAnalysis, facts: TranscriptFacts, near: int
) -> tuple[list[Quantity], list[Quantity]]:
    """Transcript quantities said of the claim's drug (the one named closest before ``near``),
    and those said of no drug: each quantity belongs to the last drug named before it in its
    sentence, or, when its sentence names none, to the last drug of the previous sentence
    ("lasix 80 milligrams once a day ... carvedilol 25 milligrams twice a day": "twice"
    belongs to carvedilol); a value with neither ("the new prescription will be for four
    milligrams") belongs to none, and is returned when said within :data:`FREE_REACH`
    sentences of one naming the drug."""
    drugs = [m for m in analysis.mentions if "drug" in m.kinds]
    before = [m for m in drugs if m.start <= near]
    wanted = set((before[-1] if before else drugs[0]).canonical)
    owned: list[Quantity] = []
    free: list[tuple[int, Quantity]] = []
    spoken_of: list[int] = []  # sentences naming the drug
    carried: ConceptMention | None = None
    since = 0  # sentences since the carried drug was named
    for i, (mentions, quantities) in enumerate(zip(facts.mentions, facts.quantities, strict=True)):
        named = sorted((m for m in mentions if "drug" in m.kinds), key=lambda m: m.start)
        if any(wanted & set(m.canonical) for m in named):
            spoken_of.append(i)
        text = facts.index.units[i].text
        for q in quantities:
            owner = value_of(named, q, text) or next(
                (m for m in reversed(named) if m.start <= q.start), carried
            )
            if owner is None:
                free.append((i, q))
            elif wanted & set(owner.canonical):
                owned.append(q)
        since = 0 if named else since + 1
        if named:
            carried = named[-1]
        elif since > CARRY:  # "and the lisinopril ? — yes . — 20 milligrams .", no further
            carried = None
    reach = [q for i, q in free if any(abs(i - j) <= FREE_REACH for j in spoken_of)]
    return owned, reach


#: What may stand between a value and the drug it is "of": "twenty five milligrams per day of
#: hydrochlorothiazide", "a dose of", "ten milligrams of your lisinopril".
_OF_DRUG = re.compile(
    r"[\s,]*(?:(?:per|a|an|each|every|day|daily|dose|doses|tablet|tablets)\s+){0,3}"
    r"of\s+(?:(?:the|your|his|her|their|that|this)\s+)?",
    re.I,
)


def value_of(named: list[ConceptMention], q: Quantity, text: str) -> ConceptMention | None:
    """The drug a value is said *of*, named right after it ("twenty five milligrams per day of
    hydrochlorothiazide"): it owns the value rather than the drug named before."""
    after = next((m for m in named if m.start >= q.end), None)
    if after is not None and _OF_DRUG.fullmatch(text, q.end, after.start):
        return after
    return None


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
