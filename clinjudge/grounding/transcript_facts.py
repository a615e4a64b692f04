"""What the offline verifier knows about a transcript, computed once per note.

For every transcript sentence: its content tokens, the knowledge concepts it mentions and
whether each is asserted or denied, its quantities (dose, frequency, duration, vitals) and its
laterality mentions. Assertion follows the sentence's own negation cues and, for a doctor's
question, the patient's answer in the next turn ("any chest pain ?" / "no .").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from rapidfuzz.distance import Levenshtein

from clinjudge.grounding.corrections import VisitCorrections, read_corrections
from clinjudge.grounding.evidence import SentenceIndex, Unit, transcript_index
from clinjudge.grounding.exam_systems import voiced_systems
from clinjudge.grounding.plan_items import voiced_plan_kinds
from clinjudge.grounding.visit_reading import VisitReading
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.knowledge.concept import FINDING_KINDS
from clinjudge.text.laterality import Laterality, laterality_mentions
from clinjudge.text.negation import answer_polarity as reply_polarity
from clinjudge.text.negation import is_negated
from clinjudge.text.normalize import content_token_spans, content_tokens, stem
from clinjudge.text.numbers import format_number, leading_decimals, spoken_numbers
from clinjudge.text.quantities import Quantity, extract_quantities
from clinjudge.text.times import Time, read_times
from clinjudge.types import Transcript

_WORD = re.compile(r"[a-z]+")


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
    compounds: set[str] = field(default_factory=set)  # "air cast", "pre-diabetes" written whole
    numbers: set[str] = field(default_factory=set)  # every value said, ASR decimals read whole
    voiced: set[str] = field(default_factory=set)  # body systems examined aloud (judges.exam)
    plans: set[str] = field(default_factory=set)  # plan kinds talked about (judges.plan_items)
    #: Short words the abbreviation lists know, as speech recognition writes them ("pt").
    abbreviations: set[str] = field(default_factory=set)
    _spelled: dict[str, bool] = field(default_factory=dict, repr=False)
    #: Who said what, by voice (:mod:`clinjudge.grounding.visit_reading`).
    reading: VisitReading | None = field(default=None, repr=False)
    #: What the visit says and later takes back (:mod:`clinjudge.grounding.corrections`).
    corrections: VisitCorrections = field(default_factory=VisitCorrections, repr=False)
    _times: list[tuple[Unit, Time]] | None = field(default=None, repr=False)

    def times(self) -> list[tuple[Unit, Time]]:
        """Every time the visit gives (:func:`clinjudge.text.times.read_times`) with its
        sentence, read once per visit, when a claim first asks."""
        if self._times is None:
            self._times = [(u, t) for u in self.index.units for t in read_times(u.text)]
        return self._times

    def phrase_said(self, phrases: list[str]) -> bool:
        """Whether one transcript sentence holds every content word of one of these phrases,
        in any order and with other words between ("any blood in your stool ?" says "blood in
        stool")."""
        for phrase in phrases:
            words = frozenset(content_tokens(phrase))
            if words and any(words <= u.tokens for u in self.index.units):
                return True
        return False

    def says(self, token: str) -> bool:
        """Whether the transcript has this content token (a normalised stem): as a word, as
        two adjacent words written in one ("air cast" for "Aircast", "pre-diabetes" for
        "prediabetes"), or — for
        stems of six letters or more — misspelled the way speech recognition spells drug names
        ("asprin" for aspirin, "lucentes" for Lucentis, "ranititine"): one edit, same first
        letter. Two edits would let "hypotension" pass for "hypertension"."""
        if token in self.tokens or token in self.compounds:
            return True
        if len(token) < 6 or token[:1].isdigit():
            return False
        if token not in self._spelled:
            self._spelled[token] = any(
                t[:1] == token[:1] and Levenshtein.distance(t, token, score_cutoff=1) <= 1
                for t in self.tokens
                if abs(len(t) - len(token)) <= 1
            )
        return self._spelled[token]

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


def asked_from(unit: Unit) -> int:
    """Where the question of a sentence begins: its last question opener ("any", "do you" …)
    when a statement comes first, else 0 (the whole sentence asks)."""
    starts = [m.start() for m in _ASKS.finditer(unit.text)]
    return starts[-1] if starts and not _QUESTION_CUE.search(unit.text) else 0


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


_ASSERTS = re.compile(
    r"\b(?:have|has|had|is|are|was|were|got|get|feel|felt|see|saw|hear|heard|appreciate|show|"
    r"shows|showed|noticed|reports?|denies)\b",
    re.I,
)


def is_checklist(unit: Unit, found: list[ConceptMention]) -> bool:
    """A clinician's sentence that only lists two symptoms or more, with no verb ("chest pain ,
    shortness of breath , belly pain-"): a review-of-systems question whose "?" the
    transcription dropped, not a statement that the patient has them. (Exam findings listed
    by a dictating clinician — "range of motion , flexion" — are not questions.)"""
    findings = [m for m in found if m.kinds & {"symptom", "disease"}]
    if unit.speaker != "doctor" or len(findings) < 2 or _ASSERTS.search(unit.text):
        return False
    words = content_token_spans(unit.text)
    return bool(words) and all(any(m.start <= s and e <= m.end for m in found) for _, s, e in words)


def is_asked_fragment(units: list[Unit], i: int, found: list[ConceptMention]) -> bool:
    """A clinician's verbless fragment naming findings inside a turn that asks ("blood in your
    stool ." as the turn; "weight loss . anything like that ?"): the transcription cut the
    question, so the reply to the turn answers it. Only its own turn's last sentence, or a
    fragment followed in the same turn by a question."""
    unit = units[i]
    if unit.speaker != "doctor" or _ASSERTS.search(unit.text):
        return False
    if not any("symptom" in m.kinds for m in found):  # "pneumonia ." is a diagnosis told
        return False
    words = content_token_spans(unit.text)
    if not words or not all(any(m.start <= s and e <= m.end for m in found) for _, s, e in words):
        return False
    rest = [u for u in units[i + 1 : i + 4] if u.turn == unit.turn]
    following = units[i + 1 + len(rest)] if i + 1 + len(rest) < len(units) else None
    if following is None or following.speaker == "doctor":
        return False
    if any(u.text.rstrip().endswith("?") for u in rest):
        return True
    # the turn ends on the fragment: only a bare answer ("no .", "yes") makes it a question
    return not rest and len(following.text.split()) <= 3


def answer_polarity(unit: Unit, following: Unit | None) -> bool | None:
    """For a question, whether the next speaker's reply denies (True) or affirms (False) it."""
    if following is None or following.turn == unit.turn:
        return None
    polarity = reply_polarity(following.text)
    return None if polarity is None else polarity == "negative"


def question_status(
    found: list[ConceptMention],
    answer: bool | None,
    asked_from: int = 0,
    reply_names: frozenset[str] = frozenset(),
) -> list[ConceptMention]:
    """Mentions of a question take the status of the answer, for the findings asked about: a
    "no" to "any fever or chills?" denies both; a "yes" affirms what the reply names of the
    question's concepts (``reply_names``: canonical ids the reply mentions — "no shortness of
    breath or coughing?" "i've been coughing" affirms the cough and says nothing of the breath),
    or else a single finding asked about alone (a yes to a list is ambiguous). A question about
    a drug ("have you taken anything for the pain?") is about the drug, so its answer settles no
    finding; everything else is unknown (``None``). Mentions before offset ``asked_from``
    belong to a statement the sentence opened with ("you have normal range of motion so that's
    good any pain down your legs") and keep their own status."""
    stated = [m for m in found if m.end <= asked_from]
    found = [m for m in found if m.end > asked_from]
    asked = [m for m in found if m.kinds & (FINDING_KINDS | {"lay_term"})]
    named = {id(m) for m in asked if reply_names & set(m.canonical)}
    about_drug = any("drug" in m.kinds for m in found)
    updated = list(stated)
    for m in found:
        flag: bool | None = None
        if m.kinds & FINDING_KINDS and not about_drug:
            if answer is True:
                flag = True
            elif answer is False and (id(m) in named if named else len(asked) == 1):
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
    compounds: set[str] = set()
    said = [concept_mentions(kb, unit.text) for unit in units]
    for i, unit in enumerate(units):
        found = said[i]
        following = units[i + 1] if i + 1 < len(units) else None
        if found and (is_question(unit, following) or is_checklist(unit, found)):
            found = question_status(
                found,
                answer_polarity(unit, following),
                asked_from(unit),
                _names(said[i + 1]) if following is not None else frozenset(),
            )
        elif found and is_asked_fragment(units, i, found):
            at = next(
                (j for j in range(i + 1, min(i + 6, len(units))) if units[j].turn != unit.turn),
                None,
            )
            reply = units[at] if at is not None else None
            found = question_status(
                found,
                answer_polarity(unit, reply),
                reply_names=_names(said[at]) if at is not None else frozenset(),
            )
        for m in found:
            for cid in m.canonical:
                status.setdefault(cid, set()).add(m.negated)
        mentions.append(found)
        tokens |= unit.tokens
        words = _WORD.findall(unit.text.lower())
        compounds |= {stem(a + b) for a, b in zip(words, words[1:], strict=False)}
    return TranscriptFacts(
        index=index,
        mentions=mentions,
        quantities=[extract_quantities(u.text) for u in units],
        lateralities=[laterality_mentions(u.text) for u in units],
        status=status,
        tokens=tokens,
        compounds=compounds,
        numbers=spoken_values(transcript),
        voiced=voiced_systems(u.text for u in units),
        plans=voiced_plan_kinds(u.text for u in units),
        abbreviations=spoken_abbreviations(units, kb),
        reading=VisitReading(transcript),
        corrections=read_corrections(transcript, kb),
    )


def _names(mentions: list[ConceptMention]) -> frozenset[str]:
    """The canonical ids a reply affirms (its non-negated mentions)."""
    return frozenset(c for m in mentions if m.negated is not True for c in m.canonical)


_SHORT_WORD = re.compile(r"\b[a-z]{2,4}\b")


def spoken_abbreviations(units: list[Unit], kb: KnowledgeBase) -> set[str]:
    """The transcript's words of two to four letters that name an abbreviation ("keep doing
    your pt"); which sense a word has is left to the reader of a claim."""
    words = {w for u in units for w in _SHORT_WORD.findall(u.text.lower())}
    return {w for w in words if any(c.kind == "abbreviation" for c in kb.lookup(w))}


def spoken_values(transcript: Transcript) -> set[str]:
    """Every number of the transcript's turns as the normaliser writes it, reading ASR decimals
    whole: "ninety eight . six" is 98.6 (:func:`spoken_numbers`, turn by turn, since a sentence
    splitter cuts at that full stop) and "cup to disc is . two" is 0.2."""
    values: set[str] = set()
    for turn in transcript.turns:
        text = turn.text.lower()
        values |= {format_number(v) for _, _, v in spoken_numbers(text)}
        values |= {format_number(v) for v in leading_decimals(text)}
    return values
