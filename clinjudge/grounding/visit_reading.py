"""Who said what in a visit: each speaker's talk cut into stretches by the voice it is in.

A note made of the visit's own words can still be wrong about *who* said them: a clinician's
finding, assessment or advice reported as the patient's own statement or belief ("He believes
that his symptoms are related to carpal tunnel syndrome" — the doctor's diagnosis). Word
overlap cannot see that; the transcript can, because it says who speaks each turn and which
turn answers which question. This module reads a transcript once into **stretches**, each a
span of one turn in one voice:

``patient``   a turn of the patient (or of a companion — ``other`` in ACI-Bench's tags);
``asked``     a question of the clinician's: a sentence ending in ``?``, or, in a transcript
              without punctuation, from a question's opening words ("are you still taking",
              "have you been able to") on; ``answered`` when the patient's next turn opens
              with a yes (:func:`clinjudge.text.negation.answer_polarity`);
``own``       the clinician's own voice, from a cue of it to the end of its sentence (at most
              :data:`STRETCH_CHARS` characters): a finding ("i do hear a slight murmur", "on
              exam" — and, in punctuated talk, the sentences after it in the same turn until a
              question: an examination dictated sentence by sentence), an assessment ("i
              think", "it looks like", "my impression"), advice or a plan ("i want you to",
              "we'll", "let's", "you should"), praise ("you're doing a great job");
``relayed``   the rest of the clinician's talk: the history dictated for the note ("alexander
              is a 62-year-old male … who presents for follow-up"), the chart read aloud, small
              words between.

The **patient's side** of the visit (:meth:`VisitReading.patient_side`) is the patient's
stretches, the relayed ones and the questions the patient answered yes — what a note may
fairly present as the patient's report. The cues are forms of speech (person, modal and
reporting verbs), not topics, so the reading does not depend on the visits it was written on;
the checks that use it (:mod:`clinjudge.judges.attribution`) flag only when a claim's words
sit in the clinician's own voice *and not* on the patient's side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

from clinjudge.text.negation import answer_polarity
from clinjudge.text.normalize import content_tokens
from clinjudge.text.sentences import split_sentences
from clinjudge.types import Transcript

Voice = Literal["patient", "asked", "own", "relayed"]

#: Longest stretch a cue opens (characters), so that a run-on turn without punctuation is not
#: all one voice.
STRETCH_CHARS = 160

#: Cues of a finding: an examination dictated or spoken. The sentences after one, in the same
#: turn, stay in the clinician's own voice until a question (the exam goes on: "there is
#: tenderness over the shoulder. range of motion is decreased.").
_FINDING_CUES = [
    r"\bi (?:do |can |could )?(?:hear|feel|notice|appreciate)\b",
    r"\bi (?:do |can )?see (?:a|an|some|no|any|mild|slight|little)\b",
    r"\bi(?:'m| am) seeing\b",
    r"\bon (?:your |the )?(?:physical )?exam(?:ination)?\b",
    r"\bexam(?:ination)? (?:of [a-z ]{1,40})?(?:shows|showed|reveals|revealed|is)\b",
]
_FINDING = re.compile("|".join(f"(?:{c})" for c in _FINDING_CUES), re.I)
_OWN_CUES = [
    *_FINDING_CUES,
    # an assessment
    r"\bi (?:think|believe|suspect|feel like|would say|'d say)\b",
    # "it sounds like you were able to …" reflects the patient's account back: not an opinion
    r"\bit (?:sounds|looks|seems) like\b(?! you(?:'ve| have)? (?:were|was|had|been|did|went|got"
    r"|felt|tried|noticed|started)\b)",
    r"\bmy (?:impression|assessment|diagnosis|concern)\b",
    r"\b(?:suggests?|indicates?|points? to|(?:is|are) consistent with)\b",
    r"\bi(?:'m| am) (?:concerned|worried)\b",
    r"\b(?:this|that|it)(?: is|'s| could be| may be| might be) (?:likely|probably|most likely"
    r"|consistent with)\b",
    # advice or a plan
    r"\bi(?:'d| would)? (?:really )?(?:want|like) (?:you|to|for)\b",
    r"\bi (?:recommend|suggest|advise|'m going to|'m gon na|am going to|will|'ll)\b",
    r"\bwe(?:'re| are)? (?:going to|gon na|will|'ll|can|should|need to)\b",
    r"\blet's\b",
    r"\byou (?:should|need to|have to|must|might want to)\b",
    r"\b(?:make sure|be sure to|try to|go ahead and|keep up with)\b",
    r"\b(?:it's|it is) (?:really |very |so )?(?:important|crucial|essential)\b",
    # praise
    r"\byou(?:'re| are) doing (?:a |really |very |so )*(?:great|good|well|fine|excellent)\b",
    r"\b(?:good|great) job\b",
]
_OWN = re.compile("|".join(f"(?:{c})" for c in _OWN_CUES), re.I)
#: The opening words of a question, for turns without punctuation.
_QUESTION = re.compile(
    r"\b(?:(?:do|does|did|are|were|have|has|had|can|could|would|will) you"
    r"|(?:is|are|was|were) (?:it|there|that|your)|(?:do|does|did|have|has) (?:it|your|that)"
    r"|any(?:thing)? (?:else|other|new|changes?)|how (?:are|is|do|does|did|long|often|much|many"
    r"|about)|what (?:about|kind|type|do you|does it|brings?))\b",
    re.I,
)
_PUNCTUATED = re.compile(r"[.?!]")
#: A speaker taking back what was just said: "actually it's the left", "sorry, i mean four".
_CORRECTION = re.compile(
    r"\b(?:actually|i mean|i meant|sorry|no wait|wait|correction|i misspoke|rather|"
    r"not (?:the )?(?:left|right)|scratch that)\b",
    re.I,
)


def corrects(text: str) -> bool:
    """Whether a sentence carries a cue of a speaker correcting what was said before
    ("actually it's my left elbow", "sorry, i mean four and a half months"): what it says
    supersedes the earlier statement of the same fact."""
    return bool(_CORRECTION.search(text))


@dataclass(frozen=True)
class Stretch:
    """A span of one turn in one voice (module docstring); offsets index the transcript."""

    turn: int
    speaker: str
    voice: Voice
    start: int
    end: int
    text: str
    tokens: frozenset[str]
    answered: bool = False


def _stretch(tr: Transcript, turn: int, speaker: str, voice: Voice, a: int, b: int) -> Stretch:
    text = tr.text[a:b]
    return Stretch(turn, speaker, voice, a, b, text, frozenset(content_tokens(text)))


def _clinician_stretches(tr: Transcript, turn_index: int) -> list[Stretch]:
    """A clinician's turn cut into asked, own and relayed stretches (module docstring)."""
    turn = tr.turns[turn_index]
    text = tr.text
    punctuated = bool(_PUNCTUATED.search(turn.text))
    out: list[Stretch] = []
    examining = False  # a finding cue earlier in this turn: the exam goes on
    for sentence in split_sentences(text, turn.start, turn.end):
        a, b = sentence.start, sentence.end
        if punctuated and sentence.text.rstrip().endswith("?"):
            out.append(_stretch(tr, turn_index, turn.speaker, "asked", a, b))
            examining = False
            continue
        cues = [(m.start() + a, "own") for m in _OWN.finditer(sentence.text)]
        if not punctuated:
            cues += [(m.start() + a, "asked") for m in _QUESTION.finditer(sentence.text)]
        cues.sort()
        if punctuated and examining and not cues:
            cues = [(a, "own")]
        examining = punctuated and (examining or bool(_FINDING.search(sentence.text)))
        position = a
        for k, (start, voice) in enumerate(cues):
            if start < position:
                continue
            if start > position:
                out.append(_stretch(tr, turn_index, turn.speaker, "relayed", position, start))
            following = cues[k + 1][0] if k + 1 < len(cues) else b
            # an own stretch runs to the end of its sentence; in run-on talk, to the next cue
            stop = min(b, start + STRETCH_CHARS)
            if not punctuated or voice == "asked":
                stop = min(stop, max(following, start + 1))
            out.append(_stretch(tr, turn_index, turn.speaker, voice, start, stop))  # type: ignore[arg-type]
            position = stop
        if position < b:
            out.append(_stretch(tr, turn_index, turn.speaker, "relayed", position, b))
    return out


