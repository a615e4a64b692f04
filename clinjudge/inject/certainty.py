"""A mechanical overconfidence error (SPEC §5 taxonomy "overconfidence (hedge removed)";
taxonomy type ``overconfidence``): ``hedge_removal`` states a hedged diagnosis as certain.

Where. A sentence of an assessment or plan section (the segmenter files "Impression" under
assessment) whose *only* uncertainty cue (:data:`UNCERTAIN`) is one hedge of :data:`HEDGES`,
followed within a few words (four; eight after a clause hedge "I suspect that ...", whose
clause must then assert it with ``is``/``are``/``has``) by a condition the knowledge base knows
(a disease, finding or symptom, or an abbreviation expanding to one) — or, when it knows none
there, a phrase ending in a condition head word (:data:`CONDITION_HEAD`: ``-itis``,
``-opathy``, ``strain``, ``tear`` ...: "rotator cuff tendinopathy") — that the sentence does
not negate, with no word in between that makes the phrase about a test, a procedure or a risk
rather than the diagnosis (:data:`_GAP_BLOCK`), and no alternative after it (``or``,
``versus``). Not a hedge the note reports from someone else
(``the patient states ...``), after a negation (``not likely``, ``unlikely``), or after
``for``/``of``/``to`` ("evaluate for possible ...", "referral for suspected ...": the
diagnosis is what a test looks for, not what the note asserts).

Rewrite (fluent, one contiguous edit): ``likely`` / ``most likely`` / ``probably`` /
``possible`` / ``suspected`` / ``presumed`` / ``what appears to be`` are dropped (the article
before them and a sentence-initial capital follow: "a possible ankle sprain" → "an ankle
sprain", "Possible pneumonia." → "Pneumonia."); ``appears to be`` → ``is``; ``suspicious for`` /
``concerning for`` / ``suggestive of`` / ``consistent with`` → ``diagnostic of``; ``may have``
/ ``might have`` → ``has`` (``have`` after I/you/we/they); ``I suspect (that)`` / ``I think``
before a clause is dropped; ``we cannot rule out`` → ``we confirmed``. "The differential
includes ..." is not rewritten (no single diagnosis to assert).

Transcript rule (the error must go beyond what the visit said). A transcript sentence
*mentions* the condition when one of its concepts is the same concept (canonical class, or
a related one: ``is_a``, synonym, ...) or it contains the note's words for it; such a sentence
is *hedged* when it holds a spoken uncertainty cue (:data:`SPOKEN_UNCERTAIN`: "probably",
"i think", "sounds like", "could be", "rule out", ...), and *certain* when it affirms the
condition (not negated, not a question) without one. The edit is made only when the transcript
has at least one hedged mention and no certain one, and the note has no other sentence stating
the condition without an uncertainty cue (else the note already asserts it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinjudge.grounding.transcript_facts import FINDING_KINDS, ConceptMention
from clinjudge.inject.material import NoteMaterial, phrase_pattern
from clinjudge.inject.types import Edit, Perturber, indefinite_article, match_case
from clinjudge.knowledge.concept import TERM_PREFIX, Mention
from clinjudge.text.hedges import SPOKEN_UNCERTAIN
from clinjudge.text.negation import history_or_hypothetical, is_negated
from clinjudge.text.sentences import split_sentences


@dataclass(frozen=True)
class Hedge:
    """A hedge pattern and how it is made certain: ``drop`` (remove it), ``clause`` (remove a
    clause-opening hedge), or a replacement word (``"diagnostic of"``, ``"is"``, ``"are"``,
    ``"has"`` — agreeing with the subject —, ``"confirmed"``)."""

    pattern: str
    rewrite: str
    reach: int = 4


HEDGES: tuple[Hedge, ...] = (
    Hedge(r"(?:most|very|quite|highly)\s+likely|likely(?!\s+to\b)", "drop"),
    Hedge(r"probably|probable", "drop"),
    Hedge(r"possibly|possible", "drop"),
    Hedge(r"suspected|presumed|presumptive|presumably", "drop"),
    Hedge(r"what\s+(?:appears|seems)\s+to\s+be", "drop"),
    Hedge(r"(?:appears|seems)\s+to\s+be", "is"),
    Hedge(r"(?:appear|seem)\s+to\s+be", "are"),
    Hedge(
        r"(?:suspicious|concerning|worrisome)\s+for|suggestive\s+of|(?:consistent|compatible)"
        r"\s+with",
        "diagnostic of",
    ),
    Hedge(r"(?:may|might)\s+have(?!\s+(?:been|had|to)\b)", "has"),
    Hedge(r"(?:i|we)\s+(?:suspect|think|believe|feel)(?:\s+that)?", "clause", reach=8),
    Hedge(r"(?P<subject>i|we)\s+(?:cannot|can\s*not|can['’]t|could\s+not|couldn['’]t)\s+rule"
          r"\s+out", "confirmed"),
)  # fmt: skip
_HEDGE_RX = [(re.compile(rf"(?<![\w-])(?:{h.pattern})(?![\w-])", re.I), h) for h in HEDGES]

#: Every written uncertainty cue; the edited sentence must hold exactly one (the hedge).
UNCERTAIN = re.compile(
    r"(?<![\w-])(?:likely|unlikely|probabl\w*|possibl\w*|suspect\w*|presum\w*|question\w*"
    r"|appears?|seems?|suspicious|concerning|worrisome|suggest\w*|consistent|compatible|may"
    r"|might|could|think|believe|feel|rule\s+out|r/o|differential|versus|vs|evaluat\w*"
    r"|concern\w*|worr\w*|wonder\w*|if|whether|unclear|uncertain|unknown|perhaps|maybe|query"
    r"|risk|cannot|can['’]t|more\s+of)(?![\w-])",
    re.I,
)
_REPORTED = re.compile(
    r"\b(?:states?|stated|reports?|reported|says|said|asks?|asked|mentions?|mentioned|per)\b",
    re.I,
)
_BEFORE_BLOCK = re.compile(r"\b(?:not|no|less|more|for|of|to|about|regarding)\s*$", re.I)
_GAP = re.compile(r"[A-Za-z'’ -]*")
_GAP_BLOCK = frozenset({
    "not", "no", "rule", "ruled", "evaluate", "evaluation", "assess", "test", "testing", "need",
    "needs", "require", "requires", "requiring", "start", "improve", "improving", "resolve",
    "resolving", "if", "unless", "whether", "than", "without", "history", "risk", "prevent",
    "avoid", "develop", "developing", "or", "versus", "vs", "surgical", "surgery",
    "intervention", "treatment", "therapy", "referral", "procedure", "imaging", "ultrasound",
    "mri", "ct", "x-ray", "biopsy", "injection", "repair", "management", "workup", "for",
    "contribution", "component", "etiology", "etiologies", "source", "cause"
})  # fmt: skip
_ALTERNATIVE = re.compile(r"^[^,;.]*?\b(?:or|versus|vs\.?|and/or)\b", re.I)
#: Head words that make the phrase they end a condition when the knowledge base does not know
#: the phrase ("rotator cuff tendinopathy", "medial collateral ligament strain").
CONDITION_HEAD = (
    r"(?!(?:diagn|progn)osis\b)\w+(?:itis|opathy|osis|emia|algia)|strain|sprain|tear|fracture"
    r"|infection|syndrome|disease|disorder|deficiency|injury|stones?|ulcer|effusion"
    r"|exacerbation|flare|neoplasm|tumou?r|lesion|impingement|insufficiency|failure|reflux"
)
_FUNCTION_WORD = (
    r"(?:to|of|by|due|with|from|in|on|for|at|is|be|are|was|were|and|or|a|an|the|his|her|their"
    r"|its|this|that|these|there|it|caused|related|secondary|more|some)\b"
)
#: A word of the phrase is taken whole and is at most 64 characters: tried from every gap
#: position of a long run without spaces ("don't'don't'…"), an unbounded word was quadratic.
_HEAD_PHRASE = re.compile(
    rf"(?P<gap>[a-z '’-]*?)(?<![\w-])"
    rf"(?P<phrase>(?:(?!{_FUNCTION_WORD})[A-Za-z][\w'’-]{{0,63}}+\s++){{0,3}}(?:{CONDITION_HEAD}))"
    rf"(?![\w-])",
    re.I,
)
_ASSERTING = frozenset({"is", "are", "was", "were", "has", "have", "had"})
_CLAUSE_START = re.compile(r"(?:this|it|he|she|they|the|his|her|their|these|there)\b", re.I)
_PLURAL_SUBJECT = frozenset({"i", "you", "we", "they"})
_CONDITION = FINDING_KINDS | {"disease"}
#: Knowledge-base relations under which a transcript term names the same condition (not
#: ``has_symptom``: "pain" does not name a fracture).
NAMING_RELATIONS = frozenset({"same_as", "is_a", "brand_of", "expands_to", "lay_for", "xref"})


@dataclass(frozen=True)
class Condition:
    """The condition a hedge qualifies: its words in the sentence and its canonical concept
    ids (empty for a condition named by :data:`CONDITION_HEAD` only)."""

    start: int
    end: int
    surface: str
    keys: frozenset[str]


def _condition_keys(src: NoteMaterial, m: Mention) -> frozenset[str]:
    """Canonical ids of a condition mention (an abbreviation: of its expansions); empty when
    the mention is no condition."""
    keys: set[str] = set()
    for cid, canonical in zip(m.concept_ids, m.canonical, strict=False):
        concept = src.kb.concept(cid)
        if concept.kind in _CONDITION or src.kb.concept(canonical).kind in _CONDITION:
            keys.add(canonical)
        elif concept.kind == "abbreviation":
            for relation, target in concept.relations:
                if relation == "expands_to" and target.startswith(TERM_PREFIX):
                    term = target[len(TERM_PREFIX) :]
                    keys |= {
                        src.kb.canonical(c.id) for c in src.kb.lookup(term) if c.kind in _CONDITION
                    }
    return frozenset(keys)


def _names_condition(src: NoteMaterial, c: Condition, other: ConceptMention) -> bool:
    """Whether a transcript concept mention names condition ``c``: the same canonical class,
    or a synonym, broader or narrower concept (:data:`NAMING_RELATIONS`)."""
    if c.keys & set(other.canonical):
        return True
    return bool(c.keys) and src.kb.related(c.surface, other.surface) in NAMING_RELATIONS


def transcript_hedges(src: NoteMaterial, c: Condition) -> bool:
    """The transcript rule of the module docstring: at least one hedged mention of the
    condition, no certain one."""
    hedged = False
    words = phrase_pattern(c.surface) if len(c.surface) >= 4 else None
    for unit, mentions in zip(src.facts.index.units, src.facts.mentions, strict=True):
        same = [x for x in mentions if _names_condition(src, c, x)]
        if not same and not (words and words.search(unit.text)):
            continue
        if SPOKEN_UNCERTAIN.search(unit.text):
            hedged = True
            continue
        if same and all(
            x.negated is not False or history_or_hypothetical(unit.text, x.start, x.end)
            for x in same
        ):
            continue  # denied, asked about, past, family or hypothetical only
        return False
    return hedged


def _note_asserts(src: NoteMaterial, c: Condition, skip: tuple[int, int]) -> bool:
    """Whether another note sentence states the condition, not negated, not historical, and
    without an uncertainty cue."""
    words = phrase_pattern(c.surface)
    for s in src.sentences:
        if (s.start, s.end) == skip or UNCERTAIN.search(s.text):
            continue
        spans = [(m.start, m.end) for m in src.kb.concepts_in(s.text) if c.keys & set(m.canonical)]
        spans += [w.span() for w in words.finditer(s.text)]
        for a, b in spans:
            if not is_negated(s.text, a, b) and not history_or_hypothetical(s.text, a, b):
                return True
    return False


def _gap_ok(gap: str, reach: int) -> bool:
    """Few words, no punctuation, none of :data:`_GAP_BLOCK`; after a clause hedge (longer
    ``reach``) a verb that asserts the condition ("this *is* a flare of ...", "there *is*
    some arthritis"), not "her stress level" (an attribution, not a diagnosis)."""
    words = gap.lower().split()
    if reach > 4 and not set(words) & _ASSERTING:
        return False
    return len(words) <= reach and bool(_GAP.fullmatch(gap)) and not set(words) & _GAP_BLOCK


def _target(src: NoteMaterial, text: str, end: int, reach: int) -> Condition | None:
    """The condition right after a hedge ending at ``end`` of a sentence (module docstring):
    a knowledge-base condition, else a phrase ending in a :data:`CONDITION_HEAD` word."""
    found: Condition | None = None
    for m in src.kb.concepts_in(text):
        if m.start < end:
            continue
        if not _gap_ok(text[end : m.start], reach):
            break
        keys = _condition_keys(src, m)
        if keys and not is_negated(text, m.start, m.end):
            found = Condition(m.start, m.end, m.surface, keys)
            break
    if found is None:
        head = _HEAD_PHRASE.match(text, end)
        if head is None or not _gap_ok(head.group("gap"), reach):
            return None
        a, b = head.span("phrase")
        if is_negated(text, a, b):
            return None
        found = Condition(a, b, head.group("phrase"), frozenset())
    return None if _ALTERNATIVE.match(text[found.end :]) else found


def _rewrite(text: str, rx: re.Match[str], hedge: Hedge) -> tuple[int, int, str] | None:
    """``(start, end, replacement)`` inside the sentence making the hedge certain."""
    start, end = rx.span()
    word = rx.group()
    if hedge.rewrite in ("drop", "clause"):
        while end < len(text) and text[end] == " ":
            end += 1
        if end >= len(text) or not text[end].isalpha():
            return None
        if hedge.rewrite == "clause" and not _CLAUSE_START.match(text, end):
            return None
        lead = text[:start].rstrip()
        initial = not lead.strip("-•* ") or lead.endswith(":")
        initial = initial or (hedge.rewrite == "drop" and word[0].isupper())
        if initial:
            return start, end + 1, text[end].upper()
        article = re.search(r"(?<![\w-])(an?) $", text[:start], re.I)
        if article:
            following = re.match(r"[\w-]+", text[end:])
            new = match_case(
                article.group(1), indefinite_article(following.group() if following else "")
            )
            return start - len(article.group()), end, f"{new} "
        return start, end, ""
    if hedge.rewrite == "has":
        before = re.findall(r"[\w']+", text[:start].lower())
        return start, end, "have" if before and before[-1] in _PLURAL_SUBJECT else "has"
    if hedge.rewrite == "confirmed":
        return start, end, f"{rx.group('subject')} confirmed"
    return start, end, match_case(word, hedge.rewrite)


def _sentence_edits(src: NoteMaterial, text: str, offset: int) -> list[Edit]:
    cues = list(UNCERTAIN.finditer(text))
    edits = []
    for rx, hedge in _HEDGE_RX:
        for found in rx.finditer(text):
            inside = [c for c in cues if found.start() <= c.start() < found.end()]
            if len(cues) != len(inside) or not inside:
                continue  # another uncertainty cue stays in the sentence
            if _BEFORE_BLOCK.search(text[: found.start()]) or _REPORTED.search(
                text[: found.start()]
            ):
                continue
            target = _target(src, text, found.end(), hedge.reach)
            if target is None or not transcript_hedges(src, target):
                continue
            if _note_asserts(src, target, (offset, offset + len(text))):
                continue
            change = _rewrite(text, found, hedge)
            if change is None:
                continue
            a, b, after = change
            edited = text[:a] + after + text[b:]
            why = (
                f"hedge '{found.group()}' removed: '{text.strip()}' -> '{edited.strip()}'; the "
                f"transcript voices {target.surface} only with uncertainty"
            )
            edits.append(Edit(offset + a, offset + b, after, why))
    return edits


def find_hedge_removals(src: NoteMaterial) -> list[Edit]:
    edits = []
    for section in src.sections:
        if section.soap not in ("assessment", "plan"):
            continue
        for sentence in split_sentences(src.note, section.start, section.end):
            edits += _sentence_edits(src, sentence.text, sentence.start)
    return edits


hedge_removal = Perturber(
    "hedge_removal",
    "error",
    find_hedge_removals,
    "a hedged diagnosis in the assessment or plan stated as certain",
)
