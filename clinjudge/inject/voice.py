"""Who said it (issue 36, item 6): an error that gives the clinician's words to the patient, and
its legitimate counterpart that restates the patient's own report without naming the speaker.

* ``attribution_swap`` (error) — an Objective sentence (an examination finding, a result) whose
  clinical content (the knowledge concepts it asserts) the transcript has only in the
  clinician's turns is restated as the patient's report: ``"Grade 2/6 systolic murmur."`` →
  ``"The patient reports grade 2/6 systolic murmur."``. The patient never said it, so the
  edited sentence is wrong about who did. Assessment sentences are left alone: a diagnosis the
  clinician reads from the chart ("history significant for congestive heart failure") is the
  patient's history too, and "the patient reports CHF" is no error a reviewer would mark.
* ``voice_rewrite`` (rewrite) — a Subjective sentence that attributes a report to the patient
  (``"She reports knee pain for two weeks."``) loses its attribution (``"Knee pain for two
  weeks."``) when the patient's turns hold most of its content words: the fact stays the
  patient's, said in the note's own voice, as clinicians write it. Not when the report is a
  supposition or hearsay ("she thinks", "he was told"): that would make it a fact.

Both read the transcript's speaker tags only (turns tagged doctor or patient); an untagged
transcript gives neither.
"""

from __future__ import annotations

import re

from clinjudge.grounding.transcript_facts import FINDING_KINDS
from clinjudge.inject.material import NoteMaterial
from clinjudge.inject.types import Edit, Perturber
from clinjudge.text.normalize import content_tokens
from clinjudge.text.transcript import parse_transcript

#: Concept kinds that make a sentence a clinical statement (a finding, a disease, a result).
_CLINICAL_KINDS = FINDING_KINDS | {"procedure"}
#: The attribution a Subjective sentence may open with, which the voice rewrite removes.
_ATTRIBUTED = re.compile(
    r"^(?:the\s+patient|patient|he|she)\s+(?:reports|states|notes|endorses|describes)"
    r"(?:\s+that)?\s+(?=[a-z])",
    re.IGNORECASE,
)
_LONGEST = 160
#: A sentence that opens with a label ("Musculoskeletal: …", "Medical Reasoning: …") or already
#: speaks of the patient is left alone by the attribution swap.
_LABEL_OR_PATIENT = re.compile(
    r"^[^.:\n]{0,40}:|^(?:the\s+patient|patient|he|she|they|i|we)\b", re.IGNORECASE
)
#: A report the rewrite must not turn into the note's statement: what the patient supposes or
#: was told is the patient's, not a fact.
_HEDGED = re.compile(
    r"\b(?:might|may|maybe|possibly|perhaps|think|thinks|believe|believes|feel that|feels that"
    r"|was told|were told|wonder\w*|suspect\w*)\b",
    re.IGNORECASE,
)


def _voices(src: NoteMaterial) -> tuple[set[str], set[str]]:
    """The content tokens of the clinician's turns and of the patient's turns."""
    clinician: set[str] = set()
    patient: set[str] = set()
    for turn in parse_transcript(src.transcript).turns:
        if turn.speaker == "doctor":
            clinician.update(content_tokens(turn.text))
        elif turn.speaker == "patient":
            patient.update(content_tokens(turn.text))
    return clinician, patient


def find_attribution_swaps(src: NoteMaterial) -> list[Edit]:
    clinician, patient = _voices(src)
    if not clinician or not patient:
        return []
    edits = []
    for s in src.sentences:
        section = src.section_at(s.start)
        text = s.text
        if section is None or section.soap != "objective":
            continue
        if len(text) > _LONGEST or not text[:1].isalpha() or text[:2].isupper():
            continue
        if _LABEL_OR_PATIENT.search(text):
            continue
        mentions = [
            m
            for m in src.note_mentions
            if s.start <= m.start and m.end <= s.end and set(m.kinds) & _CLINICAL_KINDS
        ]
        asserted = [m for m in mentions if not src.negated_in_note(m.start, m.end)]
        words = {w for m in asserted for w in content_tokens(m.surface)}
        if not words or not words <= clinician or words & patient:
            continue
        edits.append(
            Edit(
                s.start,
                s.start + 1,
                f"The patient reports {text[0].lower()}",
                f"the clinician's words given to the patient: '{text[:80]}'",
            )
        )
    return edits


def find_voice_rewrites(src: NoteMaterial) -> list[Edit]:
    _, patient = _voices(src)
    if not patient:
        return []
    edits = []
    for s in src.sentences:
        section = src.section_at(s.start)
        if section is None or section.soap != "subjective":
            continue
        m = _ATTRIBUTED.match(s.text)
        if not m:
            continue
        rest = s.text[m.end() :]
        if _HEDGED.search(rest) or re.match(r"that\b", rest, re.IGNORECASE):
            continue
        words = content_tokens(rest)
        if len(words) < 2 or sum(w in patient for w in words) < 0.6 * len(words):
            continue
        edits.append(
            Edit(
                s.start,
                s.start + m.end() + 1,
                rest[0].upper(),
                f"the patient's report restated in the note's voice: '{s.text[:80]}'",
            )
        )
    return edits


attribution_swap = Perturber(
    "attribution_swap",
    "error",
    find_attribution_swaps,
    "a clinician's finding or assessment given as the patient's report",
)
voice_rewrite = Perturber(
    "voice_rewrite",
    "rewrite",
    find_voice_rewrites,
    "the patient's report restated without naming the speaker",
)
