"""Section-header vocabulary: written header → SOAP class (SPEC §1, "Claims": map header variants).

Keys are normalised labels (:func:`normalize_label`: lowercase, single spaces, no trailing
``:``/``.``/``-``, markdown ``#``/``**`` removed). Sources of the variants: every note of ACI-Bench
train+valid (full-line ALL-CAPS headers, ``CC:``/``HPI:``), the MTS-Dialog section codes
(``GENHX``, ``FAM/SOCHX``, ...), and PriMock57's terse UK labels (``PMH:``, ``DH:``, ``Imp:``,
``O/E``).

Decisions worth knowing:

* ``ASSESSMENT AND PLAN`` (and ``A/P``, ``IMPRESSION AND PLAN``) is *assessment*; its plan parts
  are split off by :data:`PLAN_MARKERS` in :mod:`clinjudge.text.sections`.
* ``Ix`` (investigations) is *plan*: in GP notes it lists tests to order, not results.
* ``RESULTS``, ``LABS``, ``IMAGING``, ``PROCEDURE`` and MTS ``EDCOURSE`` are *objective*.
* ``MEDICATIONS`` / ``DH`` (drug history) and ``ALLERGIES`` are *subjective* (patient history).
"""

from __future__ import annotations

import re

from clinjudge.types import SoapSection

_SUBJECTIVE = """
chief complaint, chief complaints, cc, reason for visit, reason for consultation,
presenting complaint, pc, history of presenting complaint, hpc, history of present illness, hpi,
history, hx, interval history, subjective, review of systems, ros, review of system,
medical history, past medical history, pmh, pmhx, past history, surgical history,
past surgical history, psh, pshx, social history, sh, shx, family history, fh, fhx, fmh, fmhx,
family and social history, social and family history, medications, medication,
current medications, current medication, meds, home medications, dh, dhx, drug history, allergies,
allergy, drug allergies, ice, ideas concerns expectations, birth history, obstetric history,
gynecologic history, gynaecological history, immunizations, immunization history, vaccinations,
genhx, pastmedicalhx, pastsurgical, fam/sochx, gynhx, other_history, habits
"""
_OBJECTIVE = """
physical exam, physical examination, exam, examination, ex, o/e, oe, oex, on examination, objective,
vitals, vital signs, vitals reviewed, vital signs reviewed, results, result, labs, lab results,
laboratory, laboratory results, laboratory data, data, imaging, imaging results, radiology,
procedure, procedures, procedure note, mental status exam, edcourse, ed course, hospital course,
findings
"""
_ASSESSMENT = """
assessment, assessments, impression, impressions, imp, clinical impression, diagnosis, diagnoses,
dx, ddx, differential, differential diagnosis, working diagnosis, assessment and plan,
assessment & plan, assessment/plan, a/p, a&p, impression and plan, impression/plan, problem list,
medical decision making, mdm
"""
_PLAN = """
plan, plans, pln, plan of care, treatment plan, instructions, patient instructions,
discharge instructions, mx, management, treatment, rx, ix, investigations, recommendations,
recommendation, disposition, follow up, follow-up, followup, safety netting, safety netted,
patient education, counseling
"""


def _parse(block: str, soap: SoapSection) -> dict[str, SoapSection]:
    return {w.strip(): soap for w in block.replace("\n", " ").split(",") if w.strip()}


#: Normalised header label → SOAP class.
HEADER_SOAP: dict[str, SoapSection] = {
    **_parse(_SUBJECTIVE, "subjective"),
    **_parse(_OBJECTIVE, "objective"),
    **_parse(_ASSESSMENT, "assessment"),
    **_parse(_PLAN, "plan"),
}

#: Headers whose body mixes assessment and plan; plan parts are split off (sections.py).
COMBINED_ASSESSMENT_PLAN: frozenset[str] = frozenset(
    {"assessment and plan", "assessment & plan", "assessment/plan", "a/p", "a&p",
     "impression and plan", "impression/plan"}
)  # fmt: skip

#: Short clinical codes (PriMock57 style): a header even inline, even under an ALL-CAPS section,
#: and with looser separators (``"PC; ..."``, ``"Imp- ..."``, ``"PMHx , ..."``).
ABBREVIATION_LABELS: frozenset[str] = frozenset(
    {"cc", "pc", "hpc", "hpi", "ros", "pmh", "pmhx", "psh", "pshx", "sh", "shx", "fh", "fhx",
     "fmh", "fmhx", "dh", "dhx", "ice", "imp", "dx", "ddx", "mx", "ix", "rx", "o/e", "oe", "oex",
     "ex", "a/p", "a&p", "pln", "genhx", "pastmedicalhx", "pastsurgical", "fam/sochx", "gynhx",
     "mdm"}
)  # fmt: skip

#: Codes that may be followed by their content after a bare space (``"SHx lawyer"``,
#: ``"DDx ??hypothyroid"``) when written with a capital first letter.
SPACE_SEPARATED_LABELS: frozenset[str] = frozenset(
    {"pmh", "pmhx", "dhx", "shx", "fhx", "fmhx", "ddx", "hpc", "oex"}
)

#: Labels that begin plan content inside an assessment section (SPEC §1: A&P holds both).
PLAN_MARKERS: frozenset[str] = frozenset(
    {"plan", "plans", "medical treatment", "treatment", "additional testing", "testing",
     "patient education and counseling", "patient education", "counseling", "specialist referrals",
     "specialist referral", "referrals", "referral", "patient agreements", "follow up", "follow-up",
     "followup", "instructions", "recommendations", "disposition", "surgical treatment",
     "therapeutic procedures", "diagnostic testing", "medications", "mx", "rx", "ix"}
)  # fmt: skip

#: Labels that return to assessment content inside an assessment section.
ASSESSMENT_MARKERS: frozenset[str] = frozenset(
    {"medical reasoning", "assessment", "impression", "diagnosis", "imp", "dx", "ddx"}
)

_MARKDOWN_RE = re.compile(r"^[#*_\s]+|[*_\s]+$")
_SPACES_RE = re.compile(r"\s+")


def normalize_label(label: str) -> str:
    """``"**Assessment and Plan:**"`` → ``"assessment and plan"``."""
    s = _MARKDOWN_RE.sub("", label)
    s = s.rstrip(":;,.-–— \t*_").strip()
    return _SPACES_RE.sub(" ", s.lower())


def soap_of(label: str) -> SoapSection | None:
    """SOAP class of a written header, or ``None`` when it is not a known header."""
    return HEADER_SOAP.get(normalize_label(label))
