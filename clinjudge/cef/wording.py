"""Word forms that hide a shared concept from the verifier's comparison (offline CEF, SPEC §2
step 2): both the question's statement and the text it is asked of pass through
:func:`normalise_wording` before the offline verifier compares them.

1. **Spelled-out letters** of speech recognition, joined: "P T" → "PT", "E K G" → "EKG",
   "4 M G I M" → "4 MG IM". A run of single capital letters separated by single spaces is cut,
   left to right, into the longest pieces of two or more letters that the knowledge base knows
   as a term (abbreviations); a letter no known piece starts with stays alone.
2. **Adjective forms of conditions**, written as the noun: "anemic" → "anemia", "hypertensive"
   → "hypertension", "asthmatic" → "asthma", "hypothyroid" → "hypothyroidism". A word the
   knowledge base does not know is rewritten by the first suffix rule of :data:`NOUN_SUFFIXES`
   whose result the knowledge base knows as a disease, symptom or finding; other words stay.

The rewritten text only feeds the comparison: questions keep their wording and spans.
"""

from __future__ import annotations

import re

from clinjudge.knowledge.base import KnowledgeBase

#: Adjective ending → noun ending, tried in order (anemic → anemia, psychotic → psychosis,
#: asthmatic → asthma, hypertensive → hypertension, edematous → edema, syncopal → syncope,
#: constipated → constipation, hypothyroid → hypothyroidism, obese → obesity).
NOUN_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ic", "ia"),
    ("tic", "sis"),
    ("tic", ""),
    ("ive", "ion"),
    ("atous", "a"),
    ("al", "e"),
    ("ated", "ation"),
    ("oid", "oidism"),
    ("ese", "esity"),
)
#: Knowledge kinds a rewritten noun must have.
CONDITION_KINDS = frozenset({"disease", "symptom", "finding"})

_LETTER_RUN = re.compile(r"\b[A-Z](?: [A-Z]\b)+")
_WORD = re.compile(r"\b[A-Za-z]{5,}\b")


def normalise_wording(text: str, kb: KnowledgeBase) -> str:
    """``text`` with spelled letters joined and condition adjectives as nouns (module docstring)."""
    text = _LETTER_RUN.sub(lambda m: _join_letters(m.group().split(" "), kb), text)
    return _WORD.sub(lambda m: _condition_noun(m.group(), kb) or m.group(), text)


def _join_letters(letters: list[str], kb: KnowledgeBase) -> str:
    pieces, i = [], 0
    while i < len(letters):
        for j in range(len(letters), i + 1, -1):  # longest known piece first
            if _known_term("".join(letters[i:j]), kb):
                pieces.append("".join(letters[i:j]))
                i = j
                break
        else:
            pieces.append(letters[i])
            i += 1
    return " ".join(pieces)


def _condition_noun(word: str, kb: KnowledgeBase) -> str | None:
    lower = word.lower()
    if _known_term(lower, kb):
        return None
    for ending, noun_ending in NOUN_SUFFIXES:
        if lower.endswith(ending):
            candidate = lower[: len(lower) - len(ending)] + noun_ending
            if _is_condition(candidate, kb):
                return candidate
    return None


def _known_term(term: str, kb: KnowledgeBase) -> bool:
    return bool(kb.lookup(term))


def _is_condition(term: str, kb: KnowledgeBase) -> bool:
    return any(c.kind in CONDITION_KINDS for c in kb.lookup(term))
