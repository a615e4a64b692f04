"""What the offline verifier knows about a transcript, computed once per note.

For every transcript sentence: its content tokens, the knowledge concepts it mentions and
whether each is asserted or denied, its quantities (dose, frequency, duration, vitals) and its
laterality mentions. Assertion follows the sentence's own negation cues and, for a doctor's
question, the patient's answer in the next turn ("any chest pain ?" / "no .").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from clinjudge.judges.evidence import SentenceIndex, Unit, transcript_index
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.laterality import Laterality, laterality_mentions
from clinjudge.text.negation import answer_polarity as reply_polarity
from clinjudge.text.negation import is_negated
from clinjudge.text.quantities import Quantity, extract_quantities
from clinjudge.types import Transcript

#: Concept kinds whose presence or absence a conversation establishes.
FINDING_KINDS = frozenset({"symptom", "finding", "disease"})


@dataclass(frozen=True)
class ConceptMention:
    """A knowledge concept mentioned in a sentence, with its assertion status."""

    canonical: tuple[str, ...]  # canonical ids of the classes the surface may denote
    concept_ids: tuple[str, ...]
    kinds: frozenset[str]
    surface: str
    start: int  # offset within the sentence
    end: int
    negated: bool | None  # None: asked about, answer unknown (a question asserts nothing)


@dataclass
class TranscriptFacts:
    index: SentenceIndex
    mentions: list[list[ConceptMention]]
    quantities: list[list[Quantity]]
    lateralities: list[list[Laterality]]
    status: dict[str, set[bool | None]] = field(default_factory=dict)  # canonical -> negated?
    tokens: set[str] = field(default_factory=set)

    def statuses(self, canonical: tuple[str, ...]) -> set[bool]:
        """Definite negation flags of the transcript's mentions of any of these classes."""
        found: set[bool] = set()
        for cid in canonical:
            found |= {flag for flag in self.status.get(cid, set()) if flag is not None}
        return found

    def has_concept(self, canonical: tuple[str, ...]) -> bool:
        return any(cid in self.status for cid in canonical)

    def denied_only(self, canonical: tuple[str, ...]) -> bool:
        return self.statuses(canonical) == {True}

    def asserted_only(self, canonical: tuple[str, ...]) -> bool:
        return self.statuses(canonical) == {False}


def concept_mentions(kb: KnowledgeBase, sentence: str) -> list[ConceptMention]:
    """Concepts of ``sentence`` with the sentence's own negation status."""
    found = []
    for m in kb.concepts_in(sentence):
        found.append(
            ConceptMention(
                canonical=tuple(m.canonical),
                concept_ids=tuple(m.concept_ids),
                kinds=frozenset(m.kinds),
                surface=m.surface,
                start=m.start,
                end=m.end,
                negated=is_negated(sentence, m.start, m.end),
            )
        )
    return found


_QUESTION_CUE = re.compile(
    r"^\W*(?:(?:and|so|okay|ok|um+|uh+|now|alright|all right|any|other)\W+)*"
    r"(?:any|do you|did you|have you|has it|are you|were you|is there|are there|does it|"
    r"ever|how about|what about)\b",
    re.I,
)


_ASKS = re.compile(r"\b(?:any|do you|did you|have you|are you|ever)\b", re.I)


def is_question(unit: Unit, following: Unit | None) -> bool:
    """A sentence that asks: it ends with "?", opens like a question, or — since ASR drops the
    "?" — is a clinician's sentence with "any ..." / "do you ..." that the other speaker answers."""
    if unit.text.rstrip().endswith("?") or _QUESTION_CUE.search(unit.text):
        return True
    return (
        unit.speaker == "doctor"
        and following is not None
        and following.speaker not in ("doctor", unit.speaker)
        and bool(_ASKS.search(unit.text))
    )


def answer_polarity(unit: Unit, following: Unit | None) -> bool | None:
    """For a question, whether the next speaker's reply denies (True) or affirms (False) it."""
    if following is None or following.turn == unit.turn:
        return None
    polarity = reply_polarity(following.text)
    return None if polarity is None else polarity == "negative"


def question_status(found: list[ConceptMention], answer: bool | None) -> list[ConceptMention]:
    """Mentions of a question take the status of the answer, for the findings asked about: a
    "no" to "any fever or chills?" denies both, a "yes" affirms a single finding (a yes to a list
    is ambiguous). A question about a drug ("have you taken anything for the pain?") is about
    the drug, so its answer settles no finding; everything else is unknown (``None``)."""
    findings = [m for m in found if m.kinds & FINDING_KINDS]
    about_drug = any("drug" in m.kinds for m in found)
    updated = []
    for m in found:
        flag: bool | None = None
        if m.kinds & FINDING_KINDS and not about_drug:
            if answer is True:
                flag = True
            elif answer is False and len(findings) == 1:
                flag = False
        updated.append(replace(m, negated=flag))
    return updated


def build_transcript_facts(
    transcript: Transcript, kb: KnowledgeBase, *, dense: bool = True
) -> TranscriptFacts:
    index = transcript_index(transcript, dense=dense)
    units = index.units
    mentions: list[list[ConceptMention]] = []
    status: dict[str, set[bool]] = {}
    tokens: set[str] = set()
    for i, unit in enumerate(units):
        found = concept_mentions(kb, unit.text)
        following = units[i + 1] if i + 1 < len(units) else None
        if found and is_question(unit, following):
            found = question_status(found, answer_polarity(unit, following))
        for m in found:
            for cid in m.canonical:
                status.setdefault(cid, set()).add(m.negated)
        mentions.append(found)
        tokens |= unit.tokens
    return TranscriptFacts(
        index=index,
        mentions=mentions,
        quantities=[extract_quantities(u.text) for u in units],
        lateralities=[laterality_mentions(u.text) for u in units],
        status=status,
        tokens=tokens,
    )
