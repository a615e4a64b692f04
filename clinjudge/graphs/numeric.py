"""The numeric-answer graph (SPEC §7): read the final value of an answer, then check it.

    extract ──(value read, or none given)──> check ──> END
    extract ──(the judge's own call failed)──> fail ──> END

``extract`` reads the value offline (:func:`clinjudge.judges.numeric_answer.find_answer`) or
with the ``numeric.final_answer`` prompt; a failed or unreadable call goes to ``fail`` (the item
stays unjudged), never to a guessed value. ``check`` applies
:func:`clinjudge.metrics.numeric.answer_correct`. Caller and prompt arrive through the run
context; the state holds plain values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel
from typing_extensions import TypedDict

from clinjudge.grounding.quotes import locate_quote
from clinjudge.judges.numeric_answer import find_answer, normalise_truth, value_pattern
from clinjudge.llm import StructuredCaller
from clinjudge.metrics.numeric import answer_correct
from clinjudge.prompts import Prompt


class FinalAnswer(BaseModel):
    answer: str | None
    quote: str = ""


class NumericState(TypedDict, total=False):
    id: str
    question: str
    answer_text: str
    truth: str
    kind: str
    continuous: bool
    found: dict[str, Any] | None
    failure: dict[str, Any]
    row: dict[str, Any]


@dataclass
class NumericContext:
    caller: StructuredCaller | None
    prompt: Prompt | None
    rel_tol: float
    zero_abs_tol: float


async def extract(state: NumericState, runtime: Runtime[NumericContext]) -> dict[str, Any]:
    ctx = runtime.context
    text, kind = state["answer_text"], state["kind"]
    if ctx.caller is None or ctx.prompt is None:
        found = find_answer(text, kind)
        return {"found": None if found is None else vars(found)}
    variables = {"question": state.get("question") or "(not given)", "answer": text}
    reply = await ctx.caller.call(ctx.prompt, variables, FinalAnswer, key=state["id"])
    if not isinstance(reply, FinalAnswer):
        return {"failure": reply.model_dump()}
    if reply.answer is None or not value_pattern(kind).search(reply.answer):
        return {"found": None}
    where = locate_quote(text, reply.quote) if reply.quote else None
    span = (where.start, where.end) if where and where.start >= 0 else (-1, -1)
    value = find_answer(reply.answer, kind)
    return {
        "found": {
            "value": value.value if value else reply.answer,
            "start": span[0],
            "end": span[1],
            "how": "llm",
        }
    }


def route(state: NumericState) -> str:
    return "fail" if state.get("failure") else "check"


def check(state: NumericState, runtime: Runtime[NumericContext]) -> dict[str, Any]:
    ctx = runtime.context
    found = state.get("found")
    truth = normalise_truth(state["truth"], state["kind"])
    correct = found is not None and answer_correct(
        found["value"],
        truth,
        continuous=state["continuous"],
        rel_tol=ctx.rel_tol,
        zero_abs_tol=ctx.zero_abs_tol,
    )
    return {"row": _row(state, answer=found, correct=correct)}


def fail(state: NumericState) -> dict[str, Any]:
    return {"row": _row(state, answer=None, correct=None, failure=state["failure"])}


def _row(state: NumericState, **fields: Any) -> dict[str, Any]:
    keys = ("id", "truth", "kind", "continuous")
    return {**{k: state[k] for k in keys}, "failure": None, **fields}  # type: ignore[literal-required]


def build_graph():
    """Compile the graph; invoke it with a :class:`NumericContext` as ``context=``."""
    graph = StateGraph(NumericState, context_schema=NumericContext)
    graph.add_node("extract", extract)
    graph.add_node("check", check)
    graph.add_node("fail", fail)
    graph.add_edge(START, "extract")
    graph.add_conditional_edges("extract", route, ["check", "fail"])
    graph.add_edge("check", END)
    graph.add_edge("fail", END)
    return graph.compile()
