"""A mechanical evidence-fabrication error (SPEC §5 taxonomy "evidence fabrication (false
citation or guideline)"; taxonomy type ``evidence_fabrication``: "A false citation, guideline,
study or test result is invented to support a statement").

``fabricated_citation`` appends to one assessment/plan sentence that states a treatment or test
decision a clause citing an invented authority, inserted before the sentence's final period
("We will order an MRI of the lumbar spine, as required by the 2019 American Academy of
Orthopaedic Surgeons guideline before any treatment is started."). The rule, exactly:

1. **The decision** — a sentence of an assessment/plan section that ends with a period, has a
   decision verb (order, start, prescribe, refer, recommend, continue, schedule, check, will
   ...), no stopping, reducing, conditional or negative wording (not, no, stop, hold,
   discontinue, limit, reduce, may, if, follow up ...), no vaccine or screening (a guideline
   may really recommend those) and no citation wording of its own; the decision's keyword
   must lie in the sentence's last clause (after ", and", ", but", ";"), where the citation
   goes. Its kind, first that applies: ``referral``
   (refer, referral, consult, physical therapy, a "...ist"), ``imaging`` (x-ray, MRI, CT,
   ultrasound, echocardiogram, ...), ``lab`` (labs, blood work, panel, A1c, CBC, culture,
   ...), ``drug`` (a drug of the knowledge base at most :data:`DRUG_AFTER_VERB` characters after a
   start/continue/prescribe/increase verb).
2. **The authority** — the body system of the diagnosis the decision is about: the first
   disease mention of the sentence, else the nearest one before it in its section or in the
   assessment/plan section right before (a problem's heading and reasoning; assessment
   sections first), generic words ("pain", "injury") left out, mapped through its ICD-10-CM
   codes in the knowledge base (class members and their
   ``xref``/``is_a`` targets) onto the organisation of ``data/fabricated_citations.toml``
   (I → American College of Cardiology, M/S → American Academy of Orthopaedic Surgeons, ...);
   the fallback organisation when no diagnosis maps. The year is fixed by the sentence
   (``2015 + crc32(sentence) mod 9``), so a note gives the same clause every run.
3. **Never one the transcript mentions** — no organisation named in the clause occurs in the
   transcript or the note, and the transcript's version of the decision (its sentences naming
   the same drug concept or decision keyword, with one sentence either side) holds no citation
   wording (guideline, trial, research, society, association, college, academy, literature,
   published, journal, "studies show", "recommended by").
4. **Within the limits** — one candidate per template of the decision's kind (a template with
   ``{condition}`` only when a diagnosis is known); the clause adds at most 200 characters and
   touches only its own sentence (:data:`MAX_CLAUSE`).
"""

from __future__ import annotations

import re
import tomllib
import zlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from clinjudge.inject.material import NoteMaterial, phrase_pattern
from clinjudge.inject.types import Edit, Perturber
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.knowledge.concept import Mention
from clinjudge.text.sentences import Span, split_sentences

TABLE_FILE = "fabricated_citations.toml"
#: The taxonomy's WRITE limit for evidence_fabrication.
MAX_CLAUSE = 200
DECISION_SECTIONS = frozenset({"assessment", "plan"})
#: Most characters between a drug decision verb and its drug ("continue taking metformin").
DRUG_AFTER_VERB = 30

