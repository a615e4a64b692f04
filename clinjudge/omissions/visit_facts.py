"""The clinically relevant facts a visit states, read offline from its transcript (SPEC §9
"Omissions").

A fact is a knowledge concept the conversation settles, or a plan statement:

* **concept facts** — every mention of a knowledge concept in a transcript sentence whose
  status the conversation settles (:func:`~clinjudge.grounding.transcript_facts.
  build_transcript_facts`: a sentence's own negation; a question takes its yes/no answer; a
  question left unanswered states nothing and gives no fact). Its category comes from the
  concept's kind and the sentence:

  =================  ==========================================================================
  ``allergy``        a drug or drug class in a sentence naming an allergy to it, or the
                     word allergy itself ("any allergies?" "no.")
  ``medication``     a drug or drug class
  ``result``         a test, disease or finding with a result cue ("shows", "elevated",
                     "normal", "came back")
  ``diagnosis``      a disease the clinician states
  ``exam finding``   a finding the clinician states
  ``symptom``        a symptom (affirmed or denied), or a finding the patient states
  ``history``        a disease or procedure the patient states
  ``plan``           a test or procedure the clinician orders or schedules
  =================  ==========================================================================

  Mentions of the same concept class with the same polarity are one fact, located at its first
  mention (all mentions kept as spans); a drug's dose and a vital's value are facts of their
  own (:mod:`clinjudge.omissions.value_facts`); its category is the highest of this table's order
  among its mentions (an x-ray that "shows a fracture" is a result however often it is named).
* **social facts** — tobacco, alcohol and recreational drug use, affirmed or denied
  (:mod:`clinjudge.omissions.social_facts`);
* **plan facts** — a clinician's sentence giving a ``follow-up`` (``see you back in two weeks``)
  or a ``return precaution`` (:func:`~clinjudge.grounding.critical_items.is_precaution`), at
  most one fact of each kind per visit, at its first sentence.

Importance (:mod:`clinjudge.grounding.critical_items`): ``critical`` for an affirmed red-flag
symptom, an allergy, an abnormal result or exam finding (a clinician's sentence with an
abnormal cue — "elevated", "decreased", "positive for", "shows" — and no "normal"), a
medication the clinician changes, and a return precaution; every other fact is ``routine``.
A mention in a hypothetical ("if the pain gets worse") or in the clinician's teaching ("the
most common side effects are nausea", "possible causes are hepatitis", "to prevent
dehydration") is not a fact about the patient and gives none (a drug always is: "avoid
ibuprofen"). A diagnosis, result or finding after a history cue ("past medical history
significant for", "prior") is ``history``. A drug is an allergy fact only as what the
allergy is to ("allergic to penicillin", "a sulfa allergy"), not as a drug given for
allergies. Concepts of kind anatomy, abbreviation-only, or "other" (courtesy words,
administrative terms) give no fact, nor does a drug name that is also a body part
("thyroid"); a food some drug vocabularies list ("wheat") or a procedure's antiseptic or
contrast agent ("iodine") is a fact only as what an allergy is to; a drug name that is also a
finding or test ("cholesterol") is read as the finding.
"""

from __future__ import annotations

import re
from dataclasses import replace

from clinjudge.grounding.critical_items import (
    ABNORMAL,
    ALLERGY,
    RED_FLAGS,
    change_cues,
    is_precaution,
    names_allergy,
)
from clinjudge.grounding.transcript_facts import ConceptMention, TranscriptFacts
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.omissions.fact import Category, Polarity, VisitFact
from clinjudge.omissions.mention_context import (
    ABNORMAL_SIGN,
    ALLERGY_CONDITION,
    EXAMINING,
    FOODS,
    NOT_KIN,
    PAIN_SCALE,
    PROCEDURE_MATERIALS,
    SOMEONE_ELSE,
    TEACHING,
    VITAL_NAMES,
    clause_span,
    words_near,
)
from clinjudge.omissions.social_facts import social_facts
from clinjudge.omissions.value_facts import dose_fact, merge_doses, value_key, vital_facts
from clinjudge.text.negation import history_or_hypothetical

