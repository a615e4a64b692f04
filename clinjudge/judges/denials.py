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
from clinjudge.text.negation import (
    answer_polarity,
    history_or_hypothetical,
    is_negated,
    negated_spans,
)
from clinjudge.text.normalize import content_token_spans, content_tokens, stem
from clinjudge.text.quotes import clip_quote

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
#: A denial's own words just before its list ("denies", "no history of", "without"), as
#: against a negation that follows its words ("… before his pain resolved").
_DENIAL_BEFORE = re.compile(
    r"\b(?:den(?:y|ies|ied|ying)|no|not|never|nor|without|negative\s+for|free\s+of)\b"
    r"(?:\W+\w+){0,3}\W*$|n['’]t(?:\W+\w+){0,3}\W*$",
    re.I,
)
#: Where one item of a denied list ends and the next begins.
#: Statuses of evidence that leave a denial contradicted when one of them is a yes.
_AFFIRMING = frozenset({"answered yes", "patient says", "affirmed"})
#: An item denied only above a degree ("significant weight loss"): "a little bit" is no yes.
_DEGREE = re.compile(r"\b(?:significant|major|severe|marked|much|excessive)\b", re.I)
#: A reply that says the finding has gone: "that went away after a week".
_RESOLVED = re.compile(
    r"\b(?:went\s+away|gone|resolved|cleared\s+up|got\s+better|(?:is|was)\s+over)\b", re.I
)
_ITEM_BREAK = re.compile(r",|;|\b(?:or|and|nor|such\s+as|including|like)\b", re.I)


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


def _status(
    units: list[Unit], i: int, words: set[str], kb: KnowledgeBase, concepts: frozenset[str]
) -> str:
    """``"denied"``, ``"affirmed"``, ``"patient says"`` (the patient's own statement of one of
    ``concepts``), ``"answered yes"`` or ``"undecided"`` for sentence ``i``."""
    unit = units[i]
    following = units[i + 1] if i + 1 < len(units) else None
    own = [(s, e) for t, s, e in content_token_spans(unit.text) if t in words]
    if any(is_negated(unit.text, s, e) for s, e in own):
        return "denied"
    if not is_question(unit, following):
        return "patient says" if _states(unit, concepts, kb) else "affirmed"
    reply = _answer(units, i)
    if not reply:
        return "undecided"
    affirmed, denied = _read(reply, words)
    opening = reply[0].text
    if _ASSENT.match(opening):
        return "undecided"
    if concepts and (not affirmed or any(_RESOLVED.search(u.text) for u in reply)):
        # one item of a list: only the patient's own words for it, as a present finding
        return "denied" if denied else "undecided"
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


def _names(unit: Unit, concepts: frozenset[str], kb: KnowledgeBase) -> bool:
    return any(set(m.canonical) & concepts for m in kb.concepts_in(unit.text))


def _states(unit: Unit, concepts: frozenset[str], kb: KnowledgeBase) -> bool:
    """The patient says they have one of ``concepts``: named, not negated, not a family
    member's, not an if or a when ("i was just constipated", not "if i get constipated")."""
    return unit.speaker == "patient" and any(
        set(m.canonical) & concepts
        and not is_negated(unit.text, m.start, m.end)
        and history_or_hypothetical(unit.text, m.start, m.end) in (None, "historical")
        for m in kb.concepts_in(unit.text)
    )


def denial_answered_yes(
    claim_text: str, section: str, facts: TranscriptFacts, kb: KnowledgeBase
) -> str | None:
    """The reason the claim's denial is contradicted by the patient's answer, or ``None``.

    The denied words are read together first. A subjective claim's denied list is then read
    item by item, each item that names a finding on its own: "no history of thyroid issues or
    sulfa allergy" when the thyroid question was answered no and the sulfa one yes; "denies
    any constipation" when the patient said "i was just constipated"."""
    if section not in _SECTIONS:
        return None
    words = denied_words(claim_text)
    if not words:
        return None
    why = _answered_yes(words, facts, kb, frozenset())
    if why or section != "subjective":
        return why
    for item, concepts in denied_items(claim_text, kb):
        if why := _answered_yes(item, facts, kb, concepts):
            return why
    return None


