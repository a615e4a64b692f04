"""What a hallucinated claim is about (SPEC §9): its harm category, by rules.

The category is that of the **flagged part** of the claim, read in two steps
(:func:`flagged_category`):

1. the words a flag quotes (the rationale's first quotation found in the claim): when they name
   a person and nothing clinical — a name in an opening line, an age, a title and surname
   ("Mr. Moore"), a relative or the referring doctor — the flag is ``demographic_social``;
2. else the clause holding them (:func:`subject_of`), by :func:`harm_category`.

:func:`harm_category` takes the first that applies, in this order (a clinician's filing of
the error, as ``bench/harm_labels/GUIDE.md`` asks reviewers for it):

    allergy             an allergy (not a seasonal or environmental one)
    demographic_social  an opening line that adds nothing clinical ("Diane Baker is a
                        28-year-old female."), a relative or family history, the referring
                        doctor
    plan_follow_up      a test or visit arranged or ordered ("repeat A1c in 3 months", "check
                        a lipid panel today", "labs ordered")
    test_result         a test named before any drug of the clause, with its result
                        ("Hemoglobin is 8.2 (normal range 12-16)", "Urinalysis: negative for
                        nitrites, glucose …"): analytes are read as the test's, not as drugs
    dose_frequency      a drug named with a dose, frequency or duration (not a time from now)
    medication          a drug, a drug class, or medication named as such ("continue current
                        medications", "a script")
    plan_follow_up      counselling, education, monitoring, therapy and specialist care
                        ("advised to avoid fatty foods", "followed by urology", "no questions")
    test_result         a vital sign or a test ("vital signs are stable", "BMI 24", "blood
                        pressure has been stable", x-ray, labs, A1c …)
    exam_finding        examination words in the Objective section or said as an examination
                        outside the Subjective one ("tender", "murmur", "edema" …)
    history             a symptom, an injury or a denial of one with no disease named ("the
                        pain is worse at night", "denies chest pain", "no chills")
    diagnosis           a disease (not only a symptom)
    exam_finding        anything else in the Objective section
    plan_follow_up      the Plan section, or plan words (follow up, refer, start, continue …)
    demographic_social  social history and identity (work, hobbies, diet, travel, smoking …)
    history             anything else

Measured against reviewers' category labels of the sentences they found wrong by
``bench/bench_harm.py`` (issue 37, item 5).
"""

from __future__ import annotations

import re

from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.clauses import clause_around, from_now
from clinjudge.text.quantities import extract_quantities
from clinjudge.types import HarmCategory

