"""Offline CEF questions: one YES-question per atomic fact of a text (SPEC §2 step 1).

Facts of a **dialogue** (ACI-Bench or MTS-Dialog tags, :func:`~clinjudge.text.transcript.
parse_transcript`), sentence by sentence:

- a question (by anyone) asserts nothing alone: it becomes part of the fact its answer makes;
- the first sentence of a reply (another speaker's next turn) to a question: a yes/no reply
  (:func:`clinjudge.text.negation.answer_polarity`, the reading the SOAP verifier uses) makes the
  question a fact — ``"no <question>"`` for a no (polarity ``negative``), ``"<question>:
  <reply>"`` for a yes (``positive``); a reply that carries at least :data:`SELF_CONTAINED`
  content words of its own, or names a clinical concept the question did not ("What about your
  bones?" "I have osteoporosis too."), is its own fact (after a no, as well as the denied
  question); another short reply is read with its question (``"How old are you now? I'm twenty
  six."``);
- any other sentence — unprompted talk — is a fact only when it names a clinical concept or a
  quantity: the patient's account and the clinician's findings are, greetings, courtesy and
  remarks ("I'm so sorry to hear that", "It is nice to meet you") are not.
Facts of **prose** (a summary, a note, a plain-text source): the atomic claims of
:func:`clinjudge.text.claims.split_claims`, each with its note section; a blanket negative
("None.", :mod:`clinjudge.cef.blanket`) is a fact too.

A statement listing clinical concepts becomes one fact per item (:func:`split_listed`: "no fever,
chills, or weakness" → "no fever", "no chills", "no weakness"), so that each listed finding is
asked about on its own, as a human counting facts would; every part keeps the statement's span.

The question's words are rewritten to be a statement about the patient: the opener ("do you
have any", "have you been experiencing") and "?" are removed and second person is rewritten
("your legs" → "the patient's legs"). Spelled numbers stay as spoken: the verifier reads
"twenty six" as 26 itself (:func:`clinjudge.text.normalize.content_token_spans`).

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
from dataclasses import dataclass, replace
from typing import Literal

from clinjudge.cef.blanket import is_blanket
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.claims import split_claims
from clinjudge.text.negation import answer_polarity
from clinjudge.text.normalize import content_tokens
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
    r"(?:you|there|it|they|he|she|your\s+\w+)\s+)?(?:ever\s+)?"
    r"(?:(?:been\s+)?(?:have|had|having|experienc\w+|notic\w+|get|got|gotten)\s+)?(?:any\s+)?",
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
    r"(?<!\bthe)(?<!\bmy)(?<!\byour)(?<!\bhis)(?<!\bher)(?:,\s*|(?<!\s)\s+)"
    r"(?:right|correct|is that right|okay|ok)$",
    re.I,
)
_JOINT = r"(?:[\s,;/]|\b(?:and|or|nor|plus|also|um+|uh+|as well as)\b)"
#: What may stand between two items of a list.
_LIST_GAP = re.compile(rf"^{_JOINT}*$", re.I)
#: A list going on after its last concept: a comma or "and"/"or" then more words.
_LIST_JOIN = re.compile(rf"^\s*(?:,|\band\b|\bor\b){_JOINT}*", re.I)
_END = re.compile(r"^\s+")
#: A run of joints (and a closing mark) ending the text. The lookbehinds skip starts right after
#: a joint, which are never the leftmost start of the run: tried from each of them, a long run
#: was read again and again (quadratic).
_NOT_AFTER_JOINT = (
    r"(?<![\s,;/])(?<!\band)(?<!\bor)(?<!\bnor)(?<!\bplus)(?<!\balso)(?<!\bas well as)"
    r"(?<!\bum)(?<!\buh)(?<!\bumm)(?<!\buhh)"
)
_DANGLING = re.compile(rf"{_NOT_AFTER_JOINT}{_JOINT}+((?:[.!?;]\s*)?)$", re.I)
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
    #: "negative" for a denied question ("No fever."), "positive" for a confirmed one.
    polarity: str | None = None


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
    facts: list[Fact] = []
    for c in split_claims(segment_note(text)):
        facts += _facts_of(Fact(c.text, c.start, c.end, c.section), kb, "prose")
    return facts


def dialogue_facts(sentences: list[TranscriptSentence], kb: KnowledgeBase) -> list[Fact]:
    """Facts of a dialogue's sentences (module docstring)."""
    facts: list[Fact] = []
    for i, sentence in enumerate(sentences):
        if is_question(sentence.text):
            continue
        said = Fact(sentence.text, sentence.start, sentence.end)
        asked = _question_before(sentences, i)
        if asked is None:
            facts += _facts_of(said, kb, "turn")
            continue
        core = question_core(asked.text)
        reply = _YES_NO_OPENER.sub("", sentence.text, count=1).strip()
        own_words = len(content_tokens(reply))
        polarity = answer_polarity(sentence.text)
        span = (asked.start, sentence.end)
        if polarity == "negative":
            facts += _facts_of(Fact(f"No {core}.", *span, polarity="negative"), kb, "reply")
            if own_words >= SELF_CONTAINED:
                facts += _facts_of(said, kb, "reply")
        elif own_words >= SELF_CONTAINED or _names_more(reply, asked.text, kb):
            # "Yes, I fell four days ago." → "I fell 4 days ago."; "What about your bones?"
            # "I have osteoporosis too." → the reply alone: it names a finding of its own
            fact = Fact(reply, sentence.start, sentence.end, polarity=polarity)
            facts += _facts_of(fact, kb, "reply")
        elif polarity == "positive":
            tail = f": {reply}" if reply else ""
            facts += _facts_of(Fact(f"{core}{tail}", *span, polarity="positive"), kb, "reply")
        else:
            facts += _facts_of(Fact(f"{core}: {sentence.text}", *span), kb, "reply")
    return facts


