"""A claim that keeps what the visit took back (issue 36, item 2: "the later statement wins").

The transcript's corrections are read once per visit by :mod:`clinjudge.grounding.corrections`;
a claim is contradicted (tier 5, SPEC §1) when it states

* a value the visit corrected, as first said, about the same thing: it agrees with the earlier
  value, disagrees with the later one, and shares a content word near the value with the turns
  of the correction ("cataract surgery about 3 months ago" where the patient answered "that was
  about four and a half months ago");
* a denial the patient took back: the claim denies a finding the patient first denied and then
  affirmed after a cue of correction ("no . well , actually , i do feel a little strain");
* smoking as current, where the patient said it was given up and nobody said it goes on.
"""

from __future__ import annotations

import re

from clinjudge.grounding.transcript_facts import FINDING_KINDS, TranscriptFacts
from clinjudge.judges.offline_rules import ClaimAnalysis
from clinjudge.judges.quantity_rules import words_around
from clinjudge.text.quantities import quantities_agree

#: A note calling smoking current.
_SMOKES_NOW = re.compile(
    r"\b(?:continues to smoke|still smok\w*|current(?:ly)? (?:smok\w*|tobacco use)"
    r"|(?:is|a|an) (?:active |daily )?smoker|active smoker|smokes (?:\d|one|two|a |half|about))",
    re.I,
)
#: How far from a value the claim's words may tie it to the thing corrected (characters).
VALUE_REACH = 60


def corrected_statement(analysis: ClaimAnalysis, facts: TranscriptFacts) -> str | None:
    """Why the claim keeps a statement the visit corrected (module docstring), or ``None``."""
    corrections = facts.corrections
    for q in analysis.quantities:
        near = words_around(analysis, q, VALUE_REACH)
        for c in corrections.values:
            first = quantities_agree(q, c.earlier) and quantities_agree(q, c.later) is False
            if first and near & c.words:
                return f"'{q.text}' is what the visit first said; it was corrected: '{c.said}'"
    for m in analysis.mentions:
        said = next(
            (corrections.taken_back[c] for c in m.canonical if c in corrections.taken_back), None
        )
        if said and m.negated and set(m.kinds) & FINDING_KINDS:
            return f"the patient first denied {m.surface}, then took it back: '{said}'"
    given_up = corrections.habit_given_up
    if given_up and _SMOKES_NOW.search(analysis.claim.text):
        return f"the patient gave up smoking: '{given_up}'"
    return None
