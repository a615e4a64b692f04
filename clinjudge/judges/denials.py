"""A denial the visit's answers do not give (SPEC §1, contradiction: a negation flip).

Notes turn a doctor's question into the patient's denial: "any chest pain or trouble
breathing?" becomes "He denies chest pain or trouble breathing". That is right when the patient
said no, and a contradiction when the patient said yes ("sometimes a little heaviness in my
chest", "yes definitely"). The concept-level check of :mod:`.offline_rules` misses these when
the answer carries no clean "yes" or names the finding in other words; this check reads the
words the claim denies against the question that asked about them and the answer it got.

A claim *denies* the content words under its negation scopes (:func:`negated_spans`), less
the verbs and fillers of "has not had any". The transcript sentences holding the most of those
words (at least half) are its evidence. The claim is contradicted when one of them is a
question whose answer opens with a yes ("yeah", "sometimes", "a little", "I have…") and does not
itself deny the words, and none of them is a denial (a negated mention, a question answered
no, or one left unanswered). A bare "sure" or "okay" consents to being asked and answers
nothing. An answer that names only another finding ("I have a little
nasal congestion" to "any chest pain, shortness of breath?") affirms that finding, not the
ones asked about, and decides nothing.
"""

from __future__ import annotations

import re

from clinjudge.grounding.evidence import Unit
from clinjudge.grounding.transcript_facts import FINDING_KINDS, TranscriptFacts, is_question
from clinjudge.judges.offline_rules import GAP_WORDS
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.negation import answer_polarity, is_negated, negated_spans
from clinjudge.text.normalize import content_token_spans, stem

#: Words a denial carries besides the denied finding ("the patient denies any other …").
_NOT_DENIED = frozenset(
    {stem(w) for w in GAP_WORDS}
    | {stem(w) for w in ("patient", "she", "he", "they", "reports", "denies", "notes", "states")}
    | {"symptom"}
)
#: The least share of the denied words a transcript sentence must hold to be evidence.
MIN_OVERLAP = 0.5
#: An explicit yes, which affirms the question even when the answer goes on to other findings.
_YES = re.compile(
    r"^\W*(?:(?:um+|uh+|oh|well|so|okay)\W+)*"
    r"(?:yes|yeah|yep|yup|uh-huh|mm-hmm|mhm|definitely|absolutely)\b",
    re.I,
)
_SECTIONS = frozenset({"subjective", "objective"})
#: A reply that only consents ("sure .", "okay"): the answer to "can I ask you about work?" or
#: "I'm concerned it might be your lupus", never a yes to having a finding.
_ASSENT = re.compile(r"^\W*(?:sure|okay|ok|alright|all\s+right|fine)\W*$", re.I)


def denied_words(claim_text: str) -> set[str]:
    """Content tokens of the claim inside a negation scope, less :data:`_NOT_DENIED`."""
    spans = negated_spans(claim_text)
    return {
        t
        for t, s, e in content_token_spans(claim_text)
        if t not in _NOT_DENIED and any(a <= s and e <= b for a, b in spans)
    }


def _read(units: list[Unit], words: set[str]) -> tuple[set[str], set[str]]:
    """The denied words these sentences affirm and those they deny."""
    affirmed: set[str] = set()
    denied: set[str] = set()
    for u in units:
        for t, s, e in content_token_spans(u.text):
            if t in words:
                (denied if is_negated(u.text, s, e) else affirmed).add(t)
    return affirmed, denied


def _answer(units: list[Unit], i: int) -> list[Unit]:
    """The sentences of the turn that follows sentence ``i`` (the reply to its question)."""
    if i + 1 >= len(units) or units[i + 1].turn == units[i].turn:
        return []
    turn = units[i + 1].turn
    return [u for u in units[i + 1 : i + 8] if u.turn == turn]


def _status(units: list[Unit], i: int, words: set[str], kb: KnowledgeBase) -> str:
    """``"denied"``, ``"affirmed"``, ``"answered yes"`` or ``"undecided"`` for sentence ``i``."""
    unit = units[i]
    following = units[i + 1] if i + 1 < len(units) else None
    own = [(s, e) for t, s, e in content_token_spans(unit.text) if t in words]
    if any(is_negated(unit.text, s, e) for s, e in own):
        return "denied"
    if not is_question(unit, following):
        return "affirmed"
    reply = _answer(units, i)
    if not reply:
        return "undecided"
    affirmed, denied = _read(reply, words)
    opening = reply[0].text
    if _ASSENT.match(opening):
        return "undecided"
    polarity = answer_polarity(opening)
    says_yes = bool(_YES.match(opening))
    if affirmed and (polarity == "positive" or says_yes):
        return "answered yes"
    if denied and not affirmed or polarity == "negative":
        return "denied"
    if polarity == "positive" and not affirmed:
        others = [m for m in kb.concepts_in(opening) if set(m.kinds) & FINDING_KINDS]
        return "undecided" if others and not says_yes else "answered yes"
    return "undecided"


def denial_answered_yes(
    claim_text: str, section: str, facts: TranscriptFacts, kb: KnowledgeBase
) -> str | None:
    """The reason the claim's denial is contradicted by the patient's answer, or ``None``."""
    if section not in _SECTIONS:
        return None
    words = denied_words(claim_text)
    if not words:
        return None
    units = facts.index.units
    shares = [len(words & u.tokens) / len(words) for u in units]
    top = max(shares, default=0.0)
    if top < MIN_OVERLAP:
        return None
    best = [i for i, share in enumerate(shares) if share == top]
    statuses = {i: _status(units, i, words, kb) for i in best}
    found = set(statuses.values())
    if "answered yes" not in found or found - {"answered yes", "affirmed"}:
        return None
    i = next(i for i in best if statuses[i] == "answered yes")
    reply = _answer(units, i)[0].text
    return (
        f"the note has the patient deny it, but asked '{_clip(units[i].text)}' "
        f"the patient answered '{_clip(reply)}'"
    )


def _clip(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
