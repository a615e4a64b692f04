"""Offline claim splitter: a note's sections → atomic, checkable claims (SPEC §1, "Claims").

Rules:

1. One claim per sentence of each section body (:func:`clinjudge.text.sentences.split_sentences`:
   bullets and list lines are sentences).
2. A sentence is cut further at ``;`` and, in a list of ``label: value`` pairs, before each
   next label (``"Blood pressure: 120/80, Heart rate: 72"`` → two claims). A label that opens
   the sentence stays with its content (``"Cardiovascular: Denies chest pain or dyspnea on
   exertion."`` is one claim), and coordinated lists are never cut (``"chest pain, shortness of
   breath, or swelling"``).
3. Pieces with nothing to check are skipped: a lone label (``"Patient Agreements:"``,
   ``"- Special Testing:"``), a lone sub-heading (``"Medical"``, ``"Respiratory"`` under an exam),
   and pieces without a letter or digit.

Ids are ``c1, c2, ...`` in note order; ``note.text[c.start:c.end] == c.text``; each claim carries
its section's SOAP class and header.
"""

from __future__ import annotations

import re

from clinjudge.text.headers import HEADER_SOAP, normalize_label
from clinjudge.text.sentences import split_sentences
from clinjudge.types import Claim, Note

#: Sub-headings that name a body system or a history kind and carry no checkable content alone.
SUBHEADINGS: frozenset[str] = frozenset(
    {"medical", "surgical", "social", "family", "procedures", "medications", "general",
     "constitutional", "respiratory", "cardiovascular", "musculoskeletal", "neurological",
     "neurologic", "neuro", "gastrointestinal", "genitourinary", "skin", "integumentary",
     "psychiatric", "psych", "hent", "heent", "eyes", "ears", "neck", "extremities", "msk", "cv",
     "gi", "gu", "gi/gu", "lymphatic", "endocrine", "hematologic", "hematologic/lymphatic",
     "allergic/immunologic", "abdomen", "chest", "lungs", "heart", "head", "vitals",
     "special testing", "gait", "breast", "pelvic", "rectal", "back", "spine", "mental status"}
)  # fmt: skip

#: Words that make up a body-system sub-heading ("Head and Face", "Ears, Nose, Mouth and
#: Throat", "Hematology/Lymphatic/Immunology").
SYSTEM_WORDS: frozenset[str] = frozenset(
    {"head", "face", "eyes", "eye", "ears", "ear", "nose", "mouth", "throat", "neck", "chest",
     "breasts", "breast", "heart", "lungs", "abdomen", "back", "spine", "pelvis", "rectum",
     "extremities", "skin", "hair", "nails", "hematology", "hematologic", "lymphatic",
     "lymph", "immunology", "immunologic", "allergic", "endocrine", "neurologic",
     "neurological", "psychiatric", "musculoskeletal", "genitourinary", "gastrointestinal",
     "cardiovascular", "respiratory", "constitutional", "integumentary", "vascular", "vitals",
     "general", "and", "&"}
)  # fmt: skip
_SYSTEM_SPLIT = re.compile(r"[\s,/&]+")
_LABEL_ONLY_RE = re.compile(r"[^:\n]{1,60}:\s*")
_CUT_RE = re.compile(r";|,(?=\s+[A-Z][A-Za-z0-9 /()-]{0,30}:\s)")
_TRIM_CHARS = " \t\r\n,;"
_HAS_CONTENT_RE = re.compile(r"[^\W_]")


def is_label_only(text: str) -> bool:
    """True for a piece with no checkable content: ``"Patient Agreements:"``, ``"Medical"``,
    ``"HPI"``, ``"Respiratory:"``."""
    t = text.strip()
    if _LABEL_ONLY_RE.fullmatch(t) and len(t.split()) <= 6:
        return True
    key = normalize_label(t)
    words = [w for w in _SYSTEM_SPLIT.split(t.lower().strip(" :-•*")) if w]
    if words and len(words) <= 6 and all(w in SYSTEM_WORDS for w in words):
        return True
    return key in SUBHEADINGS or (key in HEADER_SOAP and not t.endswith("."))


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Cut ``text[start:end]`` at ``;`` and before comma-separated inline labels (rule 2),
    ignoring separators inside parentheses."""
    cuts, depth = [start], 0
    for i in range(start, end):
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        elif depth == 0 and c in ";," and _CUT_RE.match(text, i, end):
            if c == "," and ":" not in text[cuts[-1] : i]:
                continue  # "Ears, Nose, Mouth and Throat: ..." is one label, not a pair list
            cuts.extend([i, i + 1])
    cuts.append(end)
    out = []
    for a, b in zip(cuts[::2], cuts[1::2], strict=True):
        while a < b and text[a] in _TRIM_CHARS:
            a += 1
        while b > a and text[b - 1] in _TRIM_CHARS:
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def split_claims(note: Note) -> list[Claim]:
    """Atomic claims of ``note`` in note order (module docstring for the rules)."""
    claims: list[Claim] = []
    text = note.text
    for sec in note.sections:
        for sent in split_sentences(text, sec.start, sec.end):
            for a, b in _pieces(text, sent.start, sent.end):
                piece = text[a:b]
                if not _HAS_CONTENT_RE.search(piece) or is_label_only(piece):
                    continue
                claims.append(
                    Claim(
                        id=f"c{len(claims) + 1}",
                        text=piece,
                        section=sec.soap,
                        header=sec.header,
                        start=a,
                        end=b,
                    )
                )
    return claims
