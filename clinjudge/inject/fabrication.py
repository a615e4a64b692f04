"""A mechanical fabricated-history error (SPEC §5 offline injectors: "fabricated history";
taxonomy type ``additional_diagnosis``; SPEC §1 tier 4, "fabricated … history").

``fabricated_history`` appends the sentence ``"The patient has a history of <condition>."`` to
the end of the history of present illness (a subjective section whose header names the HPI or
history, else the first subjective section written as prose) with a common chronic condition of
:data:`HISTORY_CONDITIONS` that the transcript and the note never mention: not the condition
under any of its names (concept classes, then surface forms word by word), and no condition
the knowledge base relates to it (``related``: ``is_a``, ``has_symptom``, ... — "diabetes" in
the transcript rules out "type 2 diabetes mellitus").
"""

from __future__ import annotations

import re

from clinjudge.inject.errors import named_anywhere
from clinjudge.inject.material import NoteMaterial
from clinjudge.inject.types import Edit, Perturber
from clinjudge.types import Section

#: Common chronic conditions a fabricated history adds (hand-written for clinjudge).
HISTORY_CONDITIONS: tuple[str, ...] = (
    "hypertension",
    "type 2 diabetes mellitus",
    "atrial fibrillation",
    "chronic kidney disease",
    "hypothyroidism",
    "coronary artery disease",
    "chronic obstructive pulmonary disease",
    "asthma",
    "hyperlipidemia",
    "gout",
    "epilepsy",
    "congestive heart failure",
    "deep vein thrombosis",
    "rheumatoid arthritis",
    "osteoporosis",
    "obstructive sleep apnea",
)
CONDITION_KINDS = frozenset({"disease", "finding", "symptom"})
_HPI_HEADER = re.compile(r"\b(?:HPI|history)\b", re.I)
_NOT_PROSE_HEADER = re.compile(
    r"\b(?:chief|complaint|CC|medications?|allerg\w*|vitals?|surgical|family|social)\b", re.I
)


def _history_site(src: NoteMaterial) -> Section | None:
    """The section the fabricated sentence goes at the end of (module docstring)."""
    prose = [
        s
        for s in src.sections
        if s.soap == "subjective"
        and s.end > s.start
        and src.note[s.end - 1] in ".!?"
        and not _NOT_PROSE_HEADER.search(s.header)
        and len(src.note[s.start : s.end].split()) >= 8
    ]
    return next((s for s in prose if _HPI_HEADER.search(s.header)), prose[0] if prose else None)


def _condition_surfaces(src: NoteMaterial) -> set[str]:
    """Surface forms of every condition the note or the transcript names."""
    return {
        m.surface.lower()
        for mentions in (src.note_mentions, src.kb.concepts_in(src.transcript))
        for m in mentions
        if set(m.kinds) & CONDITION_KINDS
    }


def find_fabricated_history(src: NoteMaterial) -> list[Edit]:
    site = _history_site(src)
    if site is None:
        return []
    named = _condition_surfaces(src)
    fresh = [
        c
        for c in HISTORY_CONDITIONS
        if not named_anywhere(src, c, CONDITION_KINDS)
        and not any(src.kb.related(c, s) is not None for s in named)
    ]
    return [
        Edit(
            site.end,
            site.end,
            f" The patient has a history of {c}.",
            f"adds a history of {c} to '{site.header or 'the history'}'; neither the transcript "
            f"nor the note mentions {c} or a related condition",
        )
        for c in fresh
    ]


fabricated_history = Perturber(
    "fabricated_history",
    "error",
    find_fabricated_history,
    "a chronic condition the transcript never mentions, added to the history",
)