def denied_items(claim_text: str, kb: KnowledgeBase) -> list[tuple[set[str], frozenset[str]]]:
    """Each item of the claim's denied lists that names a finding: its denied words and the
    finding's concepts. Items are the negation scopes cut at commas, "or", "and", "nor", "such
    as", "including" and "like" (:data:`_ITEM_BREAK`)."""
    denied = denied_words(claim_text)
    items = []
    for a, b in negated_spans(claim_text):
        if not _DENIAL_BEFORE.search(claim_text[max(0, a - 40) : a]):
            continue  # "before his pain resolved": a course told, not a list denied
        for piece in _ITEM_BREAK.split(claim_text[a:b]):
            words = {t for t in content_tokens(piece) if t in denied}
            concepts = frozenset(
                c
                for m in kb.concepts_in(piece)
                if set(m.kinds) & FINDING_KINDS
                for c in m.canonical
            )
            if words and concepts and not _DEGREE.search(piece):
                items.append((words, concepts))
    return items


def _answered_yes(
    words: set[str], facts: TranscriptFacts, kb: KnowledgeBase, concepts: frozenset[str]
) -> str | None:
    """The reason these denied words are contradicted by the patient's answer, or ``None``."""
    units = facts.index.units
    shares = [len(words & u.tokens) / len(words) for u in units]
    top = max(shares, default=0.0)
    if top < MIN_OVERLAP:
        return None
    best = [i for i, share in enumerate(shares) if share == top]
    if concepts:  # an item: the evidence names its finding
        best = [i for i in best if _names(units[i], concepts, kb)]
    statuses = {i: _status(units, i, words, kb, concepts) for i in best}
    found = set(statuses.values())
    if not found & {"answered yes", "patient says"} or found - _AFFIRMING:
        return None
    if "answered yes" not in found:
        i = next(i for i in best if statuses[i] == "patient says")
        return (
            f"the note has the patient deny it, but the patient said '{clip_quote(units[i].text)}'"
        )
    i = next(i for i in best if statuses[i] == "answered yes")
    reply = _answer(units, i)[0].text
    return (
        f"the note has the patient deny it, but asked '{clip_quote(units[i].text)}' "
        f"the patient answered '{clip_quote(reply)}'"
    )


#: A denial's catch-all: "denies any other symptoms", "or anything like that" ("other cardiac
#: symptoms" names a body system this reading does not check).
_CATCH_ALL = re.compile(
    r"\bother\s+(?:associated\s+)?(?:symptoms?|complaints?|problems?)\b"
    r"|\banything\s+(?:else|like\s+that)\b",
    re.I,
)
#: A clinician's question after the rest of the patient's symptoms.
_ASKS_OTHERS = re.compile(r"\bother\s+(?:kinds?\s+of\s+)?symptoms?\b|\banything\s+else\b", re.I)


def other_symptoms_named(
    claim_text: str, section: str, facts: TranscriptFacts, kb: KnowledgeBase, note_text: str
) -> str | None:
    """The reason a subjective claim's "denies any other symptoms" is contradicted, or ``None``.

    "Other" means other than what the note reports. When the visit asked for the patient's
    other symptoms ("do you have any other symptoms at this time?") and the patient's answer
    named a finding ("i have a little bit of nasal congestion") that the note reports nowhere,
    the catch-all denial is contradicted (minor by itself; severity is graded elsewhere)."""
    if section != "subjective" or not any(
        _CATCH_ALL.search(claim_text[a:b]) for a, b in negated_spans(claim_text)
    ):
        return None
    units = facts.index.units
    reported = {c for m in kb.concepts_in(note_text) for c in m.canonical}
    for i, unit in enumerate(units):
        following = units[i + 1] if i + 1 < len(units) else None
        if not (_ASKS_OTHERS.search(unit.text) and is_question(unit, following)):
            continue
        reply = _answer(units, i)
        if not reply or reply[0].speaker != "patient":
            continue
        for u in reply:
            for m in kb.concepts_in(u.text):
                if (
                    set(m.kinds) & FINDING_KINDS
                    and not set(m.canonical) & reported
                    and not is_negated(u.text, m.start, m.end)
                    and history_or_hypothetical(u.text, m.start, m.end) is None
                ):
                    return (
                        f"the note has the patient deny other symptoms, but asked "
                        f"'{clip_quote(unit.text)}' the patient named {m.surface}: "
                        f"'{clip_quote(u.text)}'"
                    )
    return None
