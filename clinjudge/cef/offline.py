"""The offline CEF backend: questions from atomic facts, answered by the SOAP judge's offline
verifier (SPEC §2 with SPEC §1's rules), so CEF runs with no API.

Generation: :func:`clinjudge.cef.questions.text_facts` then :func:`select_facts` (N facts of D,
N' of S), one YES-question per fact; the fact is the statement verified.

Answering a question "from a text T" = verifying its fact as a claim with T as the only
evidence, by ``OfflineVerifier("inference-aware", kb)`` (SPEC §1 five steps and safety floor):

    tier 1–3 (restated, paraphrased, inferable)             → YES
    tier 5   (contradicts T: negation, laterality, values)   → NO
    tier 4   (no basis in T, incl. an unmentioned drug/dose) → IDK

T is parsed like a transcript (:func:`~clinjudge.text.transcript.parse_transcript`): a tagged
dialogue by turns, prose (a summary used as evidence) by paragraph or line, speaker "unknown";
each T is indexed once per run and shared by the self-check and the cross-examination asked of
it. The verifier's note is empty, so no other statement of the question's own text can support
it (the SOAP judge's cross-section support would otherwise answer from the wrong text).
"""

from __future__ import annotations

from collections import OrderedDict

from clinjudge.cef.answers import Answer
from clinjudge.cef.questions import select_facts, text_facts, yes_question
from clinjudge.cef.result import ID_PREFIX, AnswerRecord, CefQuestion, Side
from clinjudge.judges.base import NoteInput
from clinjudge.judges.offline import OfflineVerifier
from clinjudge.knowledge.base import KnowledgeBase
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
        self.verifier = OfflineVerifier("inference-aware", kb)
        self._evidence: OrderedDict[str, NoteInput] = OrderedDict()

    async def generate(self, side: Side, text: str, n: int) -> tuple[list[CefQuestion], list]:
        """Up to ``n`` questions from the facts of ``text``; no failures are possible."""
        facts = select_facts(text_facts(text, self.kb), n)
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

    async def answer(self, questions: list[CefQuestion], text: str) -> list[AnswerRecord]:
        """Each question's answer from ``text`` alone."""
        if not questions:
            return []
        claims = [
            Claim(
                id=q.id,
                text=q.fact,
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
            records.append(
                AnswerRecord(
                    id=q.id,
                    answer=answer_from_verdict(outcome),
                    detail=f"tier {outcome.tier}: {outcome.rationale}",
                )
            )
        return records

    def _evidence_input(self, text: str) -> NoteInput:
        if text in self._evidence:
            self._evidence.move_to_end(text)
            return self._evidence[text]
        evidence = NoteInput(text, "")
        self._evidence[text] = evidence
        while len(self._evidence) > _KEEP:
            self._evidence.popitem(last=False)
        return evidence
