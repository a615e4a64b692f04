"""What a note cites, refers to or images that the visit never did (SPEC §1 safety floor, tier 4;
tier 5 for a contradicted site; SPEC §5 "evidence fabrication").

- :func:`unsupported_citation`: a guideline, a named body's recommendation, a study or trial
  result, or a professional organisation the transcript never talks about;
- :func:`unmentioned_referral`: a referral to a specialty no transcript sentence talks of sending
  the patient to, by name or in plain words ("a foot doctor");
- :func:`imaging_site_contradiction`: imaging of a site the visit's imaging never names.

Each returns a one-line reason, or ``None`` when the claim passes.
"""

from __future__ import annotations

import re

from clinjudge.grounding.transcript_facts import TranscriptFacts
from clinjudge.text.negation import is_negated
from clinjudge.text.normalize import content_token_spans, content_tokens

#: A claim that cites a source: a guideline, a recommendation of a named body, a study or trial
#: and its result, or a professional organisation (SPEC §5 "evidence fabrication").
_CITATION = re.compile(
    r"\bguidelines?\b|\brecommended by\b|\baccording to\b|\bconsensus statement\b"
    r"|\bmeta-?analys[ie]s\b|\b(?:randomi[sz]ed|controlled|clinical|multicenter|cohort)\s+"
    r"(?:trial|study)\b|\b(?:19|20)\d{2}\s+(?:study|trial|review|guideline)\b"
    r"|\bstud(?:y|ies)\s+(?:have\s+|has\s+)?(?:shown|show|showed|found|demonstrated)\b"
    r"|\b(?:Association|College|Academy|Society|Network|Task Force)\s+(?:of|for)\b"
    r"|\b(?:American|European|National|World|International|British|Canadian)\s+"
    r"(?:[A-Z][a-z]+\s+){0,3}(?:Association|College|Academy|Society|Network|Organi[sz]ation)\b",
)
#: Transcript words that show the visit itself talked about a source (stems). Words a visit
#: uses for other things are left out: "study" (a sleep study), "evidence" (no evidence of),
#: "recommend", "associated", "college", "research".
CITATION_WORDS = frozenset(
    content_tokens("guideline guidelines trial trials society academy consensus published")
)


def unsupported_citation(claim_text: str, facts: TranscriptFacts) -> str | None:
    """Safety floor (SPEC §1 tier 4; SPEC §5 evidence fabrication): the claim cites a source —
    a guideline, a named body's recommendation, a study or trial result, a professional
    organisation (:data:`_CITATION`) — and the transcript never talks about one (none of
    :data:`CITATION_WORDS`). Inference never supplies a citation: a guideline the visit did not
    mention is fabricated evidence, however standard the care it is attached to."""
    found = _CITATION.search(claim_text)
    if found and not CITATION_WORDS & facts.tokens:
        return f"cites a source the transcript never mentions: {found.group()!r}"
    return None


#: A referral in a note: "referred to podiatry", "refer him to a cardiologist", "ENT referral".
#: ("Follow up with orthopedics" is left out: the visit may be that specialty's own.)
_REFERRAL = re.compile(
    r"\b(?:refer(?:red|ral|ring|s)?\s+(?:\w+\s+){0,2}?to|consult(?:ation)?\s+with)\s+"
    r"(?:an?\s+|the\s+|his\s+|her\s+)?(?P<to>[A-Za-z][\w/ ]{2,40})"
    r"|\b(?P<before>[A-Za-z]{3,}(?:\s+[A-Za-z]+)?)\s+(?:referral|consult(?:ation)?)\b",
    re.I,
)
#: Words of a transcript sentence that talk about sending the patient to someone.
_REFERRAL_CUES = frozenset(
    content_tokens("refer referral referred send sending sent see specialist consult appointment")
)
#: The specialties a referral names, by the prefix of their word ("podiat" for podiatry and
#: podiatrist), with how a visit names each in plain words.
_SPECIALTIES: dict[str, tuple[str, ...]] = {
    "podiat": ("foot doctor", "foot specialist"),
    "ophthal": ("eye doctor", "eye specialist"),
    "optomet": ("eye doctor",),
    "cardiol": ("heart doctor", "heart specialist"),
    "dermat": ("skin doctor",),
    "gastro": ("stomach doctor", "gi doctor"),
    "nephrol": ("kidney doctor", "kidney specialist"),
    "urolog": ("urine doctor",),
    "orthop": ("bone doctor", "orthopedic"),
    "neurol": ("nerve doctor",),
    "pulmon": ("lung doctor",),
    "endocr": ("hormone doctor", "diabetes doctor"),
    "rheumat": (),
    "oncolog": (),
    "psychi": ("psych",),
    "psycholog": (),
    "vascular": (),
    "ent": ("ear nose and throat", "ear nose throat"),
    "physical therap": (),
    "pain manag": (),
}
_SPECIALTY_STEMS = re.compile(rf"\b({'|'.join(map(re.escape, _SPECIALTIES))})", re.I)


