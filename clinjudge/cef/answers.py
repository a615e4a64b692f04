"""CEF answers: exactly YES, NO or IDK (SPEC §2 step 2), read from free text by the first token.

The published reference code searched the reply for the substrings "YES", "NO", "IDK" in turn,
so ``"IDK, the note does not say NOT"`` was read as NO (SPEC §2, pitfalls). Here the rule is:

1. remove reasoning blocks and code fences (:func:`clinjudge.llm_replies.strip_reply`);
2. take the first whitespace-separated token, drop every character that is not a letter or a
   digit, upper-case it: ``YES``, ``NO`` or ``IDK`` is the answer (``"No."`` → NO,
   ``"Yes — clearly"`` → YES, ``"**IDK**,"`` → IDK);
3. a reply opening with "I don't know" / "I do not know" / "I dont know" is IDK (the phrase
   IDK abbreviates);
4. anything else (``"Maybe"``, ``"Not stated"``, ``"Y"``, ``"YES/NO"``, an empty reply) is a
   parse failure: ``None`` — recorded and excluded from the scores, never read as NO.
"""

from __future__ import annotations

import re
from typing import Literal

from clinjudge.llm_replies import strip_reply

Answer = Literal["YES", "NO", "IDK"]
ANSWERS: tuple[Answer, ...] = ("YES", "NO", "IDK")

_FIRST_TOKEN = re.compile(r"\S+")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
_DONT_KNOW = re.compile(r"^\W*i\s+(?:don['’]?t|do\s+not)\s+know\b", re.I)


def parse_answer(reply: str | None) -> Answer | None:
    """The answer a reply opens with (module docstring), or ``None`` when it opens otherwise."""
    text = strip_reply(reply or "")
    first = _FIRST_TOKEN.search(text)
    if first is None:
        return None
    token = _NOT_ALNUM.sub("", first.group()).upper()
    if token in ANSWERS:
        return token  # type: ignore[return-value]
    if _DONT_KNOW.match(text):
        return "IDK"
    return None
