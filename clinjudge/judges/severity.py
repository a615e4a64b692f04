"""How much a hallucinated claim matters (SPEC §9): its harm category and severity, by rules.

``harm_category`` — what the flagged part of the claim is about (:func:`subject_of`: the clause
holding the words the rationale quotes), the first that applies:

    allergy          an allergy (not a seasonal or environmental one)
    demographic_social  an opening line ("Diane Baker is a 28-year-old female with …", "35 y.o."):
                     what such a line adds beyond the visit is a name or an age
    test_result      a vital sign named as one ("O2 saturation 98%", not oxygen the drug)
    dose_frequency   a drug named with a dose, frequency or duration (not a time from now:
                     "recheck in four months")
    plan_follow_up   a test or visit arranged for later ("repeat A1c in 3 months")
    medication       a drug or drug class
    plan_follow_up   counselling, education or monitoring ("monitor for signs of heart
                     failure", "advised to avoid fatty foods"), whatever it is about
    test_result      a test, a vital sign or percentage, or a result word (x-ray, labs, A1c …)
    exam_finding     the Objective section, or examination words (tender, murmur, edema …)
    diagnosis        a disease in the Assessment or Plan
    plan_follow_up   the Plan section, or plan words (follow up, refer, start, continue …)
    demographic_social  social history and identity (work, family, smoking, diet, age, name)
    diagnosis        a disease anywhere else
    history          anything else

``severity`` — ``major`` when acting on the claim could change diagnosis, treatment or
follow-up or harm the patient: every claim about an allergy, a drug, a dose, a test result or
a diagnosis; a plan item with an interval or a referral ("follow up in 4 weeks", "referred to
cardiology": follow-up that was never arranged); an exam finding that asserts something
abnormal (a finding, symptom or disease not negated: "grade 2/6 murmur", "tender to
palpation"; an invented normal exam is minor); and every contradiction (tier 5) except of a
social detail; else ``minor``. The lexical judge's "not word for word" flags follow the same
rules on the words it misses: its rationale quotes them (:func:`lexical_reason`), so the
category is that of the clause holding them, and a flag that misses only everyday wording
("as prescribed", "doing well") quotes nothing specific and is ``minor`` (issue 37).
Supported claims (tiers 1–3) get neither. These are first rules, measured against the
reviewers' severity labels by ``bench/bench_agreement.py``.
"""

from __future__ import annotations

import re

from clinjudge.judges.claim_features import NovelWords
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.clauses import clause_around, from_now
from clinjudge.text.negation import is_negated
from clinjudge.text.quantities import extract_quantities
from clinjudge.types import HarmCategory, Severity, Verdict

MAJOR_CATEGORIES: frozenset[str] = frozenset(
    {"allergy", "dose_frequency", "medication", "test_result", "diagnosis"}
)
_ALLERGY = re.compile(r"\ballerg", re.I)
_ENVIRONMENTAL = re.compile(
    r"seasonal allerg|allergies? (?:to )?(?:pollen|dust|grass|trees?|cats?|dogs?)", re.I
)
_TEST = re.compile(
    r"\b(x-?rays?|mri|ct|ultrasound|echo\w*|ekg|ecg|labs?|results?|a1c|hemoglobin|cbc|bmp|cmp"
    r"|panel|biopsy|scan|imaging|radiograph\w*|levels?|culture)\b",
    re.I,
)
_EXAM = re.compile(
    r"\b(exam\w*|tender\w*|swelling|edema|range of motion|murmur|lungs?|auscultation|palpation"
    r"|reflex\w*|strength|sensation|pulses?|alert|oriented|distress|supple|rash|erythema"
    r"|vital signs?|blood pressure|heart rate|temperature)\b",
    re.I,
)
_PLAN = re.compile(
    r"\b(follow[- ]?up|return|come back|refer\w*|schedul\w*|recommend\w*|advis\w*|counsel\w*"
    r"|educat\w*|continue|start|stop|prescrib\w*|order\w*)\b",
    re.I,
)
_SOCIAL = re.compile(
    r"\b(works?|worked|job|lives?|married|wife|husband|daughter|son|kids|children|smok\w*"
    r"|alcohol|drinks?|exercis\w*|diet|hobb\w*|retired|year-old|years old|Mr|Mrs|Ms)\b",
    re.I,
)
_INTRO = re.compile(
    r"^\W*(?:\w+\W+){0,5}?(?:is|was) an? (?:\w+ )?\d+[- ](?:year|y)[- ]?(?:old|o\.?)\b"
    r"|\b\d+ ?y\.?o\.?\b",
    re.I,
)
_REFERRAL = re.compile(
    r"\b(?:refer\w*|consult\w*|specialist|schedul\w*|cardiolog\w*|endocrinolog\w*|surgery)\b",
    re.I,
)
_COUNSEL = re.compile(
    r"\b(?:monitor\w*|educat\w*|counsel\w*|advis\w*|instruct\w*|encourag\w*|report any"
    r"|signs and symptoms|signs of|importance of)\b",
    re.I,
)
#: Vital signs by name: a test result even when a drug word sits in them ("O2 saturation").
_VITAL = re.compile(
    r"\b(?:o2|oxygen)\s+sat\w*|\bsaturations?\b|\bsats\b|\bpulse ox\w*|\bspo2\b", re.I
)
#: A test or visit arranged for later ("repeat A1c in 3 months", "recheck labs"): a plan item.
_ARRANGED = re.compile(
    r"\b(?:repeat|recheck|re-check|reassess|follow[- ]?up|return|see (?:her|him|you) back)\b",
    re.I,
)
_FINDING_KINDS = frozenset({"finding", "disease", "symptom"})
_DRUG_KINDS = frozenset({"drug", "drug_class"})
_DRUG_QUANTITIES = frozenset({"dose", "frequency", "duration"})


