"""A finding the note keeps going that the visit says has stopped (SPEC §1 tier 5, a
contradiction; issue 36, "the later statement wins").

Notes summarise a visit's story in the present tense, and an early turn ("she was still
throwing up the next day") can outlive the turn that ends it ("she hasn't had any more
throwing up since"). A subjective claim that keeps a finding going — "continues to", "is
still", "still has", "ongoing", "persistent" before it — is contradicted when the visit spoke
of that finding as present and its last word on it is a denial that says it stopped ("any
more", "no longer", "since", "stopped", "went away", "resolved", "gone").
"""

from __future__ import annotations

import re

from clinjudge.grounding.transcript_facts import TranscriptFacts
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.quotes import clip_quote

#: Words that keep a finding going up to now (present tense: "was still vomiting when she was
#: brought in" is true of then).
_ONGOING = re.compile(
    r"\b(?:continues?\s+to|(?:is|are|am)\s+still|still\s+(?:has|have|gets?|feels?|reports?|"
    r"experiences?|complains?|notes?)|ongoing|persists?|persistent|keeps?\s+(?:on\s+)?[a-z]+ing)\b",
    re.I,
)
#: Words of a denial that ends what was there before.
_STOPPED = re.compile(
    r"\b(?:any\s*more|no\s+longer|since|stopped|went\s+away|gone|resolved|cleared\s+up)\b",
    re.I,
)


def stopped_since(analysis, facts: TranscriptFacts, kb: KnowledgeBase) -> str | None:
    """The reason the claim keeps going a finding the visit says has stopped, or ``None``."""
    claim = analysis.claim
    cue = _ONGOING.search(claim.text) if claim.section == "subjective" else None
    if cue is None:
        return None
    units = facts.index.units
    for m in analysis.mentions:
        if m.negated or m.end < cue.start() or not kb.is_finding(m.kinds, m.canonical):
            continue
        said = [
            (i, x)
            for i, found in enumerate(facts.mentions)
            for x in found
            if set(x.canonical) & set(m.canonical) and x.negated is not None
        ]
        if not said or not said[-1][1].negated:
            continue
        last = units[said[-1][0]].text
        if _STOPPED.search(last) and any(x.negated is False for _, x in said[:-1]):
            return (
                f"the note has '{m.surface}' still going on, but the visit's last word on it "
                f"says it stopped: '{clip_quote(last)}'"
            )
    return None
