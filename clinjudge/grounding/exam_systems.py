"""Examination claims: which body systems a claim describes, and whether the visit voiced them.

A note abstracts what the clinician says while examining ("your lungs sound nice and clear" →
"Lungs clear to auscultation bilaterally. No wheezes, rales, or rhonchi."): that is tier 3, an
exam abstraction (SPEC §1 step 4). A normal finding for a system the visit never examined
("Neck supple without thyromegaly" when nobody looked at the neck; "Vital signs are within
normal limits" when no vital sign was read out) is a fabricated exam (tier 4): the reviewer's
guide calls boilerplate exams the visit never had unsupported.

A system is *voiced* when a transcript sentence names it (:data:`SYSTEMS` cue words) next to a
finding word ("sounds", "clear", "normal", "regular", "appreciate", "tender" …: what was heard
or seen, not "let me listen to your heart"), or when the clinician states the whole exam normal
("the rest of your exam is normal", "normal physical exam per my template") — then every system
is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from clinjudge.text.normalize import content_tokens


def _stems(words: str) -> frozenset[str]:
    return frozenset(content_tokens(words))


@dataclass(frozen=True)
class System:
    """A body system: the words that put a claim in it, the words that show it was examined."""

    claim_words: frozenset[str]
    cue_words: frozenset[str]


SYSTEMS: dict[str, System] = {
    "vital signs": System(
        _stems(
            "vital vitals blood pressure bp heart rate pulse temperature afebrile febrile "
            "respiratory rate respirations oxygen saturation spo2 sat bmi weight"
        ),
        _stems(  # measurements only: "fever" and "weight" are history questions too
            "vital vitals blood pressure temperature pulse heart rate oxygen saturation sats "
            "bmi respiratory rate"
        ),
    ),
    "general": System(
        _stems(
            "distress well-appearing well-developed well-nourished nontoxic ill-appearing "
            "comfortable appearance"
        ),
        _stems("distress comfortable appear appearing look looks"),
    ),
    "heart": System(
        _stems("heart cardiac cardiovascular murmur murmurs gallop gallops rub rubs rhythm s1 s2"),
        _stems("heart murmur rhythm cardiac"),
    ),
    "lungs": System(
        _stems(
            "lung lungs respiratory breath auscultation wheeze wheezes wheezing rales "
            "rhonchi crackles effort"
        ),
        _stems("lung lungs breath breathing wheeze wheezing crackles"),
    ),
    "abdomen": System(
        _stems(
            "abdomen abdominal bowel soft nondistended non-distended distended "
            "organomegaly hepatosplenomegaly hernia hernias guarding rebound"
        ),
        _stems("abdomen belly stomach bowel"),
    ),
    "head and neck": System(
        _stems(
            "neck supple thyroid thyromegaly lymphadenopathy lymph jvd jugular carotid "
            "bruit bruits head normocephalic atraumatic pupils perrla conjunctiva sclera "
            "oropharynx pharynx tympanic membranes mucous throat ears nose sinuses"
        ),
        _stems(
            "neck thyroid lymph glands nodes carotid throat ears eyes pupils nose sinus "
            "sinuses mouth tonsils"
        ),
    ),
    "extremities": System(
        _stems("extremities extremity edema cyanosis clubbing pulses capillary refill"),
        _stems("edema swelling legs ankles feet pulses"),
    ),
    "skin": System(
        _stems("skin rash rashes lesion lesions turgor warm dry intact"),
        _stems("skin rash lesion scar"),
    ),
    "neurological": System(
        _stems(
            "neuro neurologic neurological cranial nerves reflexes coordination focal "
            "deficits oriented alert"
        ),
        _stems("neuro neurologic reflexes strength sensation cranial nerves"),
    ),
    "psychiatric": System(
        _stems("mood affect judgment insight psychiatric"),
        _stems("mood affect"),
    ),
}
#: What a reason calls each system ("the visit voices no examination of the abdomen").
PLACES: dict[str, str] = {
    "vital signs": "vital signs", "general": "general appearance", "heart": "heart",
    "lungs": "lungs", "abdomen": "abdomen", "head and neck": "head and neck",
    "extremities": "extremities", "skin": "skin", "neurological": "nervous system",
    "psychiatric": "mental state",
}  # fmt: skip


def unvoiced_reason(system: str) -> str:
    """The reason a normal finding of an unexamined ``system`` is tier 4."""
    if system == "vital signs":
        return "the visit reads out no vital signs"
    return f"the visit voices no examination of the {PLACES[system]}"


#: Words that make a transcript sentence an examination *finding* (next to a system's cue
#: word): what was heard or seen, not the intention to look ("let me listen to your heart").
EXAM_WORDS = _stems(
    "hear heard sounds sound clear normal good fine great regular irregular appreciate seen "
    "tender tenderness nice soft intact supple reveals shows showed unremarkable healthy "
    "strong equal symmetric swollen swelling red redness warm pink healed palpation"
)
#: A clinician stating the whole examination normal.
WHOLE_EXAM_NORMAL = re.compile(
    r"\b(?:(?:rest|remainder) of (?:the|your|his|her|my) (?:physical )?exam(?:ination)?"
    r"|(?:physical )?exam(?:ination)? (?:is |was )?(?:otherwise |essentially )?"
    r"(?:normal|unremarkable|within normal limits)"
    r"|normal (?:physical )?exam(?:ination)?|otherwise (?:normal|unremarkable)"
    r"|(?:exam|physical) template|default normal)\b",
    re.I,
)


def claim_systems(claim_text: str) -> list[str]:
    """The body systems whose examination words the claim uses (in :data:`SYSTEMS` order)."""
    words = set(content_tokens(claim_text))
    return [name for name, s in SYSTEMS.items() if words & s.claim_words]


def voiced_systems(sentences: Iterable[str]) -> set[str]:
    """Systems the transcript examined aloud; every system when the whole exam was stated
    normal (module docstring)."""
    voiced: set[str] = set()
    for text in sentences:
        if WHOLE_EXAM_NORMAL.search(text):
            return set(SYSTEMS)
        words = set(content_tokens(text))
        if not words & EXAM_WORDS:
            continue
        voiced |= {name for name, s in SYSTEMS.items() if words & s.cue_words}
    return voiced
