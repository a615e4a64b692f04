"""Offline CEF questions: one YES-question per atomic fact of a text (SPEC §2 step 1).

Facts of a **dialogue** (ACI-Bench or MTS-Dialog tags, :func:`~clinjudge.text.transcript.
parse_transcript`), sentence by sentence:

- a question (by anyone) asserts nothing alone: it becomes part of the fact its answer makes;
- the first sentence of a reply (another speaker's next turn) to a question: a yes/no reply
  (:func:`clinjudge.text.negation.answer_polarity`, the reading the SOAP verifier uses) makes the
  question a fact — ``"no <question>"`` for a no, ``"<question>: <reply>"`` for a yes; a reply
  that carries at least :data:`SELF_CONTAINED` content words of its own is its own fact (after a
  no, as well as the denied question); a short reply is read with its question
  (``"How old are you now? I'm twenty six."``);
- any other sentence (the patient's account, the clinician's findings and plans) is a fact.
Facts of **prose** (a summary, a note, a plain-text source): the atomic claims of
:func:`clinjudge.text.claims.split_claims`, each with its note section.

Second-person words of a question are rewritten to the patient ("your legs" → "the patient's
legs") so that the fact reads as a statement about the patient, and spelled numbers are written
in digits ("twenty six" → "26", :func:`clinjudge.text.numbers.iter_spelled_numbers`), the form
the verifier's number rules compare.

Selection of N facts (:func:`select_facts`): facts with fewer than two content words and no
clinical concept are never chosen; each remaining fact weighs
``2 · clinical concepts + quantities + 0.25 · min(content words, 8)`` (concepts of the knowledge
base of kind disease, symptom, finding, drug, drug class, procedure, test, anatomy, lay term);
the facts, in text order, are cut into N consecutive bins of equal size and the heaviest fact of
each bin is taken — clinically contentful facts, spread over the whole text. Fewer than N
eligible facts: all of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.claims import split_claims
from clinjudge.text.negation import answer_polarity
from clinjudge.text.normalize import content_tokens
from clinjudge.text.numbers import format_number, iter_spelled_numbers, lower_same_length
from clinjudge.text.quantities import extract_quantities
from clinjudge.text.sections import segment_note
from clinjudge.text.transcript import TranscriptSentence, parse_transcript, transcript_sentences
from clinjudge.types import SoapSection

#: Content words a reply needs to stand as a fact without its question.
SELF_CONTAINED = 3
#: Knowledge kinds that make a fact clinically contentful.
CLINICAL_KINDS = frozenset(
    {"disease", "symptom", "finding", "drug", "drug_class", "procedure", "test", "anatomy"}
    | {"lay_term"}
)
_QUESTION_OPENER = re.compile(
    r"^\W*(?:(?:and|so|okay|ok|um+|uh+|now|alright|all right|well|also|i see)\W+)*"
    r"(?:(?:how|what) about\s+)?"
    r"(?:(?:do|did|does|have|has|had|are|were|is|was|can|could|would|will)\s+"
    r"(?:you|there|it|they|he|she|your\s+\w+)\s+)?(?:ever\s+)?(?:any\s+)?",
    re.I,
)
_QUESTION_START = re.compile(
    r"^\W*(?:(?:and|so|okay|ok|um+|uh+|now|alright|all right|well|also|i see)\W+)*"
    r"(?:any|ever|how about|what about|(?:do|did|does|have|has|had|are|were|is|was|can|could|"
    r"would|will)\s+(?:you|there|it)\b)",
    re.I,
)
_YES_NO_OPENER = re.compile(
    r"^\W*(?:(?:um+|uh+|oh|ah|well|so|okay|ok)\W+)*(?:yes|yeah|yep|yup|no|nope|nah|"
    r"uh-huh|mm-hmm|mhm|correct|right|sure)\b\W*",
    re.I,
)
_TAG_QUESTION = re.compile(
    r"(?<!\bthe)(?<!\bmy)(?<!\byour)(?<!\bhis)(?<!\bher)(?:,\s*|\s+)"
    r"(?:right|correct|is that right|okay|ok)$",
    re.I,
)
_PRONOUNS = [
    (re.compile(r"\byour\b", re.I), "the patient's"),
    (re.compile(r"\byourself\b", re.I), "the patient"),
    (re.compile(r"\byou\b", re.I), "the patient"),
]


@dataclass(frozen=True)
class Fact:
    """A statement of a text that its own text answers YES; ``start``/``end`` index the text."""

    text: str
    start: int
    end: int
    section: SoapSection = "subjective"
    weight: float = 0.0
    eligible: bool = True


def yes_question(fact: Fact) -> str:
    """The offline YES-question asking for ``fact``."""
    return f'Does the text state that "{fact.text.rstrip(" .?!")}"?'


def is_question(text: str) -> bool:
    """A sentence that asks: it ends with "?" or opens like a yes/no question ("any fever",
    "do you ...", "is there ...", "how about ..."): ASR often drops the "?"; a declarative
    opening with "when" or "had" is not a question."""
    return text.rstrip().endswith("?") or bool(_QUESTION_START.match(text))


def question_core(question: str) -> str:
    """A question as a statement about the patient: opener ("do you have any") and "?"
    removed, second person rewritten ("any swelling in your legs?" → "swelling in the
    patient's legs")."""
    core = _QUESTION_OPENER.sub("", question.strip(), count=1).rstrip(" ?.!")
    core = _TAG_QUESTION.sub("", core)  # "you have depression, right?" asks, "right" is not a side
    for pattern, replacement in _PRONOUNS:
        core = pattern.sub(replacement, core)
    return core.strip() or question.strip().rstrip("?")


def text_facts(text: str, kb: KnowledgeBase) -> list[Fact]:
    """Every candidate fact of a text: dialogue turns when it is a tagged dialogue, else the
    atomic claims of prose (module docstring)."""
    transcript = parse_transcript(text)
    if transcript.format == "plain":
        return prose_facts(text, kb)
    return dialogue_facts(transcript_sentences(transcript), kb)


def prose_facts(text: str, kb: KnowledgeBase) -> list[Fact]:
    """The atomic claims of a summary or note, with their spans and sections."""
    return [
        _weighed(Fact(c.text, c.start, c.end, c.section), kb)
        for c in split_claims(segment_note(text))
    ]


def dialogue_facts(sentences: list[TranscriptSentence], kb: KnowledgeBase) -> list[Fact]:
    """Facts of a dialogue's sentences (module docstring)."""
    facts: list[Fact] = []
    for i, sentence in enumerate(sentences):
        if is_question(sentence.text):
            continue
        asked = _question_before(sentences, i)
        if asked is None:
            facts.append(_weighed(Fact(sentence.text, sentence.start, sentence.end), kb))
            continue
        core = question_core(asked.text)
        reply = _YES_NO_OPENER.sub("", sentence.text, count=1).strip()
        own_words = len(content_tokens(reply))
        polarity = answer_polarity(sentence.text)
        span = (asked.start, sentence.end)
        if polarity == "negative":
            facts.append(_weighed(Fact(f"No {core}.", *span), kb))
            if own_words >= SELF_CONTAINED:
                facts.append(_weighed(Fact(sentence.text, sentence.start, sentence.end), kb))
        elif own_words >= SELF_CONTAINED:  # "Yes, I fell four days ago." → "I fell 4 days ago."
            facts.append(_weighed(Fact(reply, sentence.start, sentence.end), kb))
        elif polarity == "positive":
            tail = f": {reply}" if reply else ""
            facts.append(_weighed(Fact(f"{core}{tail}", *span), kb))
        else:
            facts.append(_weighed(Fact(f"{core}: {sentence.text}", *span), kb))
    return facts


def select_facts(facts: list[Fact], n: int) -> list[Fact]:
    """N eligible facts, the heaviest of each of N equal consecutive bins (module docstring)."""
    eligible = [f for f in facts if f.eligible]
    if n <= 0:
        return []
    if len(eligible) <= n:
        return eligible
    chosen = []
    for b in range(n):
        lo, hi = b * len(eligible) // n, (b + 1) * len(eligible) // n
        chosen.append(max(eligible[lo:hi], key=lambda f: f.weight))  # first heaviest on ties
    return chosen


def _question_before(sentences: list[TranscriptSentence], i: int) -> TranscriptSentence | None:
    """The question (of another speaker) this sentence opens the reply to, if any."""
    if i == 0:
        return None
    sentence, previous = sentences[i], sentences[i - 1]
    if previous.turn_index == sentence.turn_index or previous.speaker == sentence.speaker:
        return None
    return previous if is_question(previous.text) else None


def with_digits(text: str) -> str:
    """Spelled numbers written in digits ("twenty six" → "26")."""
    spans = list(iter_spelled_numbers(lower_same_length(text)))
    for start, end, value in reversed(spans):
        text = text[:start] + format_number(value) + text[end:]
    return text


def _weighed(fact: Fact, kb: KnowledgeBase) -> Fact:
    fact = Fact(with_digits(fact.text), fact.start, fact.end, fact.section)
    words = content_tokens(fact.text)
    concepts = {
        m.surface.lower() for m in kb.concepts_in(fact.text) if set(m.kinds) & CLINICAL_KINDS
    }
    quantities = extract_quantities(fact.text)
    weight = 2.0 * len(concepts) + len(quantities) + 0.25 * min(len(words), 8)
    eligible = len(words) >= 2 or bool(concepts)
    return Fact(fact.text, fact.start, fact.end, fact.section, weight, eligible)