_DECISION = re.compile(
    r"\b(?:order(?:ed|ing)?|obtain(?:ed)?|start(?:ed|ing)?|initiat(?:e|ed|ing)|prescrib(?:e|ed)"
    r"|recommend(?:ed)?|refer(?:red)?|referral|continu(?:e|ed|ing)|schedul(?:e|ed)|check"
    r"|recheck|repeat|get|send|place|increase|begin|will|going\s+to|plan(?:ned)?)\b",
    re.I,
)
_DRUG_DECISION = re.compile(
    r"\b(?:start(?:ed|ing)?|initiat(?:e|ed|ing)|prescrib(?:e|ed)|recommend(?:ed)?|continu(?:e|ed)"
    r"|refill(?:ed)?|increase[ds]?|begin|switch(?:ed)?)\b",
    re.I,
)
_STOP = re.compile(
    r"\b(?:not|no|never|stop(?:ped)?|hold(?:ing)?|discontinu\w*|avoid\w*|defer\w*|declin\w*"
    r"|refus\w*|if|unless|may|might|could|depending|consider\w*|follow(?:ing)?[\s-]+up"
    r"|return|limit\w*|reduc\w*|decreas\w*|cut)\b|n't\b",
    re.I,
)
_CLAUSE_BREAK = re.compile(r",\s+(?:and|but|so|which)\s+|;\s*", re.I)
_PREVENTIVE = re.compile(r"\b(?:vaccin\w*|immuni[sz]\w*|screen\w*|colonoscopy|mammogram)", re.I)
#: Wording that cites an authority; in the transcript's version of a decision it forbids the
#: injection (the transcript would support the citation), in the note sentence likewise.
CITATION_WORDING = re.compile(
    r"\b(?:guidelines?|trials?|research|society|association|college|academy|literature"
    r"|published|journals?|(?:studies|study)\s+(?:show|showed|shows|found|finds|suggests?|says?)"
    r"|recommend(?:ed|s|ations?)?\s+(?:by|from))\b",
    re.I,
)
KIND_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "referral",
        re.compile(
            r"\b(?:refer(?:red)?|referral|consult(?:ation)?|physical\s+therapy|occupational"
            r"\s+therapy|[a-z]+(?:ologist|iatrist)s?|dietitians?|nutritionists?|surgeons?)\b",
            re.I,
        ),
    ),
    (
        "imaging",
        re.compile(
            r"\b(?:x-?rays?|MRI|CT(?:\s+scan)?|CAT\s+scan|ultrasound|echocardiogram|imaging"
            r"|mammogram|DEXA|bone\s+density|angiogram|stress\s+test|EKG|ECG|EMG)\b",
            re.I,
        ),
    ),
    (
        "lab",
        re.compile(
            r"\b(?:labs?|blood\s*work|(?:lipid|metabolic|thyroid)\s+panel|panel|A1c|CBC|TSH|BMP"
            r"|CMP|urinalysis|urine\s+(?:test|culture)|culture|PSA|blood\s+tests?)\b",
            re.I,
        ),
    ),
)
#: Diagnoses too generic to name a body system or to stand in a clause.
GENERIC_DIAGNOSES = frozenset(
    {
        *("pain", "injury", "injuries", "wound", "wounds", "disease", "infection", "syndrome"),
        *("disorder", "condition", "inflammation", "swelling", "lesion", "mass", "allergy"),
        *("allergies", "scar", "scars", "cancer", "acute", "chronic"),
    }
)


@dataclass(frozen=True)
class CitationTable:
    """``systems``: ``(ICD-10 ranges, organisation)`` in table order; ``templates`` per kind."""

    systems: tuple[tuple[tuple[tuple[str, str], ...], str], ...]
    fallback: str
    templates: dict[str, tuple[str, ...]]

    @property
    def organisations(self) -> tuple[str, ...]:
        return (*(org for _, org in self.systems), self.fallback)

    def organisation(self, codes: list[str]) -> str | None:
        """The organisation of the first ICD-10 code that falls in a system's range."""
        for code in codes:
            head = code.split(":", 1)[-1][:3].upper()
            for ranges, org in self.systems:
                if any(lo <= head <= hi for lo, hi in ranges):
                    return org
        return None


@lru_cache(maxsize=1)
def citation_table() -> CitationTable:
    """``data/fabricated_citations.toml`` parsed."""
    text = resources.files("clinjudge.inject").joinpath("data", TABLE_FILE).read_text("utf-8")
    raw = tomllib.loads(text)
    systems = tuple((tuple(tuple(r.split("-")) for r in s["icd"]), s["org"]) for s in raw["system"])
    templates = {kind: tuple(ts) for kind, ts in raw["templates"].items()}
    return CitationTable(systems, raw["fallback"], templates)


def icd10_codes(kb: KnowledgeBase, canonical: tuple[str, ...]) -> list[str]:
    """ICD-10-CM ids of the concept classes ``canonical``: their members and the members'
    ``xref``/``is_a``/``same_as`` targets, sorted."""
    lx = kb.lexicon
    found: set[str] = set()
    for cid in canonical:
        for i in lx.class_of(lx.pos[cid]):
            concept = lx.concepts[i]
            found |= {concept.id} | {t for r, t in concept.relations if r != "has_symptom"}
    return sorted(c for c in found if c.startswith("ICD10CM:"))


# -- the decision ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Decision:
    sentence: Span
    kind: str
    keys: tuple[str, ...]  # the decision keywords of the sentence, or the drug surface
    drug: tuple[str, ...]  # canonical ids of the drug (kind "drug")


def _decision(src: NoteMaterial, sentence: Span) -> _Decision | None:
    """Rule 1 for one sentence."""
    text = sentence.text
    if not text.endswith(".") or re.search(r"\b\w\.\w\.$|\betc\.$", text):
        return None
    if not _DECISION.search(text) or _STOP.search(text) or CITATION_WORDING.search(text):
        return None
    if _PREVENTIVE.search(text):
        return None  # a guideline may really recommend a vaccine or a screening test
    # the clause goes at the end: the decision must be in the last clause, not before a
    # ", and the patient elected to proceed"
    last = max((m.end() for m in _CLAUSE_BREAK.finditer(text)), default=0)
    for kind, pattern in KIND_PATTERNS:
        if keys := tuple(dict.fromkeys(h.group() for h in pattern.finditer(text, last))):
            return _Decision(sentence, kind, keys, ())
    if not _DRUG_DECISION.search(text):
        return None
    verbs = [v.end() for v in _DRUG_DECISION.finditer(text)]
    for m in src.note_mentions:
        inside = sentence.start + last <= m.start and m.end <= sentence.end
        if inside and "drug" in m.kinds and "abbreviation" not in m.kinds and len(m.surface) > 3:
            at = m.start - sentence.start
            if any(0 <= at - v <= DRUG_AFTER_VERB for v in verbs):
                return _Decision(sentence, "drug", (m.surface,), m.canonical)
    return None


