"""When it happened (issue 36, item 6): an error that binds a time of the visit to the wrong
event, and its legitimate counterpart that says the same time in other words.

* ``time_shift`` (error) — a time of the note's history (a Subjective sentence: "The pain began
  3 days ago", "for the past 2 months") that the transcript states is replaced by **another
  time the visit gives near it** — within :data:`NEAR_TURNS` turns of where the note's time is
  said, in a sentence that shares a content word with the note sentence (the same problem):
  the onset replaced by when it last got worse, a long-standing problem given the duration of
  the latest episode. The replacement is the transcript's own words ("four days", "about the
  last 48 hours" → "48 hours"), so every word of the edited sentence is still in the visit,
  bound to the wrong event. Unlike ``duration_change`` nothing is invented. The two times must
  be of one form (a point: "3 days ago", "yesterday"; a span: "for 2 weeks") and differ by at
  least a factor :data:`APART` (so "two weeks" and "ten days", one event said twice, are never
  swapped); a follow-up interval ("in two weeks") is no time of the history.
* ``time_rewording`` (rewrite) — a time of the note that the transcript states is written in
  other words that mean exactly the same: the number spelled or in digits ("2 weeks ago" ↔
  "two weeks ago"), "1 week" ↔ "a week". Ranges, approximations ("a couple of days") and
  follow-up intervals are left alone.

Times are read by :func:`clinjudge.text.times.read_times`, as the judge reads them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinjudge.inject.material import NoteMaterial
from clinjudge.inject.types import Edit, Perturber, match_case
from clinjudge.text.normalize import content_tokens
from clinjudge.text.sentences import split_sentences
from clinjudge.text.times import Time, read_times, same_time
from clinjudge.text.transcript import parse_transcript

#: How far (in turns) from the statement of the note's time the other event's time may be.
NEAR_TURNS = 6
#: Least ratio between two times for them to be of different events.
APART = 2.0
#: Words of a time itself, not of the problem it dates.
_TIME_WORDS = frozenset(
    re.findall(
        r"\w+",
        "ago prior past last since about around approximately day days week weeks month months"
        " year years hour hours minute minutes yesterday night morning couple",
    )
)
#: A plan in the clinician's words: a time in it is no time of the history.
_PLAN = re.compile(r"\b(?:see you|come back|follow up|we'll|we will|i'll|i will|recheck)\b", re.I)
#: Words after which a time may not open with an article ("the last", "the past").
_ARTICLE_SLOT = re.compile(r"\b(?:the|last|past|next)\s+$", re.I)
_NUMBER_WORDS = re.findall(
    r"\w+", "zero one two three four five six seven eight nine ten eleven twelve"
)


def _apart(a: Time, b: Time) -> bool:
    lo, hi = sorted((a.days, b.days))
    return lo > 0 and hi / lo >= APART


@dataclass(frozen=True)
class _Said:
    """A time of the transcript with the turn it is in and the words around it."""

    turn: int
    time: Time
    words: frozenset[str]


def _transcript_times(src: NoteMaterial) -> list[_Said]:
    """Every time of the transcript's history talk: the patient's turns, and the clinician's
    sentences that make no plan."""
    out = []
    tr = parse_transcript(src.transcript)
    for turn in tr.turns:
        before = tr.turns[turn.index - 1].text if turn.index else ""
        for s in split_sentences(turn.text):
            if turn.speaker == "doctor" and _PLAN.search(s.text):
                continue
            words = frozenset(content_tokens(s.text) + content_tokens(before)) - _TIME_WORDS
            out += [_Said(turn.index, t, words) for t in read_times(s.text)]
    return out


def _history_sentences(src: NoteMaterial):
    for s in src.sentences:
        section = src.section_at(s.start)
        if section is not None and section.soap == "subjective":
            yield s


def find_time_shifts(src: NoteMaterial) -> list[Edit]:
    said = _transcript_times(src)
    edits = []
    for s in _history_sentences(src):
        times = read_times(s.text)
        words = set(content_tokens(s.text)) - _TIME_WORDS
        for t in times:
            if t.ranged or "-" in t.text:
                continue  # "3-5 days", "a 4-day history": no single time to move
            after_article = bool(_ARTICLE_SLOT.search(s.text[: t.start]))
            sources = [x for x in said if x.time.point == t.point and same_time(x.time, t)]
            seen: set[str] = set()
            for other in said:
                r = other.time
                if r.point != t.point or r.ranged or not _apart(r, t):
                    continue
                if not any(abs(other.turn - x.turn) <= NEAR_TURNS for x in sources):
                    continue
                if not words & other.words or any(not _apart(r, u) for u in times):
                    continue
                new = match_case(t.text, r.text.lower())
                if after_article and re.match(r"an?\b", new, re.I):
                    continue  # "over the last 2 weeks" → not "over the last a week"
                if new.lower() in seen:
                    continue
                seen.add(new.lower())
                why = (
                    f"'{t.text}' moved to '{new}', a time the visit gives for another event "
                    f"(turn {other.turn + 1})"
                )
                edits.append(Edit(s.start + t.start, s.start + t.end, new, why))
    return edits


_NUMBER = re.compile(r"\b(?P<n>\d+|[a-z]+)\b(?=\s+(?:hour|day|week|month|year)s?\b)", re.I)


def respelled_number(text: str) -> tuple[int, int, str] | None:
    """``(start, end, new)`` of the number opening the time ``text`` spelled the other way
    ("2 weeks" ↔ "two weeks", "a week" → "1 week"); ``None`` when it has no such number."""
    m = _NUMBER.match(text)
    if not m:
        return None
    n = m.group("n").lower()
    if n.isdigit() and 1 <= int(n) <= 12:
        word = _NUMBER_WORDS[int(n)]
    elif n in _NUMBER_WORDS[1:]:
        word = str(_NUMBER_WORDS.index(n))
    elif n in ("a", "an"):
        word = "1"
    else:
        return None
    return m.start(), m.end(), match_case(m.group(), word)


def find_time_rewordings(src: NoteMaterial) -> list[Edit]:
    said = _transcript_times(src)
    edits = []
    for s in _history_sentences(src):
        for t in read_times(s.text):
            if t.ranged or not any(x.time.point == t.point and same_time(x.time, t) for x in said):
                continue
            found = respelled_number(t.text)
            if found is None:
                continue
            a, b, word = found
            start = s.start + t.start
            written = t.text[:a] + word + t.text[b:]
            why = f"'{t.text}' written '{written}': the same time"
            edits.append(Edit(start + a, start + b, word, why))
    return edits


time_shift = Perturber(
    "time_shift",
    "error",
    find_time_shifts,
    "a time of the history moved to the time the visit gives for another event",
)
time_rewording = Perturber(
    "time_rewording",
    "rewrite",
    find_time_rewordings,
    "a time of the history written in other words (number spelled or in digits)",
)