#: Category order: a fact named several ways takes the first of these among its mentions.
CATEGORY_ORDER: tuple[str, ...] = (
    "allergy",
    "medication",
    "result",
    "diagnosis",
    "exam finding",
    "symptom",
    "history",
    "plan",
)
_DRUG = frozenset({"drug", "drug_class"})
_SYMPTOM_CODES = ("ICD10CM:R", "SYMP:")
#: Kinds that make a drug name more likely something else ("thyroid", "cholesterol").
_NOT_ONLY_A_DRUG = frozenset({"anatomy", "finding", "test"})
_TEST = frozenset({"test", "procedure"})
_RESULT_CUE = re.compile(
    rf"{ABNORMAL.pattern}|\b(?:normal|negative|unremarkable|came back|results?|levels?|"
    r"i'm seeing|we see|you can see|it looks like|looks like)\b",
    re.I,
)
_NORMAL = re.compile(r"\b(?:normal|negative|unremarkable|fine|good|stable)\b", re.I)
_ORDER_CUE = re.compile(
    r"\b(?:order|get|schedule|send|refer|going to|gon na|gonna|want to|we'll|i'll|let's|"
    r"recommend|plan)\b",
    re.I,
)
_ALLERGY_BEFORE = re.compile(
    r"\b(?:allergic|allerg(?:y|ies)|reactions?)\s*(?:to|:|from|with)?\s*(?:\w+\W+){0,3}$", re.I
)
_ALLERGY_AFTER = re.compile(r"\W{0,3}(?:allerg|reaction)", re.I)
_HISTORY = re.compile(r"\b(?:history|hx|prior|previous(?:ly)?|in the past|years ago)\b", re.I)
_FOLLOW_UP = re.compile(
    r"\b(?:follow[- ]?up|come back|see you (?:back|again|in)|back in (?:a|an|one|two|three|four|"
    r"six|\d+) \w+|return (?:in|to (?:the )?clinic)|next appointment|recheck)\b",
    re.I,
)


def visit_facts(facts: TranscriptFacts, kb: KnowledgeBase) -> list[VisitFact]:
    """The visit's facts (module docstring), numbered ``f1``, ``f2`` … in transcript order."""
    red_flags = _red_flag_classes(kb)
    merged: dict[tuple, VisitFact] = {}
    plan: dict[str, VisitFact] = {}
    units = facts.index.units
    for i, (unit, mentions, quantities) in enumerate(
        zip(units, facts.mentions, facts.quantities, strict=True)
    ):
        span = (unit.start, unit.end)
        drugs = [m for m in mentions if set(m.kinds) & _DRUG]
        before = facts.mentions[i - 1] if i and units[i - 1].speaker == unit.speaker else []
        tested = any(set(m.kinds) & _TEST for m in [*mentions, *before])
        found: list[tuple[tuple, VisitFact]] = []
        for m in mentions:
            m = _resolved(m, kb)
            fact = _concept_fact(m, unit.text, unit.speaker, red_flags, tested, drugs)
            if fact is None:
                continue
            found.append(((frozenset(m.canonical), fact.polarity), fact))
            doses = [q for q in quantities if q.kind == "dose"]
            if fact.category == "medication" and len(drugs) == 1 and doses:
                found.append(((frozenset(m.canonical), "dose"), dose_fact(fact, doses)))
        for v in vital_facts(unit.text, span, quantities):
            found.append((("value", *value_key(v.quantities[0])), v))
        for key, fact in found:
            if key in merged:
                fact = (
                    merge_doses(merged[key], fact)
                    if key[1] == "dose"
                    else _merge(merged[key], fact)
                )
            merged[key] = replace(
                fact, spans=_add(merged[key].spans if key in merged else (), span)
            )
        if unit.speaker == "doctor":
            for kind, fact in _plan_facts(unit.text, span).items():
                plan.setdefault(kind, fact)
    social = social_facts(units)
    ordered = sorted([*merged.values(), *plan.values(), *social], key=lambda f: f.spans[0])
    return [replace(f, id=f"f{i}") for i, f in enumerate(ordered, start=1)]


def _resolved(m: ConceptMention, kb: KnowledgeBase) -> ConceptMention:
    """The mention with the kinds of the classes it names: a lay term ("appendix removed",
    "gallbladder removed") is read as what it stands for (a procedure)."""
    if "lay_term" not in m.kinds:
        return m
    pos = kb.lexicon.pos
    named = {kb.concept(c).kind for c in m.canonical if c in pos} - {"lay_term"}
    return replace(m, kinds=m.kinds | named) if named else m


