"""Surface-form normalisation shared by the lexicon index and the text scanner.

The same function is applied to dictionary entries and to text, so any lossy step (plural
stripping, accent folding) is symmetric and cannot cause a miss. Rules, in order:

1. Unicode NFKD, accents dropped, lower case;
2. tokens are runs of letters/digits; a possessive ``'s`` is dropped (``Crohn's`` -> ``crohn``);
   hyphens, slashes and apostrophes split tokens (``x-ray`` -> ``x ray``, ``s/p`` -> ``s p``);
3. number words one..ten become digits (``type two`` -> ``type 2``);
4. a conservative plural rule per token of >= 4 characters: ``-ies`` -> ``-y``;
   ``-aches`` -> ``-ache`` (``headaches``); ``-(s|x|z|ch|sh)es`` -> drop ``es``; otherwise a
   final ``s`` is dropped unless the word ends in
   ``ss``, ``us`` or ``is`` (``ribs`` -> ``rib``, ``diabetes`` -> ``diabete``, ``virus`` stays);
   an upper-case acronym with a plural ``s`` loses it (``UTIs`` -> ``uti``).

A *key* is the normalised tokens joined by single spaces. Keys never cross a segment break
(``.,;:!?()[]{}`` or a line break), so ``chest, pain`` is not ``chest pain``. A run of letters
longer than :data:`~clinjudge.text.bounds.MAX_WORD_CHARS` is no word: it is not normalised and
breaks the segment, so no key spans it (the longest token of any lexicon entry has 66
characters; a glued 1 MB run is never folded, stemmed or looked up).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from clinjudge.text.bounds import MAX_WORD_CHARS

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_BREAK = re.compile(r"[.,;:!?()\[\]{}\n\r\t|\"]")
_NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
}


def fold(text: str) -> str:
    """Lower-case and strip accents (``acétaminophène`` -> ``acetaminophene``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def singular(token: str) -> str:
    """The plural rule of this module (rule 4), applied to one folded token."""
    if len(token) < 4 or not token.isalpha():
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith("es") and token[-3] in "sxz":
        return token[:-2]
    if token.endswith("aches") and not token.endswith(("eaches", "oaches")):
        return token[:-1]  # "headaches" -> "headache", as "aches" -> "ache"
    if token.endswith(("ches", "shes")):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


_ACRONYM_PLURAL = re.compile(r"[A-Z0-9]{2,}s")


def norm_token(token: str) -> str:
    """Normalise one raw token (rules 1, 3 and 4; an acronym plural ``UTIs`` loses its ``s``)."""
    if _ACRONYM_PLURAL.fullmatch(token):
        token = token[:-1]
    folded = fold(token)
    return _NUMBER_WORDS.get(folded) or singular(folded)


@dataclass(frozen=True, slots=True)
class Token:
    """A token of a text: ``text[start:end]`` is the raw token, ``norm`` its normal form and
    ``segment`` the index of the punctuation-delimited segment it belongs to."""

    start: int
    end: int
    norm: str
    segment: int


def tokenize(text: str) -> list[Token]:
    """Tokens of ``text`` with offsets, possessive ``'s`` removed (rule 2)."""
    breaks = [m.start() for m in _BREAK.finditer(text)]
    tokens: list[Token] = []
    segment = 0
    b = 0
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        while b < len(breaks) and breaks[b] < start:
            segment += 1
            b += 1
        if end - start > MAX_WORD_CHARS:
            segment += 1  # no word (module docstring): the keys on either side stay apart
            continue
        raw = m.group()
        if raw in ("s", "S") and start > 0 and text[start - 1] in "'\u2019" and tokens:
            continue  # possessive
        tokens.append(Token(start, end, norm_token(raw), segment))
    return tokens


@lru_cache(maxsize=65536)
def key(text: str) -> str:
    """The lookup key of a surface form: normalised tokens joined by spaces (may be ``""``).
    Kept per text: a note's claims look up the same transcript words again and again."""
    return " ".join(t.norm for t in tokenize(text))


def key_variants(text: str) -> Iterator[str]:
    """Keys under which a dictionary surface form is indexed: its key and, when the form has a
    hyphen (``x-ray``, ``Hb-A1c``), the hyphen-joined key too (``xray``)."""
    base = key(text)
    if base:
        yield base
    if "-" in text:
        joined = key(re.sub(r"(?<=\w)-(?=\w)", "", text))
        if joined and joined != base:
            yield joined
