"""Whether a note carries each visit fact: ``covered``, ``contradicted`` or ``omitted`` (SPEC §9
"Omissions"), offline.

The note is read sentence by sentence (:func:`~clinjudge.text.sections.segment_note`, then
:func:`~clinjudge.text.sentences.split_sentences`), each knowledge-concept mention with its
negation status (:func:`~clinjudge.text.negation.is_negated`); a question ("any fever?")
asserts nothing and is skipped. For a concept fact of class set C
and polarity p (denied / affirmed):

    matches  = note mentions sharing a class with C, or whose surface the knowledge base relates
               to the fact's as another name of it (:data:`CARRYING_RELATIONS`: brand/generic,
               abbreviation, lay term) or, for a drug or an ordered test, a wider name of it
               (:data:`WIDER_NAMES`: the drug's class, the test's kind)
    covered       ⇔ some match has polarity p; or, with no match, the content words of the
                    fact's wording (or of a preferred name of its classes, when two words or
                    more) all stand in one note sentence, or p is denied and the note says
                    the review of systems is otherwise negative ("ROS: negative except as
                    above", "denies any other symptoms")
    contradicted  ⇔ not covered, every match has the other polarity, and the transcript's
                    mentions of C all have polarity p (a visit that both affirms and denies a
                    concept — "no chest pain at rest, some on exertion" — contradicts nothing)
    omitted       ⇔ neither

A **dose** fact is ``covered`` when a note sentence naming the drug gives a dose that agrees
with one the visit gave it (:func:`~clinjudge.text.quantities.quantities_agree`),
``contradicted`` when such sentences give doses and none agrees (50 mg vs 100 mg), else
``omitted`` (the drug named without its dose, or not at all). A **value** fact (a vital) is
covered by any note quantity that agrees with it, ``contradicted`` by a note value of the
same sign that agrees with no reading the visit gives (a note may give another reading of the
same sign, which is no contradiction), else omitted. An **allergy** is
covered only by a note sentence that names an allergy (or an "Allergies" section): a drug
listed among the medications does not record it; a statement about allergies as such ("no
allergies") by any note sentence recording allergies ("NKDA").

Laboratory work in general ("labs", "blood work") is covered by any note sentence naming
laboratory tests (:data:`GENERIC_LABS`). **Plan facts** are covered by any note sentence of
their kind: a return precaution
(:func:`~clinjudge.grounding.critical_items.is_precaution`), a follow-up (the note wording
of :data:`~clinjudge.grounding.plan_items.PLAN_KINDS` ``follow-up``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from clinjudge.grounding.critical_items import ALLERGY, is_precaution
from clinjudge.grounding.plan_items import plan_kinds
from clinjudge.grounding.transcript_facts import TranscriptFacts
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.omissions.fact import VisitFact
from clinjudge.omissions.social_facts import PREFIX as SOCIAL_PREFIX
from clinjudge.omissions.social_facts import note_polarities
from clinjudge.text.negation import is_negated
from clinjudge.text.normalize import content_tokens
from clinjudge.text.quantities import Quantity, extract_quantities, quantities_agree
from clinjudge.text.sections import segment_note
from clinjudge.text.sentences import split_sentences

Status = Literal["covered", "contradicted", "omitted"]
#: Relations through which a note's wording carries a visit's concept: names of one thing
#: (is-a, cross-references and siblings are not: "tingling" does not record "edema").
CARRYING_RELATIONS = frozenset({"same_as", "brand_of", "expands_to", "lay_for"})
#: Classes that name laboratory work in general ("labs", "blood work"), and the words of a
#: note that name some (a panel, a count, a common assay, or the word itself).
GENERIC_LABS = frozenset({"CUR:laboratory test", "CUR:blood test"})
_LAB_WORDS = re.compile(
    r"\b(?:labs?|laboratory|blood (?:work|tests?|draw)|bloodwork|cbc|cmp|bmp|panel|a1c|hba1c|"
    r"lipids?|tsh|metabolic|blood count|urinalysis)\b",
    re.I,
)
#: Per category, the wider names that also carry a fact: a drug's class ("avoid NSAIDs"
#: carries "avoid ibuprofen"), a test's kind ("blood work" carries "labs").
WIDER_NAMES: dict[str, frozenset[str]] = {
    "medication": frozenset({"in_class"}),
    "plan": frozenset({"is_a"}),
}
_NO_KNOWN_ALLERGY = re.compile(r"\b(?:nkda|nka|nkfa)\b", re.I)
_BLANKET_ROS = re.compile(
    r"\b(?:otherwise negative|all other systems?(?: (?:were|are))?(?: reviewed)?(?: and)?"
    r"(?: (?:are|were))? negative|negative except|remainder of (?:the )?(?:review of systems|ros)"
    r" (?:is|was) negative|complete (?:review of systems|ros) (?:is|was) negative|"
    r"denies (?:any )?other symptoms|no other (?:symptoms|complaints))\b",
    re.I,
)


@dataclass(frozen=True)
class NoteMention:
    canonical: frozenset[str]
    surface: str
    negated: bool
    sentence: int  # index into NoteView.sentences


@dataclass(frozen=True)
class NoteSentence:
    start: int
    end: int
    text: str
    header: str
    soap: str


@dataclass(frozen=True)
class FactCoverage:
    """A fact's status in the note, with the note sentence that settles it (``-1, -1`` when
    omitted) and why, in words."""

    fact: VisitFact
    status: Status
    note_start: int
    note_end: int
    rationale: str


class NoteView:
    """A note's sentences and concept mentions, parsed once."""

    def __init__(self, note: str, kb: KnowledgeBase) -> None:
        self.note = note
        self.kb = kb
        self.sentences: list[NoteSentence] = []
        self.mentions: list[NoteMention] = []
        for section in segment_note(note).sections:
            for span in split_sentences(note, section.start, section.end):
                i = len(self.sentences)
                self.sentences.append(
                    NoteSentence(span.start, span.end, span.text, section.header, section.soap)
                )
                if span.text.rstrip().endswith("?"):
                    continue  # a question asserts nothing ("any fever?" in a pasted dialogue)
                for m in kb.concepts_in(span.text):
                    negated = is_negated(span.text, m.start, m.end)
                    self.mentions.append(NoteMention(frozenset(m.canonical), m.surface, negated, i))

    @cached_property
    def tokens(self) -> list[frozenset[str]]:
        return [frozenset(content_tokens(s.text)) for s in self.sentences]

    @cached_property
    def quantities(self) -> list[list[Quantity]]:
        return [extract_quantities(s.text) for s in self.sentences]

    @cached_property
    def blanket_negative(self) -> int:
        """The first sentence saying the rest of the review of systems is negative, or -1."""
        return next((i for i, s in enumerate(self.sentences) if _BLANKET_ROS.search(s.text)), -1)

    def matches(self, fact: VisitFact) -> list[NoteMention]:
        classes = set(fact.canonical)
        found = [m for m in self.mentions if m.canonical & classes]
        if found or not fact.surface:
            return found
        carrying = CARRYING_RELATIONS | WIDER_NAMES.get(fact.category, frozenset())
        return [m for m in self.mentions if self.kb.related(fact.surface, m.surface) in carrying]

    def names_of(self, fact: VisitFact) -> list[frozenset[str]]:
        """The content words of the fact's wording and of its classes' preferred names of two
        words or more ("steroid shot" is also "corticosteroid injection", which "a spinal
        injection with a corticosteroid" carries); one word is left to the concept match."""
        names = [frozenset(content_tokens(fact.surface))]
        for c in fact.canonical:
            if c in self.kb.lexicon.pos:
                words = frozenset(content_tokens(self.kb.concept(c).preferred))
                if len(words) >= 2 and words not in names:
                    names.append(words)
        return [w for w in names if w]

    def first(self, test) -> int:  # noqa: ANN001 - a predicate over NoteSentence
        return next((i for i, s in enumerate(self.sentences) if test(s)), -1)


