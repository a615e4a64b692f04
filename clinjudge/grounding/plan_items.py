"""Plan items a note adds by habit: follow-up, "call if …", monitoring (SPEC §1, tier 4).

Notes written by models close with standard plan lines ("Follow up as needed", "Contact the
office with any concerns", "Monitor blood pressure at home"). They are documentation when the
visit said something of the kind and fabricated plan items when it never did (the reviewer's
guide: counselling and instructions never given are unsupported). Each kind below pairs the
note's wording with the transcript's: a kind is *unvoiced* when the note uses it and no
transcript sentence does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_I = re.IGNORECASE
#: kind → (note wording, transcript wording)
PLAN_KINDS: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "follow-up": (
        re.compile(
            r"\b(?:follow(?:[- ]?up|s|ed|ing)?\s*(?:up|in|with|as)?|return(?:s|ed)?\s+"
            r"(?:to|in|for|visit)|come back|recheck|re-?evaluat\w*|next visit|reassess)",
            _I,
        ),
        re.compile(
            r"\b(?:follow|come back|see you|back in|return|appointment|check in|recheck|"
            r"next (?:visit|time)|touch base|schedul\w*|see (?:him|her) (?:back|again))",
            _I,
        ),
    ),
    "contact": (
        re.compile(
            r"\b(?:contact|call|notify|reach out|report (?:any|back)|let (?:us|me|the "
            r"(?:office|clinic|provider)) know)\b",
            _I,
        ),
        re.compile(
            r"\b(?:call|let me know|let us know|reach out|contact|message|portal|phone|"
            r"get in touch|go to the (?:er|emergency))\b",
            _I,
        ),
    ),
    "monitoring": (
        re.compile(r"\bmonitor\w*\b", _I),
        re.compile(r"\b(?:monitor\w*|keep an eye|watch|check(?:ing)?|track\w*|log)\b", _I),
    ),
}


def plan_kinds(claim_text: str) -> list[str]:
    """The habitual plan kinds the claim's wording uses."""
    return [kind for kind, (note, _) in PLAN_KINDS.items() if note.search(claim_text)]


def voiced_plan_kinds(sentences: Iterable[str]) -> set[str]:
    """The plan kinds some transcript sentence talks about."""
    text = "\n".join(sentences)
    return {kind for kind, (_, said) in PLAN_KINDS.items() if said.search(text)}
