"""Whether a text looks like English, for a one-line warning (issue 15): the knowledge base,
the negation cues and the rules are English, so a note in another language is judged on its
drug names and numbers alone.

    english share = words (2+ letters) with an English Zipf frequency ≥ 3 (wordfreq) / words

English clinical notes score 0.9 or more, an abbreviation-dense one about 0.6; Spanish,
French or German notes 0.2–0.4. A text of at least :data:`MIN_WORDS` words below
:data:`THRESHOLD` does not look English.
"""

from __future__ import annotations

import re

THRESHOLD = 0.5
MIN_WORDS = 12
_WORD = re.compile(r"[^\W\d_]{2,}")


def english_share(text: str) -> float | None:
    """The share of the text's words that are common English words; ``None`` for no words."""
    from wordfreq import zipf_frequency

    words = _WORD.findall(text.lower())
    if not words:
        return None
    return sum(zipf_frequency(w, "en") >= 3.0 for w in words) / len(words)


def looks_english(text: str) -> bool:
    """False only for a text of ``MIN_WORDS`` words or more whose English share is below
    ``THRESHOLD``."""
    if len(_WORD.findall(text)) < MIN_WORDS:
        return True
    share = english_share(text)
    return share is None or share >= THRESHOLD
