"""Social-history facts a visit settles: tobacco, alcohol and recreational drug use (SPEC §9
"Omissions": history), which the knowledge base does not name as concepts.

A transcript sentence naming one of :data:`SOCIAL` gives the fact "<item> use" (affirmed) or
"no <item> use" (denied): a question takes the polarity of the next speaker's yes/no
(:func:`~clinjudge.grounding.transcript_facts.answer_polarity`; no clear answer, no fact), a
statement its own negation (:func:`~clinjudge.text.negation.is_negated`). One fact per item
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


def social_facts(units: list[Unit]) -> list[VisitFact]:
    """The social-history facts of the transcript's sentences (unnumbered)."""
    found: dict[tuple[str, Polarity], VisitFact] = {}
    for i, unit in enumerate(units):
        following = units[i + 1] if i + 1 < len(units) else None
        asked = is_question(unit, following)
        for item, pattern in SOCIAL.items():
            m = pattern.search(unit.text)
            if m is None:
                continue
            denied = answer_polarity(unit, following) if asked else _denies(unit.text, m)
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
    """(sentence index, denied?) of every note sentence naming the item."""
    out = []
    for i, text in enumerate(sentences):
        m = SOCIAL[item].search(text)
        if m is not None:
            out.append((i, _denies(text, m)))
    return out


def _denies(text: str, m: re.Match[str]) -> bool:
    """A statement's own denial: a negation cue, or "nonsmoker"."""
    return m.group().lower().startswith("non") or is_negated(text, m.start(), m.end())
