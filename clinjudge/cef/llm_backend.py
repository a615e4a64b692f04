"""The LLM CEF backend: one structured call generates a side's questions, one call answers a
batch of questions from one text (SPEC §2), all through :class:`~clinjudge.llm.StructuredCaller`.

Two prompt layouts (:data:`LAYOUTS`, issue 38):
- ``shared`` (``--option cef.layout=shared``): every call about one item opens with
  the same bytes -- one instruction block for both tasks (writing questions, answering them)
  and both replies' shapes, then text A (the source) and text B (the generated text) -- and
  ends with what differs: the task, the text it names ("from text B alone"), the n or the
  questions. A server that keeps the previous request's prefix (llama.cpp) or caches prefixes
  (vLLM, Ollama, hosted APIs) reads the two texts once an item. The other text is in view when
  answering: the prompt says a fact only the other text states is IDK (SPEC §2: an answer
  comes from one text alone), but a small model does not always keep to it
  (:data:`DEFAULT_LAYOUT`);
- ``focused`` (the default): each call shows only the text it is about
  (``cef.generate_questions``, ``cef.answer_questions``), the prompts of before issue 38,
  byte for byte.

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
from collections.abc import Mapping

from pydantic import BaseModel, Field

from clinjudge.cef.answers import ANSWERS, parse_answer
from clinjudge.cef.result import ID_PREFIX, OTHER, SIDES, AnswerRecord, CefQuestion, Side
from clinjudge.grounding.quotes import locate_quote
from clinjudge.llm import StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.text.sentences import split_sentences
from clinjudge.types import CallError, ParseFailure

GENERATE_PROMPT = "cef.generate_questions"
ANSWER_PROMPT = "cef.answer_questions"
#: Layout → (generation prompt, answer prompt) (module docstring).
LAYOUTS: dict[str, tuple[str, str]] = {
    "shared": ("cef.shared_generate", "cef.shared_answer"),
    "focused": (GENERATE_PROMPT, ANSWER_PROMPT),
}
#: The layout when none is asked for. ``focused``: SPEC §2 answers a question from one text
#: alone, and with both texts in view the local Qwen2.5-Coder-1.5B did not (``bench_cef.py
#: --model-answers``, the first 16 MTS-Dialog summaries: of the 4 source questions the focused
#: layout found omitted from the summary, IDK, the shared one answered 3 YES and 1 NO -- the
#: omissions CEF's coverage measures were lost; docs/benchmarks.md, "CEF's prompt layouts").
#: ``shared`` sends about twice the tokens, so on a hosted API that bills cached tokens at half
#: price it costs ~12% more; it pays on a server that reuses prefixes for free (llama.cpp,
#: vLLM: 2.3x fewer tokens read an item), once its model is checked for that leak
#: (``bench_cef.py --compare``).
DEFAULT_LAYOUT = "focused"
#: How the shared layout names each text.
NAME: dict[Side, str] = {"source": "A", "summary": "B"}
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


#: The words of a text's sentence a stand-in question quotes (:func:`stand_in_questions`).
STAND_IN_WORDS = 16

#: The detail of the answers of a reply that could not be parsed at all (a retry asks again).
REPLY_NOT_PARSED = "reply not parsed"


class LLMCef:
    """Generates and answers CEF questions with a chat model."""

    name = "llm"
    #: Questions per cross-examination call.
    batch_size = 10

    def __init__(
        self,
        caller: StructuredCaller,
        generate: Prompt,
        answer: Prompt,
        layout: str = DEFAULT_LAYOUT,
    ) -> None:
        self.caller = caller
        self.generate_prompt = generate
        self.answer_prompt = answer
        self.layout = layout

    async def generate(
        self, side: Side, texts: Mapping[Side, str], n: int
    ) -> tuple[list[CefQuestion], list[dict]]:
        """The first ``n`` questions the model writes about ``texts[side]``, and the failure of
        the call if it failed (then no question)."""
        text = texts[side]
        variables = {**_variables(side, texts), "kind": KIND[side], "n": n}
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

    async def answer(
        self, questions: list[CefQuestion], side: Side, texts: Mapping[Side, str]
    ) -> list[AnswerRecord]:
        """One call: every question's answer from ``texts[side]`` alone."""
        if not questions:
            return []
        result = await self.caller.call(
            self.answer_prompt,
            self._answer_variables(questions, side, texts),
            AnswerBatch,
            key=questions[0].id,
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

    def planned(self, texts: Mapping[Side, str], counts: Mapping[Side, int]) -> list[str]:
        """The prompts an item costs at most, built as :meth:`generate` and :meth:`answer` build
        them, with no call: ``2 + 2 + Σ ⌈counts[side] / batch_size⌉`` (the graph's bound,
        :mod:`clinjudge.graphs.cef`) -- every question written, kept and confirmed by its own
        text, worded by :func:`stand_in_questions`."""
        prompts = []
        for side in SIDES:
            variables = {**_variables(side, texts), "kind": KIND[side], "n": counts[side]}
            schema = GeneratedQuestions.model_json_schema()
            prompts.append(self.caller.rendered(self.generate_prompt, variables, schema))
        schema = AnswerBatch.model_json_schema()
        for side in SIDES:
            questions = [
                CefQuestion(id=f"{ID_PREFIX[side]}{i}", side=side, question=question)
                for i, question in enumerate(stand_in_questions(texts[side], counts[side]), 1)
            ]
            if not questions:
                continue
            own = self._answer_variables(questions, side, texts)
            prompts.append(self.caller.rendered(self.answer_prompt, own, schema))
            for i in range(0, len(questions), max(1, self.batch_size)):
                batch = questions[i : i + self.batch_size]
                cross = self._answer_variables(batch, OTHER[side], texts)
                prompts.append(self.caller.rendered(self.answer_prompt, cross, schema))
        return prompts

    def _answer_variables(
        self, questions: list[CefQuestion], side: Side, texts: Mapping[Side, str]
    ) -> dict[str, str]:
        return {**_variables(side, texts), "questions": _asked(questions, self.layout)}


def stand_in_questions(text: str, n: int) -> list[str]:
    """How ``n`` questions about ``text`` read in a cost estimate (``compare --dry-run``), where
    the model has not written any yet: each asks whether the text says its next sentence (the
    first :data:`STAND_IN_WORDS` words; from the first sentence again when the text has fewer
    than ``n``). Questions about one text are the same for every note of its visit, as the
    model's are (one prompt, one cached reply); a note's differ from another note's."""
    sentences = [" ".join(s.text.split()[:STAND_IN_WORDS]) for s in split_sentences(text)]
    sentences = sentences or ["its content"]
    return [f"Does the text say: {sentences[i % len(sentences)]}?" for i in range(n)]


def _asked(questions: list[CefQuestion], layout: str) -> str:
    """The questions as a prompt lists them: a JSON list, one question a line in the shared
    layout (a call's own tokens are its tail: the fewer the better), indented in the focused
    one (as before issue 38)."""
    payload = [{"id": q.id, "question": q.question} for q in questions]
    if layout == "focused":
        return json.dumps(payload, ensure_ascii=False, indent=1)
    return "[\n" + ",\n".join(json.dumps(p, ensure_ascii=False) for p in payload) + "\n]"


def _variables(side: Side, texts: Mapping[Side, str]) -> dict[str, str]:
    """What either layout's prompts may use about the text ``side``: ``text`` (that text, for
    the focused prompts), ``name`` (A or B, for the shared ones) and both texts."""
    return {
        "text": texts[side],
        "name": NAME[side],
        "source": texts["source"],
        "summary": texts["summary"],
    }


def _failure(stage: str, side: Side, outcome: ParseFailure | CallError) -> dict:
    return {"stage": stage, "side": side, "kind": outcome.kind, "reason": outcome.reason}