def harm_category(text: str, section: str, kb: KnowledgeBase) -> HarmCategory:
    """The claim's harm category (module docstring)."""
    kinds = {k for m in kb.concepts_in(text) for k in m.kinds}
    quantities = {q.kind for q in extract_quantities(text) if not from_now(text, q)}
    checks: list[tuple[bool, HarmCategory]] = [
        (bool(_ALLERGY.search(text)) and not _ENVIRONMENTAL.search(text), "allergy"),
        (bool(_INTRO.search(text)), "demographic_social"),
        (bool(_VITAL.search(text)), "test_result"),
        (bool(kinds & _DRUG_KINDS) and bool(quantities & _DRUG_QUANTITIES), "dose_frequency"),
        (bool(_ARRANGED.search(text)), "plan_follow_up"),
        (bool(kinds & _DRUG_KINDS), "medication"),
        (bool(_COUNSEL.search(text)), "plan_follow_up"),
        (
            "test" in kinds or bool(quantities & {"vital", "percent"} or _TEST.search(text)),
            "test_result",
        ),
        (section == "objective" or bool(_EXAM.search(text)), "exam_finding"),
        ("disease" in kinds and section in ("assessment", "plan"), "diagnosis"),
        (section == "plan" or bool(_PLAN.search(text)), "plan_follow_up"),
        (bool(_SOCIAL.search(text)), "demographic_social"),
        ("disease" in kinds, "diagnosis"),
    ]
    return next((category for applies, category in checks if applies), "history")


def severity(
    tier: int, category: HarmCategory, text: str = "", kb: KnowledgeBase | None = None
) -> Severity:
    """``major`` or ``minor`` for a hallucinated claim (module docstring); ``text`` and ``kb``
    decide plan items and exam findings."""
    if category in MAJOR_CATEGORIES or (tier == 5 and category != "demographic_social"):
        return "major"
    if category == "plan_follow_up" and _arranges(text):
        return "major"
    if category == "exam_finding" and kb is not None and _abnormal_finding(text, kb):
        return "major"
    return "minor"


def _arranges(text: str) -> bool:
    """A plan item with an interval or a referral."""
    durations = any(q.kind == "duration" for q in extract_quantities(text))
    return durations or bool(_REFERRAL.search(text))


def _abnormal_finding(text: str, kb: KnowledgeBase) -> bool:
    """Some finding, symptom or disease of the claim is asserted, not negated."""
    return any(
        set(m.kinds) & _FINDING_KINDS and not is_negated(text, m.start, m.end)
        for m in kb.concepts_in(text)
    )


_QUOTED = re.compile(r"'([^']{2,})'")


def subject_of(text: str, rationale: str) -> str:
    """The part of the claim a flag is about: the clause holding the first words its
    rationale quotes from the claim ("… will recheck … in four months" of "continue her
    medications, and the physician will recheck … in four months"), else the whole claim."""
    low = text.lower()
    for quoted in _QUOTED.findall(rationale):
        at = low.find(quoted.lower())
        if at >= 0:
            start, end = clause_around(text, at, at + len(quoted))
            return text[start:end]
    return text


def rate_harm(verdict: Verdict, text: str, section: str, kb: KnowledgeBase) -> Verdict:
    """The verdict with its harm category and severity when it is hallucinated (tier 4–5);
    a supported verdict is returned as it is."""
    if verdict.supported:
        return verdict
    subject = subject_of(text, verdict.rationale)
    category = harm_category(subject, section, kb)
    wording = verdict.rationale.startswith(WORDING_ONLY)
    return verdict.model_copy(
        update={
            "harm_category": category,
            "severity": "minor" if wording else severity(verdict.tier, category, text, kb),
        }
    )


#: How the lexical judge's rationale begins when only everyday wording is missing.
WORDING_ONLY = "the visit does not say this word for word, only in other everyday words"


def lexical_reason(novel: NovelWords | None, coverage: float) -> str:
    """The lexical judge's reason for a claim below its word-for-word bar: the specific words
    the visit never says near it (names, numbers, clinical terms, rare words), quoted so the
    flag's category and severity are theirs; else that only everyday wording differs."""
    specifics = novel.specifics() if novel else []
    share = f"(only {coverage:.0%} of its content words appear)"
    if not specifics:
        return f"{WORDING_ONLY} {share}"
    quoted = ", ".join(f"'{w}'" for w in specifics[:4])
    return f"the visit does not say this word for word: {quoted} not in it {share}"