class VisitReading:
    """The stretches of a transcript, in order (module docstring)."""

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        stretches: list[Stretch] = []
        for i, turn in enumerate(transcript.turns):
            if turn.speaker == "doctor":
                stretches.extend(_clinician_stretches(transcript, i))
            else:
                stretches.append(
                    _stretch(transcript, i, turn.speaker, "patient", turn.start, turn.end)
                )
        self.stretches = _mark_answered(transcript, stretches)

    @cached_property
    def tagged(self) -> bool:
        """Whether the transcript names its speakers (nothing here applies otherwise)."""
        speakers = {t.speaker for t in self.transcript.turns}
        return "doctor" in speakers and "patient" in speakers

    @cached_property
    def patient_side(self) -> list[frozenset[str]]:
        """The content words of each turn's patient-side stretches (module docstring), one set
        per turn that has any."""
        by_turn: dict[int, set[str]] = {}
        for s in self.stretches:
            if s.voice in ("patient", "relayed") or (s.voice == "asked" and s.answered):
                by_turn.setdefault(s.turn, set()).update(s.tokens)
        return [frozenset(words) for words in by_turn.values()]

    @cached_property
    def patient_words(self) -> frozenset[str]:
        """Every content word on the patient's side of the visit."""
        return frozenset().union(*self.patient_side) if self.patient_side else frozenset()

    @cached_property
    def clinician_own(self) -> list[list[Stretch]]:
        """The clinician's own-voice stretches, grouped by turn."""
        by_turn: dict[int, list[Stretch]] = {}
        for s in self.stretches:
            if s.voice == "own":
                by_turn.setdefault(s.turn, []).append(s)
        return list(by_turn.values())


def _mark_answered(tr: Transcript, stretches: list[Stretch]) -> list[Stretch]:
    """The questions a patient's yes answers, marked ``answered``: in the clinician's turn
    just before a patient turn that opens with a yes, the last question, and the questions
    asked together with it (no stretch of another voice between)."""
    yes = {
        t.index - 1
        for t in tr.turns
        if t.speaker == "patient" and t.index > 0 and answer_polarity(t.text) == "positive"
    }
    out = list(stretches)
    for turn in yes:
        asked = [i for i, s in enumerate(out) if s.turn == turn and s.voice == "asked"]
        for k, i in enumerate(reversed(asked)):
            if k and any(out[j].voice == "own" for j in range(i + 1, asked[len(asked) - k])):
                break
            out[i] = replace(out[i], answered=True)
    return out
