"""The LLM CEF backend: one structured call generates a side's questions, one call answers a
batch of questions from one text (SPEC §2), all through :class:`~clinjudge.llm.StructuredCaller`.

Replies are read strictly:
- a generated question keeps the generator's own label; unless that label parses as YES
  (:func:`~clinjudge.cef.answers.parse_answer`) the question is ``dropped_label`` and never
  asked (the reference code let such questions into the exam, SPEC §2 pitfalls); its quote is
  anchored in its text (verbatim, case-insensitive, then fuzzy —
  :func:`clinjudge.grounding.quotes.locate_quote`), so each question knows its span;
- answers are declared as an enum (YES/NO/IDK) in the JSON schema sent to the server, and the
  value the model wrote is read by the first-token parser: an answer that does not open with
  YES/NO/IDK, or a question the reply skips, is a parse failure for that question alone; a
  reply that is not JSON at all (after StructuredCaller's re-ask) fails the whole batch.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from clinjudge.cef.answers import ANSWERS, parse_answer
from clinjudge.cef.result import ID_PREFIX, AnswerRecord, CefQuestion, Side
from clinjudge.grounding.quotes import locate_quote
from clinjudge.llm import StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.types import CallError, ParseFailure

GENERATE_PROMPT = "cef.generate_questions"
ANSWER_PROMPT = "cef.answer_questions"
#: What the generator is told each text is.
KIND: dict[Side, str] = {
    "source": "source text (for example a doctor–patient conversation or a clinical document)",
    "summary": "generated text (a summary or clinical note written from a source)",
}
_ENUM = {"enum": list(ANSWERS)}


class GeneratedQuestion(BaseModel):
    question: str
    answer: str = Field(json_schema_extra=_ENUM)
    quote: str = ""


class GeneratedQuestions(BaseModel):
    questions: list[GeneratedQuestion]


class AnswerItem(BaseModel):
    id: str
    answer: str = Field(json_schema_extra=_ENUM)


class AnswerBatch(BaseModel):
    answers: list[AnswerItem]


#: The detail of the answers of a reply that could not be parsed at all (a retry asks again).
REPLY_NOT_PARSED = "reply not parsed"


class LLMCef:
    """Generates and answers CEF questions with a chat model."""

    name = "llm"
    #: Questions per cross-examination call.
    batch_size = 10

    def __init__(self, caller: StructuredCaller, generate: Prompt, answer: Prompt) -> None:
        self.caller = caller
        self.generate_prompt = generate
        self.answer_prompt = answer

    async def generate(self, side: Side, text: str, n: int) -> tuple[list[CefQuestion], list[dict]]:
        """The first ``n`` questions the model writes about ``text``, and the failure of the
        call if it failed (then no question)."""
        variables = {"kind": KIND[side], "n": n, "text": text}
        result = await self.caller.call(
            self.generate_prompt, variables, GeneratedQuestions, key=f"generate:{side}"
        )
        if not isinstance(result, GeneratedQuestions):
            return [], [_failure("generate", side, result)]
        questions = []
        for i, item in enumerate(result.questions[:n], start=1):
            label = parse_answer(item.answer)
            found = locate_quote(text, item.quote) if item.quote.strip() else None
            span = [found.start, found.end] if found is not None and found.start >= 0 else None
            dropped = label != "YES" or not item.question.strip()
            questions.append(
                CefQuestion(
                    id=f"{ID_PREFIX[side]}{i}",
                    side=side,
                    question=item.question.strip(),
                    fact=item.quote.strip(),
                    span=span,
                    label=item.answer,
                    status="dropped_label" if dropped else "asked",
                    detail=f"generator labelled it {item.answer!r}" if dropped else "",
                )
            )
        return questions, []

    async def answer(self, questions: list[CefQuestion], text: str) -> list[AnswerRecord]:
        """One call: every question's answer from ``text`` alone."""
        if not questions:
            return []
        payload = [{"id": q.id, "question": q.question} for q in questions]
        variables = {"text": text, "questions": json.dumps(payload, ensure_ascii=False, indent=1)}
        result = await self.caller.call(
            self.answer_prompt, variables, AnswerBatch, key=questions[0].id
        )
        if not isinstance(result, AnswerBatch):
            kind = "error" if isinstance(result, CallError) else "parse_failure"
            detail = result.reason if kind == "error" else f"{REPLY_NOT_PARSED}: {result.reason}"
            return [AnswerRecord(id=q.id, kind=kind, detail=detail) for q in questions]
        given: dict[str, str] = {}
        for item in result.answers:
            given.setdefault(item.id.strip(), item.answer)
        records = []
        for q in questions:
            raw = given.get(q.id)
            answer = parse_answer(raw)
            if raw is None:
                records.append(AnswerRecord(id=q.id, kind="parse_failure", detail="not answered"))
            elif answer is None:
                detail = f"unreadable answer {raw[:200]!r}"
                records.append(AnswerRecord(id=q.id, kind="parse_failure", detail=detail))
            else:
                records.append(AnswerRecord(id=q.id, answer=answer, detail=raw[:200]))
        return records


def _failure(stage: str, side: Side, outcome: ParseFailure | CallError) -> dict:
    return {"stage": stage, "side": side, "kind": outcome.kind, "reason": outcome.reason}
