"""What makes a visit fact critical (SPEC §9 "Omissions"): the wording of red-flag symptoms,
allergies, abnormal results, medication changes and return precautions.

One vocabulary for both sides of omissions: the omission judge
(:mod:`clinjudge.omissions.visit_facts`) marks a transcript fact ``critical`` with it, and the
``critical_omission`` injector (:mod:`clinjudge.inject.omission`) deletes a note sentence
carrying such an item. The lists are hand-written for clinjudge.

* **red-flag symptom** — a symptom of :data:`RED_FLAGS` that the visit affirms (a denied red
  flag is a pertinent negative: documented, but its omission hides no emergency);
* **allergy** — a sentence naming an allergy (:data:`ALLERGY`) that denies none
  (:data:`NO_ALLERGY`: "no known", "NKDA");
* **abnormal result** — a result cue (:data:`ABNORMAL`: "elevated", "positive for", "shows" …)
  with a finding or disease;
* **medication change** — a drug with a change cue (:data:`MEDICATION_CHANGE`: start, stop,
  increase, switch, prescribe, "put you on", avoid, "instead" …);
* **return precaution** — :func:`is_precaution`: a contact word, a condition and a clinical
  turn ("call if the pain worsens"); "call with any questions" is none.
"""

from __future__ import annotations

import re

#: Red-flag symptoms whose omission hides a possible emergency.
RED_FLAGS: tuple[str, ...] = (
    "chest pain",
    "shortness of breath",
    "syncope",
    "hemoptysis",
    "hematemesis",
    "hematochezia",
    "melena",
    "blood in stool",
    "hematuria",
    "weight loss",
    "fever",
    "night sweats",
    "palpitations",
    "numbness",
    "weakness",
    "vision loss",
    "suicidal ideation",
    "seizure",
    "loss of consciousness",
    "dysphagia",
)
ALLERGY = re.compile(r"\ballerg(?:y|ies|ic)\b", re.I)
NO_ALLERGY = re.compile(r"\b(?:no|nkda|nka|denies|deny|none)\b", re.I)
ABNORMAL = re.compile(
    r"\b(?:elevated|high|low|decreased|increased|abnormal|positive(?: for)?|reveal(?:s|ed)"
    r"|show(?:s|ed)|demonstrat(?:es|ed)|consistent with|significant for|notable for)\b",
    re.I,
)
MEDICATION_CHANGE = re.compile(
    r"\b(?:start(?:ed|ing)?|stop(?:ped|ping)?|discontinu\w*|increas\w*|decreas\w*|double|"
    r"cut (?:back|down)|switch\w*|chang\w*|prescrib\w*|put (?:you|him|her) on|taper\w*|"
    r"hold(?:ing)?|restart\w*|resume|add(?:ing)?|go up on|bump (?:you )?up|come off|avoid\w*|"
    r"instead|do n't take|don't take|do not take|no more|hold off)\b",
    re.I,
)
#: A change made before this visit: a clinician's past-tense change ("we started you on a lower
#: dose", "dr. smith stopped it", "it was increased"); the patient's own ("i stopped taking
#: it") stays a change to record.
_PAST_CHANGE = re.compile(
    r"\b(?:(?:we|they|he|she|dr\.? \w+)(?: had)?|was|were|been|got)\s+"
    r"(?:start|stopp|discontinu|increas|decreas|switch|chang|prescrib|restart|add)ed\b",
    re.I,
)


def change_cues(text: str) -> list[int]:
    """Offsets of the :data:`MEDICATION_CHANGE` cues in ``text`` that change a medication now,
    leaving out changes made before the visit (:data:`_PAST_CHANGE`)."""
    past = [m.span() for m in _PAST_CHANGE.finditer(text)]
    return [
        cue.start()
        for cue in MEDICATION_CHANGE.finditer(text)
        if not any(s <= cue.start() < e for s, e in past)
    ]


_PRECAUTION = re.compile(
    r"\b(?:call|return|come back|go to (?:the )?(?:emergency|er\b|urgent)|seek|contact)\b", re.I
)
_CONDITION = re.compile(r"\b(?:if|should|when|until)\b", re.I)
_CLINICAL_TURN = re.compile(
    r"\b(?:wors\w*|persist\w*|develops?|fever|pain|bleed\w*|symptoms?|severe|new|not improv\w*"
    r"|no improvement|chang\w*|swelling|shortness of breath|numbness)\b",
    re.I,
)


def is_precaution(text: str) -> bool:
    """A return precaution: a contact word, a condition and a clinical turn (module docstring)."""
    return all(p.search(text) for p in (_PRECAUTION, _CONDITION, _CLINICAL_TURN))


def names_allergy(text: str) -> bool:
    """A sentence naming an allergy it does not deny ("allergic to penicillin")."""
    return bool(ALLERGY.search(text)) and not NO_ALLERGY.search(text)
