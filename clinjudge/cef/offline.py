"""The offline CEF backend: questions from atomic facts, answered by the SOAP judge's offline
verifier (SPEC §2 with SPEC §1's rules), so CEF runs with no API.

Generation: :func:`clinjudge.cef.questions.text_facts` then :func:`select_facts` (N facts of D,
N' of S), one YES-question per fact; the fact is the statement verified.

Answering a question "from a text T" = verifying its fact as a claim with T as the only
evidence, by ``OfflineVerifier("inference-aware", kb)`` (SPEC §1 five steps and safety floor):

    tier 1–3 (restated, paraphrased, inferable)             → YES
    tier 5   (contradicts T: negation, laterality, values)   → NO
    tier 4   (no basis in T, incl. an unmentioned drug/dose) → IDK

Both the question's fact and T first pass through
:func:`~clinjudge.cef.wording.normalise_wording` (spelled letters joined, "anemic" → "anemia").
T is parsed like a transcript (:func:`~clinjudge.text.transcript.parse_transcript`): a tagged
dialogue by turns, prose (a summary used as evidence) by paragraph or line, speaker "unknown";
each T is indexed once per run and shared by the self-check and the cross-examination asked of
it. The verifier's note is empty, so no other statement of the question's own text can support
it (the SOAP judge's cross-section support would otherwise answer from the wrong text).

A blanket negative of S ("None.", "Noncontributory.") is a question the verifier's word
comparison cannot answer; :mod:`clinjudge.cef.blanket` does: YES from an all-negative text or
from a dialogue that denied what it asked and confirmed nothing, else IDK.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

from clinjudge.cef import blanket
from clinjudge.cef.answers import Answer
from clinjudge.cef.questions import CLINICAL_KINDS, select_facts, text_facts, yes_question
from clinjudge.cef.result import ID_PREFIX, AnswerRecord, CefQuestion, Side
from clinjudge.cef.wording import normalise_wording
from clinjudge.grounding.note_input import NoteInput
from clinjudge.judges.offline import OfflineConfig, OfflineVerifier
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.transcript import parse_transcript
from clinjudge.types import Claim, Verdict

#: Evidence texts kept indexed (a pair's two texts, with room for concurrent items).
_KEEP = 16


def answer_from_verdict(verdict: Verdict) -> Answer:
    """tier 1–3 → YES, tier 5 → NO, tier 4 → IDK (module docstring)."""
    if verdict.supported:
        return "YES"
    return "NO" if verdict.tier == 5 else "IDK"


class OfflineCef:
    """Generates fact questions and answers them with the offline verifier."""

    name = "offline"
    #: Questions answered per verifier pass (one pass per side: no model calls to save).
    batch_size = 1_000

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        # rules only: the combiner was fitted on note sentences judged against their visit, and
        # CEF also asks a dialogue's facts of a summary
        self.verifier = OfflineVerifier("inference-aware", kb, OfflineConfig(combiner=False))
        self._evidence: OrderedDict[str, NoteInput] = OrderedDict()
        self._negative: OrderedDict[str, bool] = OrderedDict()

    async def generate(
        self, side: Side, texts: Mapping[Side, str], n: int
    ) -> tuple[list[CefQuestion], list]:
        """Up to ``n`` questions from the facts of ``texts[side]``; no failures are possible."""
        facts = select_facts(text_facts(texts[side], self.kb), n)
        questions = [
            CefQuestion(
                id=f"{ID_PREFIX[side]}{i}",
                side=side,
                question=yes_question(f),
                fact=f.text,
                span=[f.start, f.end],
                section=f.section,
                label="YES",
            )
            for i, f in enumerate(facts, start=1)
        ]
        return questions, []

    async def answer(
        self, questions: list[CefQuestion], side: Side, texts: Mapping[Side, str]
    ) -> list[AnswerRecord]:
        """Each question's answer from ``texts[side]`` alone."""
        if not questions:
            return []
        text = texts[side]
        claims = [
            Claim(
                id=q.id,
                text=normalise_wording(q.fact, self.kb),
                section=q.section,  # type: ignore[arg-type]
                start=q.span[0] if q.span else 0,
                end=q.span[1] if q.span else len(q.fact),
            )
            for q in questions
        ]
        outcomes = await self.verifier.verify(claims, self._evidence_input(text))
        records = []
        for q, outcome in zip(questions, outcomes, strict=True):
            assert isinstance(outcome, Verdict)  # the offline verifier only returns verdicts
            answer: Answer = answer_from_verdict(outcome)
            detail = f"tier {outcome.tier}: {outcome.rationale}"
            if blanket.is_blanket(q.fact):
                answer = "YES" if self._all_negative(text) else "IDK"
                detail = f"blanket negative; the text {'is' if answer == 'YES' else 'is not'} "
                detail += "all negative"
            records.append(AnswerRecord(id=q.id, answer=answer, detail=detail))
        return records

    def _all_negative(self, text: str) -> bool:
        """Prose: blanket negatives and denials only; a dialogue: denied questions and no
        confirmed one (:mod:`clinjudge.cef.blanket`). Cached per text."""
        if text not in self._negative:
            if parse_transcript(text).format == "plain":
                value = blanket.all_negative(text, self.kb, CLINICAL_KINDS)
            else:
                polarities = [f.polarity for f in text_facts(text, self.kb)]
                value = blanket.dialogue_denies_all(polarities)
            self._negative[text] = value
            while len(self._negative) > _KEEP:
                self._negative.popitem(last=False)
        return self._negative[text]

    def _evidence_input(self, text: str) -> NoteInput:
        if text in self._evidence:
            self._evidence.move_to_end(text)
            return self._evidence[text]
        evidence = NoteInput(normalise_wording(text, self.kb), "")
        self._evidence[text] = evidence
        while len(self._evidence) > _KEEP:
            self._evidence.popitem(last=False)
        return evidence