_ALLERGY = re.compile(r"\ballerg", re.I)
_ENVIRONMENTAL = re.compile(
    r"seasonal allerg|allergies? (?:to )?(?:pollen|dust|grass|trees?|cats?|dogs?)", re.I
)
#: Tests, procedures that yield results, and the analytes a lab reports (several of which are
#: also drug names in the knowledge: hemoglobin, creatinine, glucose).
_TEST = re.compile(
    r"\b(?:x-?rays?|mri|ct|ultrasound|echo\w*|ekg|ecg|electrocardiogram|labs?|results?|a1c"
    r"|hemoglobin|hgb|cbc|bmp|cmp|chem\s*\d*|panel|biopsy|scan|imaging|radiograph\w*|levels?"
    r"|culture|tests?|testing|pathology|endoscopy|colonoscopy|egd|swab|urinalysis|joint space"
    r"|creatinine|e?gfr|glucose|potassium|cholesterol|ldl|hdl|triglycerides|tsh|psa|inr|wbc"
    r"|white (?:blood )?(?:cell )?count|platelets?|bun|bilirubin|albumin|ketones|nitrites"
    r"|leukocyte\w*|microalbumin|normal range|reference range|target range)\b",
    re.I,
)
#: Vital signs by a name a drug word may sit in ("O2 saturation"), or said as a whole.
_VITAL_NAMED = re.compile(
    r"\b(?:o2|oxygen)\s+sat\w*|\bsaturations?\b|\bsats\b|\bpulse ox\w*|\bspo2\b"
    r"|\bvital signs?\b|\bvitals\b|\bbmi\b",
    re.I,
)
_VITAL = re.compile(r"\b(?:blood pressures?|heart rate|respiratory rate|temperature|bp)\b", re.I)
_EXAM = re.compile(
    r"\b(exam\w*|tender\w*|swelling|edema|range of motion|murmurs?|lungs?|auscultation"
    r"|palpation|reflex\w*|strength|sensation|pulses?|alert|oriented|distress|supple|rash\w*"
    r"|erythema|lesions?|lymph\w*|adenopathy|thyromegaly|bruits?|skin|cornea\w*|fovea\w*"
    r"|fundus|pupils?|scarring|warm|intact|gait|effusion|crepitus|laxity|wheez\w*|rales"
    r"|rhonchi|bowel sounds|soft|nontender)\b",
    re.I,
)
#: Said as an examination wherever it stands ("on exam", "examination reveals").
_EXAMINED = re.compile(r"\b(?:on exam\w*|exam\w* (?:reveals?|revealed|shows?|showed))\b", re.I)
_PLAN = re.compile(
    r"\b(follow[- ]?up|return|come back|refer\w*|schedul\w*|recommend\w*|advis\w*|counsel\w*"
    r"|educat\w*|continue|start|stop|prescrib\w*|order\w*)\b",
    re.I,
)
_SOCIAL = re.compile(
    r"\b(works?|worked|job|shift|lives?|married|wife|husband|kids|children|smok\w*"
    r"|alcohol|drinks?|exercis\w*|diet|eat\w*|meals?|food|hobb\w*|retired|travel\w*|bik\w*"
    r"|basketball|sports?|favou?rite|vacation|year-old|years old|Mr|Mrs|Ms)\b",
    re.I,
)
#: Who the patient is related to or was sent by: a person, not a clinical fact.
_PERSON = re.compile(
    r"\b(?:family history|mother|father|parents?|sister|brother|siblings?|grand(?:mother|father"
    r"|parents?)|aunt|uncle|cousin|son|daughter|accompanied by|caregiver|aide|referred by"
    r"|primary care (?:physician|provider|doctor)|pcp)\b|\b(?:Mr|Mrs|Ms|Miss|Dr)\.?\s+[A-Z]",
    re.I,
)
#: A title just before the quoted words ("Mr. Moore"): a person's name.
_TITLE = re.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr)\.?\s*$")
_AGE = re.compile(r"\b\d+[- ](?:year|y)[- ]?(?:old|o\.?)\b|\b\d+ ?y\.?o\.?\b", re.I)
_INTRO = re.compile(
    r"^\W*(?:\w+\W+){0,5}?(?:is|was) an? (?:\w+ )?\d+[- ](?:year|y)[- ]?(?:old|o\.?)\b"
    r"|\b\d+ ?y\.?o\.?\b",
    re.I,
)
#: Advice given: a plan item wherever it stands.
_ADVICE = re.compile(
    r"\b(?:advis\w*|counsel\w*|educat\w*|instruct\w*|encourag\w*|informed|recommend\w*"
    r"|suggest\w*)\b",
    re.I,
)
#: Care arranged around the visit: a plan item outside the patient's own account.
_CARE = re.compile(
    r"\b(?:monitor\w*|report any|signs and symptoms|signs of|importance of|avoid\w*"
    r"|questions|concerns|log|diary|lifestyle|physical therapy|occupational therapy|therapy"
    r"|followed by|screening|treatment)\b",
    re.I,
)
#: A test or visit arranged for later or ordered now: a plan item.
_ARRANGED = re.compile(
    r"\b(?:repeat|recheck|re-check|reassess|follow[- ]?up|return|see (?:her|him|you) back"
    r"|check|ordered|order|obtain|draw|schedul\w*|monitor\w*)\b",
    re.I,
)
#: Medication named as such, without a drug name.
_MEDICATION_WORDS = re.compile(
    r"\b(?:medications?|medicines?|meds|prescriptions?|scripts?|pills?)\b", re.I
)
_INJURY = re.compile(r"\b(?:injur\w*|fall|fell|accident|trauma)\b", re.I)
#: How often or in what form a drug is taken, in words the quantity reader does not count.
_REGIMEN = re.compile(
    r"\b(?:as needed|prn|daily|nightly|at bedtime|twice|once a|every (?:day|night|morning)"
    r"|times (?:a|per) (?:day|week)|by (?:oral )?route|by mouth|tablets?|capsules?|puffs?)\b",
    re.I,
)
#: A cause or an impression: the clinician's diagnostic reading.
_CAUSAL = re.compile(
    r"\b(?:caused by|due to|secondary to|consistent with|related to|because of|diagnos\w*"
    r"|suspect\w*|likely|impression)\b",
    re.I,
)
_DENIAL = re.compile(r"\b(?:denies|denied|deny|no|not|without|never)\b", re.I)
_DRUG_KINDS = frozenset({"drug", "drug_class"})
_CLINICAL_KINDS = frozenset({"drug", "drug_class", "disease", "symptom", "finding", "test"})
_DRUG_QUANTITIES = frozenset({"dose", "frequency", "duration"})
_QUOTED = re.compile(r"'([^']{2,})'")


def subject_of(text: str, rationale: str) -> str:
    """The part of the claim a flag is about: the clause holding the first words its
    rationale quotes from the claim ("… will recheck … in four months" of "continue her
    medications, and the physician will recheck … in four months"), else the whole claim."""
    quoted = _quoted(text, rationale)
    if quoted is None:
        return text
    start, end = clause_around(text, quoted[0], quoted[1])
    return text[start:end]