#: A specialty's name up to "for/to/and/in/at" or the end. The blanks before that word are
#: read from where they start (or from the second character), not from inside the run: a run
#: read once per character was quadratic.
_SPECIALTY_NAME = re.compile(r"[\w ]+?(?=(?:(?<!\s)|(?<=^\s))\s+(?:for|to|and|in|at)\b|$)")


def unmentioned_referral(claim_text: str, facts: TranscriptFacts) -> str | None:
    """Safety floor (an order the visit never placed, SPEC §1 tier 4): a referral to a
    specialty that no transcript sentence talks of sending the patient to — by its name
    ("podiatry", "cardiologist") or in plain words ("a foot doctor")."""
    for m in _REFERRAL.finditer(claim_text):
        target = m.group("to") or m.group("before") or ""
        found = _SPECIALTY_STEMS.search(target)
        if not found:
            continue
        stem_prefix = found.group(1).lower()
        specialty = _SPECIALTY_NAME.match(target[found.start() :])
        plain = _SPECIALTIES[stem_prefix]
        for unit in facts.index.units:
            low = unit.text.lower()
            named = re.search(rf"\b{re.escape(stem_prefix)}", low) or any(p in low for p in plain)
            if named and (unit.tokens & _REFERRAL_CUES or any(p in low for p in plain)):
                break
        else:
            name = (specialty.group() if specialty else found.group()).strip()
            return f"a referral to {name} is never discussed in the visit"
    return None


_TESTS = r"x-?\s?rays?|xr|radiographs?|mri|ct(?:\s+scan)?|cat\s+scan|ultrasound|imaging"
_TEST_RE = re.compile(rf"\b(?:{_TESTS})\b", re.I)
_SITE_WORDS = re.findall(
    r"\w+",
    "head neck chest back spine shoulder arm elbow forearm wrist hand finger thumb hip "
    "thigh knee leg ankle foot feet toe abdomen pelvis kidney liver gallbladder heart lung "
    "brain sinus lumbar cervical thoracic rib heel jaw face breast",
)
#: Body sites an imaging order names (token stems), and the word to write for each stem.
SITE_NAMES = {content_tokens(w)[0]: w for w in reversed(_SITE_WORDS)}
SITES = frozenset(SITE_NAMES)
#: Trunk and head regions one scan shows together: a CT of the abdomen shows the kidneys, a
#: chest film the ribs and lungs. Sites of one region do not contradict each other; limb
#: films do not overlap that way (a foot film is not an ankle film).
_REGIONS = [
    "abdomen pelvis kidney liver gallbladder",
    "chest heart lung rib breast",
    "spine back lumbar cervical thoracic neck",
    "head brain sinus jaw face",
]
_REGION_OF = [frozenset(content_tokens(r)) for r in _REGIONS]


def _one_region(a: set[str], b: set[str]) -> bool:
    """Whether some site of ``a`` and some site of ``b`` lie in one imaged region."""
    return any(region & a and region & b for region in _REGION_OF)


def _sites_near(text: str, unsited_reach: bool = False) -> set[str]:
    """Body sites within five words of an imaging test in ``text``; with ``unsited_reach``, a
    test named with no site near it ("so your x-ray , no fracture … you have a knee
    contusion") takes the sites the whole sentence affirms (not "no injury to the foot")."""
    sites: set[str] = set()
    whole = (
        {t for t, s, e in content_token_spans(text) if t in SITES and not is_negated(text, s, e)}
        if unsited_reach
        else set()
    )
    for m in _TEST_RE.finditer(text):
        before = text[: m.start()].split()[-5:]
        after = text[m.end() :].split()[:6]
        near = set(content_tokens(" ".join(before + after))) & SITES
        sites |= near or whole
    return sites


def imaging_site_contradiction(claim_text: str, facts: TranscriptFacts) -> str | None:
    """Tier 5: the claim's imaging is of a site the visit's imaging never is ("x-ray of the
    right foot" when the visit's x-ray is of the right ankle)."""
    claimed = _sites_near(claim_text)
    if not claimed:
        return None
    said: set[str] = set()
    for unit in facts.index.units:
        said |= _sites_near(unit.text.lower(), unsited_reach=True)
    if said and not claimed & said and not _one_region(claimed, said):
        claim_site = SITE_NAMES[sorted(claimed)[0]]
        visit_sites = ", ".join(sorted(SITE_NAMES[t] for t in said))
        return f"imaging of the {claim_site}: the visit's imaging is of the {visit_sites}"
    return None
