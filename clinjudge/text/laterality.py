"""Body side of a mention — left, right, bilateral — and the site it qualifies (SPEC §1, tier 5:
"left knee where transcript says right"; SPEC §5: laterality/anatomy error).

A side word counts only where it is anatomical, because ASR transcripts are full of
``"all right"``, ``"right now"``, ``"that's right"`` and ``"i left work"``:

* ``left`` / ``right`` / ``lt`` / ``rt`` need a site within :data:`WINDOW` words after
  (``"right middle finger"``, ``"left lower extremity"``), or a side noun (``"left side"``,
  ``"right-sided"``), or ``"on the left"`` with a site shortly before (``"pain in my knee on
  the right"``); single-letter ``l`` / ``r`` need a site right after (``"l knee"``).
* ``bilateral`` / ``bilaterally`` / ``b/l`` are always sides; ``both`` only before a site
  (``"both knees"``).
* ``LLQ`` / ``RUQ``-style quadrant codes are sides of the abdomen.

Sites are normalised (``knees`` → ``knee``, ``lower extremity`` → ``leg``, ``headache`` →
``head``) so that ``"left knee"`` and ``"knees, right"`` compare.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from clinjudge.text.numbers import lower_same_length

#: How many words after a side word may separate it from its site.
WINDOW = 3

_SITES = {
    "knee": "knee", "knees": "knee", "kneecap": "knee", "patella": "knee", "hip": "hip",
    "hips": "hip", "ankle": "ankle", "ankles": "ankle", "foot": "foot", "feet": "foot",
    "toe": "toe", "toes": "toe", "leg": "leg", "legs": "leg", "thigh": "thigh", "thighs": "thigh",
    "calf": "calf", "calves": "calf", "shin": "shin", "shins": "shin", "heel": "heel",
    "arm": "arm", "arms": "arm", "forearm": "forearm", "elbow": "elbow", "elbows": "elbow",
    "wrist": "wrist", "wrists": "wrist", "hand": "hand", "hands": "hand", "finger": "finger",
    "fingers": "finger", "thumb": "thumb", "shoulder": "shoulder", "shoulders": "shoulder",
    "eye": "eye", "eyes": "eye", "ear": "ear", "ears": "ear", "earache": "ear", "breast": "breast",
    "breasts": "breast", "lung": "lung", "lungs": "lung", "kidney": "kidney", "kidneys": "kidney",
    "ovary": "ovary", "ovaries": "ovary", "testicle": "testicle", "testis": "testicle",
    "chest": "chest", "flank": "flank", "groin": "groin", "buttock": "buttock",
    "hamstring": "hamstring", "face": "face", "cheek": "cheek", "jaw": "jaw", "temple": "temple",
    "head": "head", "headache": "head", "neck": "neck", "back": "back", "abdomen": "abdomen",
    "quadrant": "abdomen", "clavicle": "clavicle", "rib": "rib", "ribs": "rib", "femur": "femur",
    "tibia": "tibia", "fibula": "fibula", "humerus": "humerus", "radius": "radius",
    "ulna": "ulna", "scapula": "scapula", "carotid": "carotid", "ventricle": "ventricle",
    "ventricular": "ventricle", "atrium": "atrium", "atrial": "atrium", "lobe": "lobe",
    "extremity": "extremity", "extremities": "extremity", "limb": "limb", "limbs": "limb",
    "acl": "knee", "mcl": "knee", "meniscus": "knee", "achilles": "ankle", "side": None,
    "sided": None, "tonsil": "tonsil", "tonsils": "tonsil", "nostril": "nostril",
    "sinus": "sinus", "ureter": "ureter", "adnexa": "ovary", "nipple": "breast", "axilla": "axilla",
}  # fmt: skip
_TWO_WORD_SITES = {
    "lower extremity": "leg", "lower extremities": "leg", "upper extremity": "arm",
    "upper extremities": "arm", "rotator cuff": "shoulder",
}  # fmt: skip
_SIDE_WORDS = {
    "left": "left", "right": "right", "lt": "left", "rt": "right", "l": "left", "r": "right",
    "bilateral": "bilateral", "bilaterally": "bilateral", "b/l": "bilateral", "both": "bilateral",
}  # fmt: skip
_QUADRANTS = {"llq": "left", "luq": "left", "rlq": "right", "ruq": "right"}
_DISCOURSE_BEFORE = frozenset({"all", "that's", "thats", "you're", "alright", "yeah", "okay", "is"})
_DISCOURSE_AFTER = frozenset(
    {"now", "away", "here", "there", "after", "before", "then", "so", "ok", "okay", "yeah"}
)
_TOKEN_RE = re.compile(r"b/l|[a-z]+(?:['’][a-z]+)?|[.;?!]")


class Laterality(NamedTuple):
    """A side mention: ``side`` in {"left", "right", "bilateral"}, its span, and the normalised
    site it qualifies (``None`` when no site is near)."""

    side: str
    start: int
    end: int
    site: str | None = None


def _site_at(tokens, i: int) -> tuple[str | None, bool]:
    """``(site, found)`` for the token at ``i`` (two-word sites first)."""
    if i + 1 < len(tokens) and f"{tokens[i][2]} {tokens[i + 1][2]}" in _TWO_WORD_SITES:
        return _TWO_WORD_SITES[f"{tokens[i][2]} {tokens[i + 1][2]}"], True
    word = tokens[i][2]
    if word in _SITES:
        return _SITES[word], True
    return None, False


def _site_after(tokens, i: int, window: int) -> tuple[str | None, bool]:
    found_side_noun = False
    for k in range(i + 1, min(len(tokens), i + 1 + window)):
        if tokens[k][2] in ".;?!":
            break
        site, found = _site_at(tokens, k)
        if found and site is not None:
            return site, True
        found_side_noun = found_side_noun or found
        if found and tokens[k][2] in ("side", "sided"):
            # "left side of the neck": keep looking for the organ after "side"
            continue
    return None, found_side_noun


def _site_before(tokens, i: int, window: int) -> str | None:
    for k in range(i - 1, max(-1, i - 1 - window), -1):
        if tokens[k][2] in ".;?!":
            break
        site, found = _site_at(tokens, k)
        if found and site is not None:
            return site
    return None


def laterality_mentions(text: str) -> list[Laterality]:
    """Anatomical side mentions of ``text`` in order (module docstring for the rules)."""
    low = lower_same_length(text)
    tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN_RE.finditer(low)]
    out: list[Laterality] = []
    for i, (s, e, word) in enumerate(tokens):
        if word in _QUADRANTS:
            out.append(Laterality(_QUADRANTS[word], s, e, "abdomen"))
            continue
        side = _SIDE_WORDS.get(word)
        if side is None:
            continue
        prev = tokens[i - 1][2] if i else ""
        nxt = tokens[i + 1][2] if i + 1 < len(tokens) else ""
        if word in ("l", "r"):
            site, found = _site_at(tokens, i + 1) if i + 1 < len(tokens) else (None, False)
            if found and site is not None:
                out.append(Laterality(side, s, e, site))
            continue
        if word in ("left", "right", "lt", "rt") and (
            prev in _DISCOURSE_BEFORE or nxt in _DISCOURSE_AFTER
        ):
            continue
        site, side_noun = _site_after(tokens, i, WINDOW + 1 if side != "bilateral" else WINDOW)
        if (
            site is None
            and side != "bilateral"
            and prev == "the"
            and i >= 2
            and tokens[i - 2][2] in ("on", "to", "at")
        ):
            site = _site_before(tokens, i - 2, WINDOW + 2)
            side_noun = True
        if site is None and (word == "bilaterally" or side_noun):
            site = _site_before(tokens, i, WINDOW)  # "knees bilaterally", "headache on left side"
        if site is not None or side_noun or word in ("bilateral", "bilaterally", "b/l"):
            if word == "both" and site is None:
                continue
            out.append(Laterality(side, s, e, site))
    return out


def lateralities_conflict(a: Laterality, b: Laterality) -> bool:
    """Left vs right conflict when the sites match or either site is unknown; bilateral vs one
    side conflicts only when both sites are known and equal; the same side never conflicts."""
    if a.side == b.side:
        return False
    if "bilateral" in (a.side, b.side):
        return a.site is not None and a.site == b.site
    return a.site is None or b.site is None or a.site == b.site