def check_facts(
    facts: list[VisitFact], note: str, transcript: TranscriptFacts, kb: KnowledgeBase
) -> list[FactCoverage]:
    """Each fact's status in ``note`` (module docstring), in the facts' order."""
    view = NoteView(note, kb)
    return [check_fact(f, view, transcript) for f in facts]


def check_fact(fact: VisitFact, view: NoteView, transcript: TranscriptFacts) -> FactCoverage:
    if fact.category in ("return precaution", "follow-up"):
        return _plan_fact(fact, view)
    if fact.attribute == "value":
        return _value_fact(fact, view, transcript)
    if fact.canonical and fact.canonical[0].startswith(SOCIAL_PREFIX):
        return _social_fact(fact, view)
    if fact.category == "allergy" and ALLERGY.search(fact.surface):
        i = view.first(_records_allergy)
        if i < 0:
            return _omitted(fact)
        return _result(fact, "covered", view.sentences[i], "the note records allergies")
    if set(fact.canonical) & GENERIC_LABS and fact.polarity == "affirmed":
        i = view.first(lambda s: bool(_LAB_WORDS.search(s.text)))
        if i >= 0:  # "labs today" is carried by "CBC, CMP and A1C ordered"
            return _result(fact, "covered", view.sentences[i], "the note names laboratory tests")
    matches = view.matches(fact)
    if fact.category == "allergy":
        matches = [m for m in matches if _records_allergy(view.sentences[m.sentence])]
    denied = fact.polarity == "denied"
    same = [m for m in matches if m.negated == denied]
    if same and fact.attribute == "dose":
        return _dose_fact(fact, [view.sentences[m.sentence] for m in same])
    if same:
        found = view.sentences[same[0].sentence]
        return _result(fact, "covered", found, f"the note states {same[0].surface!r}")
    if fact.attribute == "dose":
        return _omitted(fact)
    if matches and transcript.statuses(fact.canonical) == {denied}:
        found = view.sentences[matches[0].sentence]
        said = "denied" if denied else "reported"
        written = "present" if denied else "absent"
        why = f"the visit {said} {fact.surface!r}; the note writes it {written}"
        return _result(fact, "contradicted", found, why)
    if matches:
        found = view.sentences[matches[0].sentence]
        return _result(fact, "covered", found, "the visit said both; the note states one")
    for words in view.names_of(fact):
        for i, tokens in enumerate(view.tokens):
            if words <= tokens and fact.category != "allergy":
                return _result(fact, "covered", view.sentences[i], "the note uses the same words")
    if denied and fact.category == "symptom" and view.blanket_negative >= 0:
        found = view.sentences[view.blanket_negative]
        return _result(fact, "covered", found, "the note's review of systems is otherwise negative")
    return _omitted(fact)


