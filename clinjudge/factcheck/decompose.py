"""Offline decomposition and labelling of an answer (SPEC §3 step 1, offline backend).

Claims are the sentences of the answer, cut further at ``;`` (the project's claim splitter,
:func:`clinjudge.text.claims.split_claims`), each with its character span. Every claim gets one
label by these rules, first match wins:

1. ``meta`` — it talks *about* the answer rather than medicine: a disclaimer or referral ("consult
   your doctor", "seek medical attention", "this is not medical advice", "I am not a doctor"), a
   pleasantry ("I hope this helps"), a question, or a restatement of the question (opens with "you
   asked" / "regarding your question", or every content word of the claim is in the question and
   it adds none — a bare echo).
2. ``context`` — a case-specific statement about this patient: it refers to the patient ("you",
   "your", "the patient", "he", "she", "this child" …) and carries no diagnosis or management cue
   (no treatment / test / risk / diagnosis word, no dose). "You have had a cough for 3 days" is
   context; "You should take amoxicillin 500 mg" is management and stays relevant.
3. ``relevant`` — diagnosis or management content in general form: the knowledge base finds a
   clinical concept in it (disease, symptom, finding, drug, drug class, procedure, test) or it holds
   a clinical cue word (:data:`CLINICAL_CUES`: treatment, risk, mortality, diagnosis, surgery, dose,
   and the words of study findings — results, associated, effect, role …), or a medical word ending
   such as -itis, -ectomy, -emia.
4. otherwise ``meta`` — nothing to check ("no diagnosis or management content").
"""

from __future__ import annotations

import re

from clinjudge.factcheck.models import FactClaim, Label
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.claims import split_claims
from clinjudge.text.normalize import content_tokens
from clinjudge.text.sections import segment_note

CLINICAL_KINDS = frozenset(
    {"disease", "symptom", "finding", "drug", "drug_class", "procedure", "test"}
)

_META = re.compile(
    r"\b(?:consult(?:ing)?|talk(?:ing)? to|speak(?:ing)? (?:to|with)|check with|see|ask)\s+"
    r"(?:with\s+)?(?:your|a|an|the)\s+(?:own\s+)?(?:doctor|physician|health ?care (?:provider|"
    r"professional|team)|gp|pharmacist|clinician|provider|specialist|medical professional)"
    r"|\bseek (?:immediate |prompt |urgent )?(?:medical|professional) "
    r"(?:attention|advice|care|help)"
    r"|\b(?:not|does not constitute|is not a substitute for) (?:professional )?medical advice"
    r"|\bi(?: am|'m) (?:not )?(?:a |an )?"
    r"(?:doctor|physician|ai|language model|medical professional)"
    r"|\bas an ai\b|\bi hope (?:this|that) helps\b|\b(?:please )?let me know\b|\bfeel free\b"
    r"|\bgood luck\b|\b(?:great|good) question\b|\bthank(?:s| you)\b"
    r"|\beveryone(?:'s| is) (?:different|unique)\b"
    r"|\bindividual (?:results|circumstances) (?:may )?vary",
    re.I,
)
_RESTATE = re.compile(
    r"^\W*(?:you(?:'ve| have)? asked|your question|the question|regarding your|as for your"
    r"|with regard to your|to answer your)",
    re.I,
)
_PATIENT = re.compile(
    r"\b(?:you|your|you're|yours|yourself|the patient|this patient|our patient|he|she|his|her|him"
    r"|this (?:child|baby|infant|man|woman|boy|girl)|the (?:child|baby|infant))\b",
    re.I,
)
#: Diagnosis and management cues (stems after the project's stemmer) and medical word endings.
CLINICAL_CUES = frozenset(
    content_tokens(
        "treat treatment therapy therapies diagnosis diagnose diagnostic risk mortality morbidity "
        "survival prognosis surgery surgical operation dose dosage drug medication medicine "
        "prescribe prescription vaccine vaccination screening screen test testing biopsy imaging "
        "scan infection disease disorder syndrome symptom complication cancer tumour tumor "
        "carcinoma lesion injury fracture prevent prevention recurrence remission relapse "
        "efficacy effective outcome outcomes adverse contraindicated indicated management manage "
        "intervention randomized trial clinical patients admission hospital cure chronic acute "
        "transplant antibiotic chemotherapy radiotherapy insulin pain inflammation "
        "study studies findings results associated association correlation role effect effects "
        "significantly evidence cohort"
    )
)
_MEDICAL_ENDING = re.compile(
    r"(?<!\w)\w{3,}(?:itis|osis|emia|aemia|ectomy|otomy|ostomy|plasty|pathy|algia|oma|omas|plasia"
    r"|trophy|scopy|graphy|genic|cytes?|virus|viral|bacteri\w*|coccus|mycin|cillin|statin|pril"
    r"|sartan|olol|azole|prazole|mab|nib)\b",
    re.I,
)
_DOSE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:mg|mcg|µg|g|ml|units?|iu|%)\b", re.I)


def decompose(answer: str, kb: KnowledgeBase, question: str | None = None) -> list[FactClaim]:
    """Claims of ``answer`` in order, ids ``c1, c2, …``, each labelled (module docstring)."""
    claims = []
    for piece in split_claims(segment_note(answer)):
        label, reason = label_claim(piece.text, kb, question)
        claims.append(
            FactClaim(
                id=piece.id,
                text=piece.text,
                start=piece.start,
                end=piece.end,
                label=label,
                label_reason=reason,
            )
        )
    return claims


def label_claim(text: str, kb: KnowledgeBase, question: str | None = None) -> tuple[Label, str]:
    """``(label, reason)`` of one claim by the rules of the module docstring."""
    if _META.search(text):
        return "meta", "disclaimer, referral or pleasantry"
    if text.rstrip().endswith("?"):
        return "meta", "a question"
    if _RESTATE.search(text):
        return "meta", "restates the question"
    tokens = set(content_tokens(text))
    if question and tokens and tokens <= set(content_tokens(question)):
        return "meta", "echoes the question"
    concepts = sorted(
        {m.surface for m in kb.concepts_in(text) if set(m.kinds) & CLINICAL_KINDS}, key=str.lower
    )
    cues = sorted(tokens & CLINICAL_CUES) + _MEDICAL_ENDING.findall(text)
    clinical = bool(concepts or cues)
    management = bool(cues or _DOSE.search(text)) or any(
        set(m.kinds) & {"drug", "drug_class", "procedure", "test"} for m in kb.concepts_in(text)
    )
    if _PATIENT.search(text) and not management:
        return "context", "a statement about this patient"
    if clinical:
        shown = ", ".join(list(dict.fromkeys(concepts + cues))[:4])
        return "relevant", f"diagnosis or management content ({shown})"
    return "meta", "no diagnosis or management content"