def split_listed(text: str, kb: KnowledgeBase) -> list[str]:
    """A statement listing several clinical concepts ("no fever, chills, or weakness"), as one
    statement per listed item: the words before the list, the item, the words after it ("no
    fever", "no chills", "no weakness"). Items are clinical concepts of the knowledge base
    joined only by commas, "and", "or", fillers; words that continue the list after its last
    concept (", frequent flyer, history of surgeries") become one more statement. Applied
    again to each part; a statement without such a list is returned alone."""
    mentions = _clinical_mentions(text, kb)
    run = _first_list(text, mentions)
    if run is None:
        return [text]
    head, rest = text[: run[0].start], text[run[-1].end :]
    parts = [f"{head}{m.surface}" for m in run]
    if _LIST_GAP.match(rest) is None and _LIST_JOIN.match(rest):  # the list goes on
        more = _LIST_JOIN.sub("", rest, count=1)
        parts = [p + _END.sub("", rest[len(rest.rstrip(" .;!?")) :]) for p in parts]
        if content_tokens(more):
            parts.append(f"{head}{more}")
    else:
        parts = [p + rest for p in parts]
    out: list[str] = []
    for part in parts:
        out += split_listed(_tidy(part), kb)
    return out


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


def _facts_of(fact: Fact, kb: KnowledgeBase, kind: Literal["prose", "turn", "reply"]):
    """The fact cut at its listed concepts (:func:`split_listed`), each part
    weighed; every part keeps the span, section and polarity of the statement."""
    return [_weighed(replace(fact, text=part), kb, kind) for part in split_listed(fact.text, kb)]


def _clinical_mentions(text: str, kb: KnowledgeBase) -> list:
    return [m for m in kb.concepts_in(text) if set(m.kinds) & CLINICAL_KINDS]


def _names_more(reply: str, question: str, kb: KnowledgeBase) -> bool:
    """The reply names a clinical concept the question did not."""
    asked = {m.surface.lower() for m in _clinical_mentions(question, kb)}
    return any(m.surface.lower() not in asked for m in _clinical_mentions(reply, kb))


def _first_list(text: str, mentions: list) -> list | None:
    """The first run of at least two concept mentions separated only by list joints."""
    mentions = sorted(mentions, key=lambda m: (m.start, -m.end))
    run: list = []
    for m in mentions:
        if run and m.start < run[-1].end:
            continue  # overlaps the previous mention
        if run and _LIST_GAP.match(text[run[-1].end : m.start]):
            run.append(m)
            continue
        if len(run) >= 2:
            return run
        run = [m]
    return run if len(run) >= 2 else None


def _tidy(text: str) -> str:
    """A part without a dangling list joint at its end ("chest pain, or" → "chest pain")."""
    return _DANGLING.sub(lambda m: m.group(1), text).strip()


def _weighed(fact: Fact, kb: KnowledgeBase, kind: Literal["prose", "turn", "reply"]) -> Fact:
    """The fact with digits, its weight and its eligibility (module docstring)."""
    text = fact.text
    words = content_tokens(text)
    concepts = {m.surface.lower() for m in _clinical_mentions(text, kb)}
    quantities = extract_quantities(text)
    weight = 2.0 * len(concepts) + len(quantities) + 0.25 * min(len(words), 8)
    # unprompted talk (greetings, courtesy, remarks): only clinical content makes it a fact
    turn = kind == "turn"
    eligible = bool(concepts or quantities) if turn else len(words) >= 2 or bool(concepts)
    eligible = eligible or (kind == "prose" and is_blanket(text))
    return replace(fact, text=text, weight=weight, eligible=eligible)
