"""Social-history facts a visit settles: tobacco, alcohol and recreational drug use (SPEC §9
"Omissions": history), which the knowledge base does not name as concepts.

A transcript sentence naming one of :data:`SOCIAL` gives the fact "<item> use" (affirmed) or
"no <item> use" (denied): a question takes the polarity of the next speaker's yes/no
(:func:`~clinjudge.grounding.transcript_facts.answer_polarity`; no clear answer, no fact), a
statement its own negation (:func:`~clinjudge.text.negation.is_negated`); a question naming
several items ("smoking, drugs or alcohol?") is answered item by item by the reply's own words
("no drugs. i do drink socially"), an item the reply does not name gives no fact. One fact per item
and polarity, at its first sentence, category ``history``, routine. A note covers it with a
sentence naming the item with the same polarity; a note that only states the other polarity
contradicts it.
"""

from __future__ import annotations

import re

from clinjudge.grounding.evidence import Unit
from clinjudge.grounding.transcript_facts import answer_polarity, is_question
from clinjudge.omissions.fact import Polarity, VisitFact
from clinjudge.text.negation import is_negated

_I = re.IGNORECASE
#: item → wording (transcript and note alike)
SOCIAL: dict[str, re.Pattern[str]] = {
    "tobacco": re.compile(
        r"\b(?:tobacco|(?:non-?)?smok\w*|cigarettes?|cigars?|vap(?:e|es|ing)|nicotine)\b", _I
    ),
    "alcohol": re.compile(
        r"\b(?:alcohol\w*|etoh|beers?|wine|liquor|drinker|drinks? (?:alcohol|socially|a day|a week)"
        r"|(?:do|does) (?:you|she|he) drink)\b",
        _I,
    ),
    "recreational drug": re.compile(
        r"\b(?:recreational|illicit|street) drugs?\b|\bdrug use\b|\b(?:marijuana|cannabis|cocaine"
        r"|heroin|meth(?:amphetamines?)?|ivdu)\b",
        _I,
    ),
}
PREFIX = "SOCIAL:"
#: Shorter words a reply uses for an item the question named ("no drugs", "i do drink").
_REPLY_WORDS: dict[str, re.Pattern[str]] = {
    "tobacco": re.compile(r"\b(?:smok\w*|tobacco|cigarettes?|vap\w*)\b", _I),
    "alcohol": re.compile(r"\b(?:drink\w*|alcohol|beers?|wine)\b", _I),
    "recreational drug": re.compile(r"\bdrugs?\b", _I),
}
_ADVICE = re.compile(
    r"\b(?:encourag\w*|advis\w*|counsel\w*|recommend\w*|refrain|avoid|cease)\b", _I
)
_LABEL_NO = re.compile(r"(?:\s+use)?\s*[:\-]\s*(?:never|none|no|denies|denied|negative)\b", _I)


def social_facts(units: list[Unit]) -> list[VisitFact]:
    """The social-history facts of the transcript's sentences (unnumbered)."""
    found: dict[tuple[str, Polarity], VisitFact] = {}
    for i, unit in enumerate(units):
        following = units[i + 1] if i + 1 < len(units) else None
        asked = is_question(unit, following)
        named = [item for item, pattern in SOCIAL.items() if pattern.search(unit.text)]
        for item in named:
            m = SOCIAL[item].search(unit.text)
            assert m is not None
            if not asked:
                denied: bool | None = _denies(unit.text, m)
            elif len(named) == 1:
                denied = answer_polarity(unit, following)
            else:  # "smoking, drugs, alcohol?" "no drugs. i do drink socially": item by item
                denied = _reply_about(item, _turn_after(units, i))
            if denied is None:
                continue
            polarity: Polarity = "denied" if denied else "affirmed"
            found.setdefault(
                (item, polarity),
                VisitFact(
                    id="",
                    category="history",
                    text=f"{'no ' if denied else ''}{item} use",
                    importance="routine",
                    polarity=polarity,
                    quote=unit.text,
                    spans=((unit.start, unit.end),),
                    canonical=(PREFIX + item,),
                    surface=item,
                ),
            )
    return list(found.values())


def note_polarities(item: str, sentences: list[str]) -> list[tuple[int, bool]]:
    """(sentence index, denied?) of every note sentence naming the item; advice ("encouraged
    to cease alcohol") states nothing about use and is skipped."""
    out = []
    for i, text in enumerate(sentences):
        m = SOCIAL[item].search(text)
        if m is not None and not _ADVICE.search(text):
            out.append((i, _denies(text, m)))
    return out


def _turn_after(units: list[Unit], i: int) -> list[Unit]:
    """The sentences of the turn that follows sentence ``i`` (the reply to a question)."""
    if i + 1 >= len(units):
        return []
    turn = units[i + 1].turn
    return [u for u in units[i + 1 :] if u.turn == turn]


def _reply_about(item: str, reply: list[Unit]) -> bool | None:
    """Whether the reply denies the item, in its first sentence naming it; ``None`` when it
    names it nowhere."""
    for unit in reply:
        m = SOCIAL[item].search(unit.text) or _REPLY_WORDS[item].search(unit.text)
        if m is not None:
            return _denies(unit.text, m)
    return None


def _denies(text: str, m: re.Match[str]) -> bool:
    """A statement's own denial: a negation cue, "nonsmoker", or a label answered no
    ("Illicit drug use: Never")."""
    if m.group().lower().startswith("non") or _LABEL_NO.match(text, m.end()):
        return True
    return is_negated(text, m.start(), m.end())
