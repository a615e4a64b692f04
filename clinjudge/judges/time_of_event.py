"""A time given to the wrong event (issue 36: "the last worsening given as the onset").

A patient dates several events of one problem: when it began, when it got worse, when it was
last seen to. A note made of the visit's words can keep the number and move it to another
event ("The onset of the pain began 3 or 4 days ago" where the patient said the knees have
hurt a while, "just more so in the last three or four days"). Read from the clause each time
sits in (:func:`clinjudge.text.clauses.clause_around`): a time of the claim's history whose
clause says nothing of worsening (nor "more", "especially"), where **every** time the visit
gives of that length sits in a clause of worsening ("worse", "more so", "flared",
"increased"), has no basis when the claim gives it to a beginning ("onset", "began",
"started") or to another event (its clause shares no word with the visit's, time words
aside: "wearing a splint for the last month" where "both have gotten worse over the last
month"). The visit gives it as when the problem got worse (tier 4, SPEC §1 safety floor: a
duration with no equivalent). "Knee pain for the last 3 to 4 days" where the knees have hurt
"more so in the last three or four days" is the same pain dated loosely, which reviewers
accept: not flagged.
"""

from __future__ import annotations

import re

from clinjudge.grounding.evidence import Unit
from clinjudge.grounding.transcript_facts import TranscriptFacts
from clinjudge.judges.offline_rules import ClaimAnalysis
from clinjudge.text.clauses import clause_around
from clinjudge.text.normalize import content_tokens
from clinjudge.text.times import read_times, same_time

#: Words of a problem getting worse.
WORSENING = re.compile(
    r"\b(?:worse\w*|worsen\w*|more so|flared?(?: up)?|flaring|exacerbat\w*|increas\w*"
    r"|got bad|getting bad|intensif\w*|progress\w*|aggravat\w*|spik\w*)\b",
    re.I,
)

#: Characters of the clause before the time a rationale quotes.
QUOTE_BEFORE = 40


#: A claim that says more of something ("hurting more", "more severe") speaks of a worsening.
_MORE = re.compile(r"\b(?:more|especially|particularly)\b", re.I)
#: Words of a beginning: the claim dates an onset.
ONSET = re.compile(
    r"\b(?:onset|began|begun|begin\w*|start\w*|first (?:noticed|started|began))\b", re.I
)
#: The most event words a transcript clause may hold to date one event.
_LONGEST_CLAUSE = 20
#: Words of a time itself, not of the event it dates.
_TIME_WORDS = frozenset(content_tokens("ago last past over since for about day week month year"))


def _clause(text: str, start: int, end: int) -> str:
    a, b = clause_around(text, start, end)
    return text[a:b]


def _of_worsening(text: str, start: int, end: int) -> bool:
    return bool(WORSENING.search(_clause(text, start, end)))


def _event_words(clause: str) -> set[str]:
    return {w for w in content_tokens(clause) if not w[:1].isdigit()} - _TIME_WORDS


def time_of_worsening(analysis: ClaimAnalysis, facts: TranscriptFacts) -> str | None:
    """Why the claim's time belongs to a worsening, not to the event it is given to
    (module docstring), or ``None``."""
    if analysis.claim.section != "subjective":
        return None
    text = analysis.claim.text
    for t in read_times(text):
        clause = _clause(text, t.start, t.end)
        if WORSENING.search(clause) or _MORE.search(clause):
            continue
        said = [
            (u, x)
            for u, x in facts.times()
            if same_time(x, t)  # "3 days ago" and "the last 3 days" date one start
        ]
        if not said or not all(_of_worsening(u.text, x.start, x.end) for u, x in said):
            continue
        u, x = said[0]
        other_event = not _event_words(clause) & _event_words(_clause(u.text, x.start, x.end))
        if ONSET.search(clause) or other_event:
            return (
                f"the visit gives '{x.text}' as when it got worse ('{_quote(u.text, x)}'), "
                f"not as the time this claim gives it to"
            )
    return None


def time_of_another_event(analysis: ClaimAnalysis, facts: TranscriptFacts) -> str | None:
    """Why the claim's time is the visit's time of another event, or ``None``.

    The claim dates an event ("vaccinated 10 days ago"); every place the visit gives that time
    it gives it to something else — no word of its clause is the claim's, time words aside
    ("quarantine for 10 days") — and the visit dates the claim's event with another time (a
    clause sharing the claim's words: "i got the vaccine about two months ago"). The time was
    moved from one event to another (tier 4, SPEC §1: a time with no equivalent). When the
    visit never dates the claim's event the claim is left to the other checks."""
    if analysis.claim.section != "subjective":
        return None
    text = analysis.claim.text
    units = facts.index.units
    for t in read_times(text):
        event = _event_words(_clause(text, t.start, t.end))
        if not event:
            continue
        said, elsewhere = [], []
        for u, x in facts.times():
            words = _event_words(_clause(u.text, x.start, x.end))
            if len(words) > _LONGEST_CLAUSE:
                continue  # a run-on turn dates nothing in particular
            shared = event & (words | _asked(units, u))
            if same_time(x, t):
                said.append((u, x, bool(shared)))
            elif len(shared) >= min(2, len(event)):
                elsewhere.append((u, x))
        if said and elsewhere and not any(shares for _, _, shares in said):
            (u, x, _), (v, y) = said[0], elsewhere[0]
            return (
                f"the visit gives '{x.text}' to another event ('{_quote(u.text, x)}'); "
                f"it dates this one '{y.text}' ('{_quote(v.text, y)}')"
            )
    return None


def _asked(units: list[Unit], u: Unit) -> set[str]:
    """The event words of the question a turn's first sentence answers ("how long have you
    been biking ?" — "for like three years"): an answer's time dates what was asked."""
    i = u.index
    if i == 0 or units[i - 1].turn == u.turn:
        return set()
    return _event_words(units[i - 1].text)


def _quote(text: str, x) -> str:
    """The clause of a time, from at most :data:`QUOTE_BEFORE` characters before it, begun
    at a whole word."""
    a, b = clause_around(text, x.start, x.end)
    start = max(a, x.start - QUOTE_BEFORE)
    if start > a:
        start = text.find(" ", start, x.start) + 1 or x.start
    return " ".join(text[start:b].split())