def flagged_category(text: str, rationale: str, section: str, kb: KnowledgeBase) -> HarmCategory:
    """The harm category of the part of ``text`` a flag with ``rationale`` is about (module
    docstring): the quoted words when they name only a person or only a drug, else their
    clause."""
    quoted = _quoted(text, rationale)
    if quoted is not None:
        start, end = _whole_words(text, *quoted)
        words = text[start:end]
        mentions = [m for m in kb.concepts_in(words) if set(m.kinds) & _CLINICAL_KINDS]
        person = _PERSON.search(words) or _AGE.search(words) or _TITLE.search(text[:start])
        if not mentions and (person or _INTRO.search(text) and words[:1].isupper()):
            return "demographic_social"
        if _names_a_drug_only(words, mentions):
            return "medication"  # the drug itself is what the visit does not give
    return harm_category(subject_of(text, rationale), section, kb)


def harm_category(text: str, section: str, kb: KnowledgeBase) -> HarmCategory:
    """The category of a claim or clause (module docstring)."""
    mentions = [m for m in kb.concepts_in(text) if not _is_analyte(text, m.start, m.end)]
    kinds = {k for m in mentions for k in m.kinds}
    drugs = [m for m in mentions if set(m.kinds) & _DRUG_KINDS]
    quantities = {q.kind for q in extract_quantities(text) if not from_now(text, q)}
    test = _TEST.search(text)
    diseases = [
        m
        for m in mentions
        if "disease" in m.kinds and "symptom" not in m.kinds and not _INJURY.search(m.surface)
    ]
    symptoms = "symptom" in kinds or bool(_INJURY.search(text))
    subjective = section == "subjective"
    regimen = bool(quantities & _DRUG_QUANTITIES) or bool(_REGIMEN.search(text))
    care = bool(_ADVICE.search(text)) or (not subjective and bool(_CARE.search(text)))
    checks: list[tuple[bool, HarmCategory]] = [
        (bool(_ALLERGY.search(text)) and not _ENVIRONMENTAL.search(text), "allergy"),
        (bool(_INTRO.search(text)) and not kinds & _CLINICAL_KINDS, "demographic_social"),
        (bool(_VITAL_NAMED.search(text)), "test_result"),
        (bool(_ARRANGED.search(text)) and (bool(test) or not drugs), "plan_follow_up"),
        (bool(test) and (not drugs or test.start() < drugs[0].start), "test_result"),
        (bool(drugs) and regimen, "dose_frequency"),
        (bool(drugs), "medication"),
        (care, "plan_follow_up"),
        (bool(_MEDICATION_WORDS.search(text)), "medication"),
        (bool(_PERSON.search(text)), "demographic_social"),
        (bool(_VITAL.search(text)) or "test" in kinds or bool(test), "test_result"),
        (bool(quantities & {"vital", "percent"}) and section == "objective", "test_result"),
        (
            bool(_EXAM.search(text)) and section == "objective" or bool(_EXAMINED.search(text)),
            "exam_finding",
        ),
        (subjective and symptoms and bool(_DENIAL.search(text)), "history"),
        (bool(kinds & _CLINICAL_KINDS) and bool(_CAUSAL.search(text)), "diagnosis"),
        (symptoms and not diseases, "history"),
        (bool(diseases), "diagnosis"),
        (section == "objective", "exam_finding"),
        (section == "plan" or bool(_PLAN.search(text)), "plan_follow_up"),
        (bool(_SOCIAL.search(text)), "demographic_social"),
    ]
    return next((category for applies, category in checks if applies), "history")


def _quoted(text: str, rationale: str) -> tuple[int, int] | None:
    """Where the first words ``rationale`` quotes stand in ``text``."""
    low = text.lower()
    for quoted in _QUOTED.findall(rationale):
        at = low.find(quoted.lower())
        if at >= 0:
            return at, at + len(quoted)
    return None


def _names_a_drug_only(words: str, mentions: list) -> bool:
    """The quoted words name drugs and nothing else: no test or analyte, no vital sign, no
    dose, frequency or duration."""
    drug = [m for m in mentions if set(m.kinds) & _DRUG_KINDS and "test" not in m.kinds]
    regimen = any(q.kind in _DRUG_QUANTITIES for q in extract_quantities(words))
    others = _TEST.search(words) or _VITAL_NAMED.search(words) or _REGIMEN.search(words)
    return len(drug) == len(mentions) > 0 and not regimen and not others


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` widened to whole words ("65" of "65-year-old" is the age)."""
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "-"):
        start -= 1
    while end < len(text) and (text[end].isalnum() or text[end] == "-"):
        end += 1
    return start, end


def _is_analyte(text: str, start: int, end: int) -> bool:
    """A concept mention that is a lab's analyte or a test word (``_TEST``), not a drug."""
    return any(m.start() <= start and end <= m.end() for m in _TEST.finditer(text))
