"""How much a hallucinated claim matters (SPEC §9): its harm category and severity, by rules.

The harm category is :mod:`clinjudge.judges.harm`'s (what the flagged part is about).

``severity`` — ``major`` when acting on the claim could change diagnosis, treatment or
follow-up or harm the patient: every claim about an allergy, a drug, a dose, a test result or
a diagnosis; a plan item with an interval or a referral ("follow up in 4 weeks", "referred to
cardiology": follow-up that was never arranged); an exam finding that asserts something
abnormal (a finding, symptom or disease not negated: "grade 2/6 murmur", "tender to
palpation"; an invented normal exam is minor, and so are vital signs called normal or stable
without a value); and every contradiction (tier 5) except of a
social detail; else ``minor``. The lexical judge's "not word for word" flags follow the same
rules on the words it misses: its rationale quotes them (:func:`lexical_reason`), so the
category is that of the clause holding them, and a flag that misses only everyday wording
("as prescribed", "doing well") quotes nothing specific and is ``minor`` (issue 37).
Supported claims (tiers 1–3) get neither. These are first rules, measured against the
reviewers' severity labels by ``bench/bench_agreement.py``.
"""

from __future__ import annotations

import re

from clinjudge.grounding.transcript_facts import FINDING_KINDS
from clinjudge.judges.claim_features import NovelWords
from clinjudge.judges.harm import flagged_category
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.negation import is_negated
from clinjudge.text.quantities import extract_quantities
from clinjudge.types import HarmCategory, Severity, Verdict

MAJOR_CATEGORIES: frozenset[str] = frozenset(
    {"allergy", "dose_frequency", "medication", "test_result", "diagnosis"}
)
_REFERRAL = re.compile(
    r"\b(?:refer\w*|consult\w*|specialist|schedul\w*|cardiolog\w*|endocrinolog\w*|surgery)\b",
    re.I,
)
#: Vital signs called normal without a value: invented boilerplate, not an invented result.
_NORMAL_VITALS = re.compile(
    r"^[^0-9]*\bvital signs?\b[^0-9]*\b(?:stable|normal|within normal limits|unremarkable)\b"
    r"[^0-9]*$",
    re.I,
)


def severity(
    tier: int, category: HarmCategory, text: str = "", kb: KnowledgeBase | None = None
) -> Severity:
    """``major`` or ``minor`` for a hallucinated claim (module docstring); ``text`` and ``kb``
    decide plan items and exam findings."""
    if category == "test_result" and tier == 4 and _NORMAL_VITALS.search(text):
        return "minor"  # boilerplate: "Vital signs are stable." with no value
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
        set(m.kinds) & FINDING_KINDS and not is_negated(text, m.start, m.end)
        for m in kb.concepts_in(text)
    )


def rate_harm(verdict: Verdict, text: str, section: str, kb: KnowledgeBase) -> Verdict:
    """The verdict with its harm category and severity when it is hallucinated (tier 4–5);
    a supported verdict is returned as it is."""
    if verdict.supported:
        return verdict
    category = flagged_category(text, verdict.rationale, section, kb)
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
