"""Spoken uncertainty: the cues that make a transcript sentence a possibility, a plan to find
out or a worry ("it sounds like it could've been gout", "let's rule out a fracture") rather
than a statement that the patient has the finding.

Read by the error injector (a hedged diagnosis made certain, SPEC §5) and by the offline
judge's contradiction rule (SPEC §1: a tier-5 contradiction needs the visit to *say*
otherwise; a hedged mention says nothing either way).
"""

from __future__ import annotations

import re

#: Spoken uncertainty cues of a transcript sentence.
SPOKEN_UNCERTAIN = re.compile(
    r"\b(?:likely|probably|possibl\w*|maybe|perhaps|might|may|could|think|thinking|thought"
    r"|suspect\w*|sounds?\s+like|looks?\s+like|seems?|appears?|concern\w*|worr\w*|rule\s+out"
    r"|consistent\s+with|suggest\w*|guess|not\s+sure|unsure|wonder\w*|whether|if|question"
    r"|differential|evaluat\w*|check|test|see\s+if|chance|risk|afraid|suspicious)\b",
    re.I,
)


def hedged_before(text: str, start: int, reach: int = 60) -> bool:
    """Whether a spoken uncertainty cue comes within ``reach`` characters before offset
    ``start`` of ``text`` (the mention it qualifies)."""
    return SPOKEN_UNCERTAIN.search(text[max(0, start - reach) : start]) is not None
