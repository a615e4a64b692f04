"""What every model call about one note begins with, and how a reply points back into it
(issue 38, "prefix-stable prompts").

A server reuses the longest prefix a prompt shares with the one before it (llama.cpp keeps the
previous request's, vLLM and Ollama cache prefixes, hosted APIs bill a repeated prefix at a
discount). So the SOAP judge's prompts about one note all begin with the same bytes -- the
instructions, the answer's form, the turn-numbered transcript (:func:`numbered_transcript`) and
the note -- and end with what differs: the claim (or batch of claims) and the turns to read
first (:func:`look_first`). A reply cites turns by number; :func:`turn_evidence` turns them
back into transcript spans.
"""

from __future__ import annotations

from clinjudge.grounding.evidence import SentenceIndex
from clinjudge.text.normalize import content_tokens
from clinjudge.types import Evidence, Transcript

#: Sentences retrieved per claim; each brings its turn and the turn before it.
HITS_PER_CLAIM = 3


def numbered_transcript(transcript: Transcript) -> str:
    """One line per turn, ``T<n> <speaker>: <words>`` (``n`` from 1; no speaker when the
    transcript has none), the transcript's own text when it has no turns."""
    if not transcript.turns:
        return transcript.text
    lines = []
    for turn in transcript.turns:
        who = "" if turn.speaker == "unknown" else f"{turn.speaker}: "
        words = " ".join(turn.text.split())
        lines.append(f"T{turn.index + 1} {who}{words}")
    return "\n".join(lines)


def look_first(index: SentenceIndex, claim: str, k: int = HITS_PER_CLAIM) -> list[int]:
    """The turn numbers (from 1, ascending) of the ``k`` sentences that best match ``claim``,
    each with the turn before it (the question a "no" answers)."""
    turns: set[int] = set()
    for unit, _ in index.search(claim, k=k):
        if unit.turn >= 0:
            turns.update(t + 1 for t in (unit.turn - 1, unit.turn) if t >= 0)
    return sorted(turns)


def closest_lines(
    index: SentenceIndex, transcript: Transcript, claim: str, k: int = HITS_PER_CLAIM
) -> str:
    """The ``k`` sentences that best match ``claim``, in transcript order, one line each --
    ``T4 patient: no , none of that .`` -- each opening a turn preceded by the sentence before
    it (the question a "no" answers); ``"none"`` when nothing matches."""
    shown: set[int] = set()
    for unit, _ in index.search(claim, k=k):
        shown.add(unit.index)
        before = unit.index - 1
        if before >= 0 and index.units[before].turn != unit.turn:
            shown.add(before)
    lines = []
    for i in sorted(shown):
        unit = index.units[i]
        who = "" if unit.speaker == "unknown" else f"{unit.speaker}: "
        lines.append(f"T{unit.turn + 1} {who}{' '.join(unit.text.split())}")
    return "\n".join(lines) or "none"


def turn_list(numbers: list[int]) -> str:
    """``"T4, T5, T9"``, or ``"none"``."""
    return ", ".join(f"T{n}" for n in numbers) or "none"


def turn_evidence(transcript: Transcript, numbers: list[int]) -> list[Evidence]:
    """The transcript spans of the turns ``numbers`` (from 1) cites, in the order cited, each
    once; numbers of no turn are dropped (a model may cite a turn that does not exist)."""
    seen: list[int] = []
    for n in numbers:
        if 1 <= n <= len(transcript.turns) and n not in seen:
            seen.append(n)
    return [
        Evidence(source="transcript", start=t.start, end=t.end, text=t.text)
        for t in (transcript.turns[n - 1] for n in seen)
    ]


def words_carried(claim: str, transcript: Transcript, numbers: list[int]) -> float:
    """Share of ``claim``'s content words found in the turns ``numbers`` (1.0 for a claim
    without content words): how close to a restatement a "stated" claim is."""
    wanted = set(content_tokens(claim))
    if not wanted:
        return 1.0
    said: set[str] = set()
    for ev in turn_evidence(transcript, numbers):
        said.update(content_tokens(ev.text))
    return len(wanted & said) / len(wanted)