def _plan_fact(fact: VisitFact, view: NoteView) -> FactCoverage:
    if fact.category == "return precaution":
        i = view.first(lambda s: is_precaution(s.text))
        what = "gives return precautions"
    else:
        i = view.first(lambda s: "follow-up" in plan_kinds(s.text))
        what = "plans a follow-up"
    if i < 0:
        return _omitted(fact)
    return _result(fact, "covered", view.sentences[i], f"the note {what}")


def _records_allergy(sentence: NoteSentence) -> bool:
    text = f"{sentence.header} {sentence.text}"
    return bool(ALLERGY.search(text) or _NO_KNOWN_ALLERGY.search(text))


def _dose_fact(fact: VisitFact, sentences: list[NoteSentence]) -> FactCoverage:
    """A dose fact against the note sentences naming its drug (module docstring)."""
    said = list(fact.quantities)
    noted = [(s, q) for s in sentences for q in extract_quantities(s.text) if q.kind == "dose"]
    for s, q in noted:
        if any(quantities_agree(a, q) for a in said):
            return _result(fact, "covered", s, f"the note gives {fact.surface} as {q.text!r}")
    if noted and all(quantities_agree(a, q) is False for a in said for _, q in noted):
        s, q = noted[0]
        why = f"the visit gave {fact.surface} as {said[0].text!r}; the note writes {q.text!r}"
        return _result(fact, "contradicted", s, why)
    why = f"the note names {fact.surface} without the dose the visit gave ({said[0].text!r})"
    return FactCoverage(fact, "omitted", -1, -1, why)


def _social_fact(fact: VisitFact, view: NoteView) -> FactCoverage:
    """Tobacco, alcohol, drugs: the note's sentences naming the item, by polarity."""
    denied = fact.polarity == "denied"
    named = note_polarities(fact.surface, [s.text for s in view.sentences])
    same = [i for i, d in named if d == denied]
    if same:
        return _result(fact, "covered", view.sentences[same[0]], f"the note states {fact.text!r}")
    if named:
        i = named[0][0]
        said = "denied" if denied else "reported"
        return _result(
            fact, "contradicted", view.sentences[i], f"the visit {said} {fact.surface} use"
        )
    return _omitted(fact)


def _value_fact(fact: VisitFact, view: NoteView, transcript: TranscriptFacts) -> FactCoverage:
    """A vital's value: covered by any note quantity that agrees with it; contradicted by a
    note value of the same sign that no reading of the visit gives (130/70 written for a visit
    whose only blood pressure was 144/72); else omitted."""
    said = fact.quantities[0]
    other: tuple[int, Quantity] | None = None
    for i, quantities in enumerate(view.quantities):
        for q in quantities:
            agree = quantities_agree(said, q)
            if agree:
                return _result(fact, "covered", view.sentences[i], f"the note gives {q.text!r}")
            if agree is False and q.unit == said.unit and other is None:
                other = (i, q)
    if other is not None and not _visit_gives(transcript, other[1]):
        i, q = other
        why = f"the visit gives {fact.surface} {said.text!r}; the note writes {q.text!r}"
        return _result(fact, "contradicted", view.sentences[i], why)
    why = f"the note never gives the {fact.surface} of {said.text!r}"
    return FactCoverage(fact, "omitted", -1, -1, why)


def _visit_gives(transcript: TranscriptFacts, value: Quantity) -> bool:
    """Some quantity of the transcript agrees with ``value`` (another reading of the sign)."""
    return any(quantities_agree(q, value) for qs in transcript.quantities for q in qs)


def _result(fact: VisitFact, status: Status, s: NoteSentence, why: str) -> FactCoverage:
    return FactCoverage(fact, status, s.start, s.end, why)


def _omitted(fact: VisitFact) -> FactCoverage:
    words = {
        "return precaution": "the note gives no return precautions",
        "follow-up": "the note plans no follow-up",
    }
    why = words.get(fact.category, f"the note never mentions {fact.surface!r}")
    return FactCoverage(fact, "omitted", -1, -1, why)
