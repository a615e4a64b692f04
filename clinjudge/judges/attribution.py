"""Statements given to the wrong speaker (issue 36): a claim that presents something as the
patient's own words or belief, when the visit has it only in the clinician's own voice.

A claim is **patient-voiced** when its subject is the patient (``he``, ``she``, ``the
patient``, a name) and its verb reports speech, belief or perception: *reports, states, notes,
says, mentions, describes, believes, thinks, feels that, is concerned, would like, wants, hears,
notices*. What it reports — the words after that verb — must then be on the patient's side of
the visit (:attr:`clinjudge.grounding.visit_reading.VisitReading.patient_side`: the patient's
reports and answers, the clinician's narration of the history, questions the patient answered
yes).

The claim **misattributes** when no turn on the patient's side holds its reported words
(coverage ≤ :data:`PATIENT_COVERAGE`) and one turn of the clinician's own voice (a finding,
assessment, advice, remark) does: either most of them (coverage ≥ :data:`OWN_COVERAGE`), or
the words the patient's side never says anywhere in the visit — at least two of them, which
that turn holds (and half of all the reported words). Generic relation words ("symptoms",
"related", "caused") are not counted: "He believes that his symptoms are related to carpal
tunnel syndrome" is about carpal tunnel syndrome. That is a contradiction of who said it (SPEC §1
tier 5, "any detail that directly contradicts a stated fact"; the labels call it
*contradicted*), and the rationale names the speaker and quotes the clinician: ``the doctor,
not the patient, said this: "i do hear a slight 2/6 systolic ejection murmur"``. Coverage
counts content words (stems); a turn is one speaker's uninterrupted talk, so words gathered
from across the visit do not add up.

**By finding.** The patient often names the body part of a finding only the clinician names
("my right shoulder" / "tenderness over the right shoulder"), so the words of a claim like
"He reports tenderness over the right shoulder" are half on the patient's side. Given the
words of the clinical findings the claim asserts (``findings``: symptoms, findings, diseases,
not negated), the claim also misattributes when the patient's side never says any of them and
one stretch of the clinician's own voice says them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from clinjudge.grounding.transcript_facts import FINDING_KINDS, ConceptMention
from clinjudge.grounding.visit_reading import VisitReading
from clinjudge.judges.claim_reading import POLARITY_WORDS
from clinjudge.text.normalize import content_tokens

#: Coverage of the reported words by one turn of the clinician's own voice, at least.
OWN_COVERAGE = 0.75
#: Coverage of the reported words by any turn on the patient's side, at most.
PATIENT_COVERAGE = 0.4
#: Relation words that say how facts hang together, not what they are.
GENERIC_WORDS = frozenset(
    content_tokens("symptoms related relating caused causing cause due because problem issue thing")
)
#: Fewest content words the reported part must have to be checked.
MIN_WORDS = 2

#: The patient as the subject: a pronoun, "the patient", or a name (capitalised).
_SUBJECT = r"(?:(?i:the patient|patient|pt|he|she)|(?:Mr|Mrs|Ms|Miss)\.? [A-Z][a-z]+|[A-Z][a-z]+)"
_VERB = (
    r"(?:reports?|reported|states?|stated|notes?|noted|says?|said|mentions?|mentioned"
    r"|describes?|described|believes?|believed|thinks?|thought|feels? that|felt that"
    r"|is (?:also )?concerned|was concerned|is worried|was worried|would like|wants?|wanted"
    r"|hears?|heard|notices?|noticed|adds?|added|explains?|explained|expresses|expressed)"
)
_VOICED = re.compile(
    rf"^\W*{_SUBJECT}\s+(?i:(?:also |further |additionally |does |did )?{_VERB}\b(?:\s+that\b)?)"
)


def finding_words(mentions: Iterable[ConceptMention]) -> frozenset[str]:
    """Content words of the clinical findings a claim asserts (symptoms, findings, diseases,
    not negated): the ``findings`` of :func:`misattributed`."""
    return frozenset(
        w
        for m in mentions
        if m.kinds & FINDING_KINDS and not m.negated
        for w in content_tokens(m.surface)
    )


def reported_part(claim: str) -> str | None:
    """The words a patient-voiced claim reports (after its speech or belief verb), or
    ``None`` when the claim is not patient-voiced (module docstring)."""
    found = _VOICED.match(claim)
    return claim[found.end() :].strip() if found else None


def _coverage(words: frozenset[str], said: frozenset[str]) -> float:
    return len(words & said) / len(words)


def misattributed(
    claim: str, reading: VisitReading | None, findings: frozenset[str] = frozenset()
) -> str | None:
    """Why ``claim`` gives the patient words only the clinician said (module docstring), or
    ``None``; ``findings``: the content words of the clinical findings the claim asserts."""
    if reading is None or not reading.tagged:
        return None
    reported = reported_part(claim)
    if reported is None:
        return None
    words = frozenset(content_tokens(reported)) - POLARITY_WORDS - GENERIC_WORDS
    if len(words) < MIN_WORDS:
        return None
    patient = max((_coverage(words, side) for side in reading.patient_side), default=0.0)
    if patient > PATIENT_COVERAGE:
        return _by_finding(words & findings, reading, patient)
    unsaid = words - reading.patient_words  # what the patient's side never says

    def clinicians(said: frozenset[str]) -> bool:
        coverage = _coverage(words, said)
        return coverage >= OWN_COVERAGE or (
            len(unsaid) >= MIN_WORDS and unsaid <= said and coverage >= 0.5
        )

    turns = [(frozenset().union(*(s.tokens for s in own)), own) for own in reading.clinician_own]
    own = next((own for said, own in turns if clinicians(said)), None)
    if own is None:
        return _by_finding(words & findings, reading, patient)
    best = max(own, key=lambda s: len(words & s.tokens))
    return _reason(best.text, patient)


def _by_finding(found: frozenset[str], reading: VisitReading, patient: float) -> str | None:
    """The clinician's stretch that alone says the claim's finding words, when the patient's
    side never says any of them (module docstring, "By finding")."""
    if not found or found & reading.patient_words:
        return None
    said = [s for own in reading.clinician_own for s in own if found <= s.tokens]
    return _reason(said[0].text, patient) if said else None


def _reason(quoted: str, patient: float) -> str:
    return (
        f'the doctor, not the patient, said this: "{quoted.strip()[:160]}" (the patient\'s '
        f"side of the visit holds {patient:.0%} of these words)"
    )