def is_symptom(m: ConceptMention) -> bool:
    """A symptom mention: of kind symptom and not a disease, or a disease class coded as a
    symptom (ICD-10-CM chapter R, the symptom ontology): "pain" is, "afib" is not."""
    if "symptom" not in m.kinds:
        return False
    return "disease" not in m.kinds or any(c.startswith(_SYMPTOM_CODES) for c in m.canonical)


def _concept_fact(
    m: ConceptMention,
    sentence: str,
    speaker: str,
    red_flags: set[str],
    tested: bool,
    drugs: list[ConceptMention],
) -> VisitFact | None:
    if m.negated is None or _not_about_patient(m, sentence):
        return None
    category = _category(m, sentence, speaker, tested)
    if category in ("result", "diagnosis", "exam finding") and _HISTORY.search(sentence[: m.start]):
        category = "history"  # "past medical history significant for coronary artery disease"
    if category is None:
        return None
    polarity: Polarity = "denied" if m.negated else "affirmed"
    why = _why_critical(category, polarity, m, sentence, speaker, red_flags, drugs)
    words = m.surface if polarity == "affirmed" else f"no {m.surface}"
    return VisitFact(
        id="",
        category=category,
        text=words,
        importance="critical" if why else "routine",
        polarity=polarity,
        quote=sentence,
        canonical=m.canonical,
        surface=m.surface,
        why_critical=why,
    )


def _not_about_patient(m: ConceptMention, sentence: str) -> bool:
    """A mention in a hypothetical ("if it gets worse", "in case of"), in the clinician's
    teaching (:data:`TEACHING`: "side effects are nausea", "possible causes are hepatitis",
    "watch for shaky, sweaty"), a pain scale's anchor, or a vital sign named without a cue
    (its value is a fact of its own)."""
    if history_or_hypothetical(sentence, m.start, m.end) == "hypothetical":
        return True
    if any(s.start() <= m.start < s.end() for s in PAIN_SCALE.finditer(sentence)):
        return True
    if m.surface.lower() in ("drink", "drinks"):
        return True  # drinking is read by the social facts, which know soda from alcohol
    around = words_near(sentence, m.start, m.end)
    other = SOMEONE_ELSE.search(around)
    if other and (other.group(1).lower() in NOT_KIN or is_symptom(m)):
        return True  # "my fourth cousin has scoliosis", "being sick, for your sister"
    if m.surface.lower() in VITAL_NAMES:
        return not (ABNORMAL.search(around) or ABNORMAL_SIGN.search(around))
    if set(m.kinds) & _DRUG:  # "avoid ibuprofen" is an instruction about the patient's drugs
        return False
    # "side effects" itself too, and a cue later in the statement ("inflammation can do that")
    return bool(TEACHING.search(sentence[: clause_span(sentence, m.start, m.end)[1]]))


def _category(m: ConceptMention, sentence: str, speaker: str, tested: bool) -> Category | None:
    """The fact's category (module docstring); ``tested``: the sentence, or the speaker's
    sentence before it, names a test ("let's look at your x-ray" … "I'm seeing a fracture")."""
    kinds = set(m.kinds)
    if kinds & _DRUG and kinds & _NOT_ONLY_A_DRUG:
        if "anatomy" in kinds:
            return None  # "thyroid": the gland far more often than the drug
        kinds -= _DRUG  # "cholesterol": the level, not the supplement
    if kinds & _DRUG:
        if _allergic_to(m, sentence):
            return "allergy"
        return None if m.surface.lower() in FOODS | PROCEDURE_MATERIALS else "medication"
    if ALLERGY.search(m.surface):
        if ALLERGY_CONDITION.search(sentence[: m.start]):
            return "history"  # "claritin for allergies": hay fever, not an allergy to a drug
        return "allergy"  # "any allergies?" "no."; the drug, when named, is a fact of its own
    clinician = speaker == "doctor"
    result_kinds = kinds & (_TEST | {"disease", "finding"})
    if result_kinds and clinician and tested and _RESULT_CUE.search(sentence):
        return "result"
    if is_symptom(m):  # the patient's, also when the clinician asks or sums it up
        return "symptom"
    if "finding" in kinds and clinician:
        return "exam finding"
    if "disease" in kinds:
        return "diagnosis" if clinician else "history"
    if kinds & {"symptom", "finding"}:
        return "symptom"
    if kinds & _TEST:
        if clinician and _ORDER_CUE.search(sentence):
            return "plan"
        return None if clinician else "history"
    return None