def _transcript_cites(src: NoteMaterial, d: _Decision) -> bool:
    """Rule 3: the transcript's version of the decision holds citation wording."""
    units = src.facts.index.units
    if d.drug:
        hits = [
            i
            for i, ms in enumerate(src.facts.mentions)
            if any(set(m.canonical) & set(d.drug) for m in ms)
        ]
    else:
        patterns = [phrase_pattern(k) for k in d.keys]
        hits = [i for i, u in enumerate(units) if any(p.search(u.text) for p in patterns)]
    near = {j for i in hits for j in (i - 1, i, i + 1) if 0 <= j < len(units)}
    return any(CITATION_WORDING.search(units[j].text) for j in near)


# -- the authority ---------------------------------------------------------------------------


def _diagnoses_before(src: NoteMaterial, d: _Decision) -> list[Mention]:
    """Disease mentions the decision may be about: the sentence's own, then the earlier ones
    of its section and of the section right before it when that is an assessment/plan
    section (a problem's heading and reasoning before its plan) — those of assessment sections
    first, each nearest first; generic words and negated mentions ("no fracture") left out."""
    s = d.sentence
    i = next(k for k, sec in enumerate(src.sections) if sec.start <= s.start < sec.end)
    scope = [src.sections[i]]
    if i > 0 and src.sections[i - 1].soap in DECISION_SECTIONS:
        scope.insert(0, src.sections[i - 1])
    lo = scope[0].start

    def usable(m: Mention) -> bool:
        return (
            "disease" in m.kinds
            and m.surface.lower() not in GENERIC_DIAGNOSES
            and not src.negated_in_note(m.start, m.end)
        )

    own = [m for m in src.note_mentions if s.start <= m.start and m.end <= s.end and usable(m)]
    earlier = [m for m in src.note_mentions if lo <= m.start and m.end <= s.start and usable(m)]
    stated = [m for m in earlier if (sec := src.section_at(m.start)) and sec.soap == "assessment"]
    return own + stated[::-1] + [m for m in earlier[::-1] if m not in stated]


def _condition_text(src: NoteMaterial, m: Mention) -> str:
    """The diagnosis as a clause names it: lower-case unless a source that writes names in
    lower case (not ICD-10, whose titles are capitalised) writes it capitalised ("Lyme
    disease"), or it is an abbreviation ("GERD")."""
    surface = m.surface
    if surface.isupper() or not surface[:1].isupper():
        return surface
    lowered = surface[:1].lower() + surface[1:]
    forms = {
        f
        for cid in m.concept_ids
        if not cid.startswith("ICD10CM:")
        for f in src.kb.concept(cid).surfaces()
    }
    return surface if surface in forms and lowered not in forms else lowered


def _authority(src: NoteMaterial, d: _Decision) -> tuple[str, str | None]:
    """Rule 2: ``(organisation, condition text or None)``."""
    table = citation_table()
    for m in _diagnoses_before(src, d):
        org = table.organisation(icd10_codes(src.kb, m.canonical))
        if org is not None:
            return org, _condition_text(src, m)
    return table.fallback, None


def find_fabricated_citations(src: NoteMaterial) -> list[Edit]:
    table = citation_table()
    named = {
        org
        for org in table.organisations
        if src.transcript_says(org) or phrase_pattern(org).search(src.note)
    }
    edits = []
    for section in src.sections:
        if section.soap not in DECISION_SECTIONS:
            continue
        for sentence in split_sentences(src.note, section.start, section.end):
            d = _decision(src, sentence)
            if d is None or _transcript_cites(src, d):
                continue
            org, condition = _authority(src, d)
            year = 2015 + zlib.crc32(sentence.text.encode("utf-8")) % 9
            for template in table.templates[d.kind]:
                if "{condition}" in template and condition is None:
                    continue
                clause = template.format(year=year, org=org, condition=condition)
                cited = [o for o in table.organisations if o in clause]
                if named.intersection(cited):
                    continue
                if len(clause) > MAX_CLAUSE:
                    continue
                why = (
                    f"invented {('guideline of the ' + org) if org in clause else 'study'} "
                    f"cited for the {d.kind} decision ({', '.join(d.keys)}); the transcript "
                    "cites no guideline, study or authority for it"
                )
                edits.append(Edit(sentence.end - 1, sentence.end - 1, clause, why))
    return edits


fabricated_citation = Perturber(
    "fabricated_citation",
    "error",
    find_fabricated_citations,
    "an invented guideline or study cited for a treatment or test decision",
)