def _allergic_to(m: ConceptMention, sentence: str) -> bool:
    """The drug is what the allergy is to: "allergic to penicillin", "allergies: sulfa",
    "a penicillin allergy" — not a drug given for allergies ("Singulair for your allergies")."""
    if not names_allergy(sentence):
        return False
    return bool(
        _ALLERGY_BEFORE.search(sentence[: m.start]) or _ALLERGY_AFTER.match(sentence[m.end :])
    )


def _why_critical(
    category: str,
    polarity: Polarity,
    m: ConceptMention,
    sentence: str,
    speaker: str,
    red_flags: set[str],
    drugs: list[ConceptMention],
) -> str:
    """Why the fact is critical, or ``""`` (module docstring); cues are read in the mention's
    own statement (:func:`clause_of`), not across a run-on transcript sentence."""
    if category == "allergy":
        return "allergy"
    if polarity == "denied":
        return ""
    if category == "symptom" and set(m.canonical) & red_flags:
        return "red-flag symptom"
    clinician = speaker == "doctor"
    left, right = clause_span(sentence, m.start, m.end)
    clause = sentence[left:right]
    around = words_near(sentence, m.start, m.end)  # the concept's own words left out
    normal = _NORMAL.search(around)
    abnormal = ABNORMAL.search(around) or ABNORMAL_SIGN.search(around)
    if category in ("result", "exam finding") and clinician and abnormal and not normal:
        return "abnormal result"
    examined = clinician and EXAMINING.search(clause) and not clause.rstrip().endswith("?")
    if category == "symptom" and examined and not normal:
        return "abnormal exam finding"  # "there is edema of the right ankle"
    if category == "medication" and clinician and _changed(m, sentence, left, right, drugs):
        return "medication change"
    return ""


def _changed(
    m: ConceptMention, sentence: str, left: int, right: int, drugs: list[ConceptMention]
) -> bool:
    """A change cue of the mention's clause is about this drug: no other drug is named between
    the two ("continue your metformin … your hydrochlorothiazide, increase it to 25 mg" changes
    only the second)."""
    others = [d for d in drugs if set(d.canonical) != set(m.canonical)]
    for cue in (left + c for c in change_cues(sentence[left:right])):
        low, high = sorted((cue, m.start))
        if not any(low <= d.start < high for d in others):
            return True
    return False


def _plan_facts(sentence: str, span: tuple[int, int]) -> dict[str, VisitFact]:
    out: dict[str, VisitFact] = {}
    if is_precaution(sentence):
        out["return precaution"] = VisitFact(
            id="",
            category="return precaution",
            text="return precautions",
            importance="critical",
            quote=sentence,
            spans=(span,),
            why_critical="return precaution",
        )
    if _FOLLOW_UP.search(sentence):
        out["follow-up"] = VisitFact(
            id="",
            category="follow-up",
            text="follow-up",
            importance="routine",
            quote=sentence,
            spans=(span,),
        )
    return out


def _merge(kept: VisitFact, new: VisitFact) -> VisitFact:
    """One fact of two mentions: the higher category's wording, either's critical reason."""
    first, second = sorted((kept, new), key=lambda f: CATEGORY_ORDER.index(f.category))
    why = kept.why_critical or new.why_critical
    merged = replace(
        first,
        importance="critical" if why else "routine",
        why_critical=why,
        quantities=kept.quantities or new.quantities,
    )
    if first is new:  # keep the first mention's place, the higher category's reading
        merged = replace(merged, spans=kept.spans, quote=kept.quote)
    return merged


def _add(spans: tuple[tuple[int, int], ...], span: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    return spans if span in spans else (*spans, span)


def _red_flag_classes(kb: KnowledgeBase) -> set[str]:
    """Canonical classes of the red-flag symptoms (:data:`RED_FLAGS`), through the knowledge
    base so that synonyms count ("SOB", "dyspnea", "passed out")."""
    classes: set[str] = set()
    for phrase in RED_FLAGS:
        for concept in kb.lookup(phrase):
            classes.add(kb.canonical(concept.id))
    return classes
