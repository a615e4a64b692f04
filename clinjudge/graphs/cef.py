"""The Cross-Examination Framework graph (SPEC §2), one graph for the offline and LLM backends.

    prepare ──(Send per side)──> generate ──> collect_questions
    collect_questions ──(Send per side)──> self_check ──> collect_self_answers
    collect_self_answers ──(Send per batch)──> cross_answer ──> score ──> END
    collect_questions ──(no question to check)──> score
    collect_self_answers ──(no question confirmed)──> score

``generate`` writes the YES-questions of D and of S in parallel; questions the generator did not
label YES stop there. ``self_check`` answers each side's questions from their own text (one
batch per side); only questions answered YES go on. ``cross_answer`` answers D-questions from S
and S-questions from D, in batches of the backend's ``batch_size`` (LLM: 10 per call).
``score`` joins the answers and computes the SPEC §2 scores (:mod:`clinjudge.cef`).
With the LLM backend an item costs 2 + k + ⌈a/10⌉ + ⌈b/10⌉ calls: two generations, a
self-check for each of the k ≤ 2 sides with a question left, and the cross batches of the
a ≤ N source and b ≤ N' summary questions their own text answered YES — at most
4 + ⌈(N+N')/10⌉ when N and N' are multiples of 10 (one more otherwise), plus one re-ask per
unparseable reply (``compare --dry-run`` estimates this bound). Every call carries both texts
(``task["texts"]``) and the side it is about: in the LLM backend's ``shared`` layout every call
of an item opens with the same instructions and both texts, so with one request in flight a
server re-reads only each call's request; the default ``focused`` layout shows each call its
own text alone (:mod:`clinjudge.cef.llm_backend`). The backend arrives through the run context; the
state holds only serialisable dicts.
"""

from __future__ import annotations

import operator
import time
from dataclasses import dataclass
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from clinjudge.cef.factory import CefBackend
from clinjudge.cef.result import OTHER, SIDES, AnswerRecord, CefQuestion, assemble_result
from clinjudge.cef.scores import Task


class CefState(TypedDict, total=False):
    item_id: str
    source: str
    summary: str
    questions: Annotated[list[dict], operator.add]
    own: Annotated[list[dict], operator.add]
    cross: Annotated[list[dict], operator.add]
    failures: Annotated[list[dict], operator.add]
    started: float
    result: dict


class GenerateTask(TypedDict):
    side: str
    texts: dict[str, str]
    n: int


class AnswerTask(TypedDict):
    #: The side whose text answers.
    side: str
    texts: dict[str, str]
    questions: list[dict]


@dataclass
class CefContext:
    """Run-scoped settings and the backend (never checkpointed)."""

    backend: CefBackend
    n_source: int = 10
    n_summary: int = 10
    task: Task = "summary"


def _texts(state: CefState) -> dict[str, str]:
    return {"source": state["source"], "summary": state["summary"]}


def prepare(state: CefState) -> dict[str, Any]:
    return {"started": time.perf_counter()}


def fan_generate(state: CefState, runtime: Runtime[CefContext]) -> list[Send]:
    counts = {"source": runtime.context.n_source, "summary": runtime.context.n_summary}
    texts = _texts(state)
    return [
        Send("generate", GenerateTask(side=side, texts=texts, n=counts[side])) for side in SIDES
    ]


async def generate(task: GenerateTask, runtime: Runtime[CefContext]) -> dict[str, Any]:
    questions, failures = await runtime.context.backend.generate(
        task["side"],  # type: ignore[arg-type]
        task["texts"],  # type: ignore[arg-type]
        task["n"],
    )
    return {"questions": [q.model_dump() for q in questions], "failures": failures}


def collect_questions(state: CefState) -> dict[str, Any]:
    return {}


def fan_self_check(state: CefState) -> list[Send] | str:
    texts = _texts(state)
    sends = []
    for side in SIDES:
        asked = [q for q in state.get("questions") or [] if q["side"] == side]
        asked = [q for q in asked if q["status"] == "asked"]
        if asked:
            task = AnswerTask(side=side, texts=texts, questions=asked)
            sends.append(Send("self_check", task))
    return sends or "score"


async def self_check(task: AnswerTask, runtime: Runtime[CefContext]) -> dict[str, Any]:
    return {"own": await _answer(task, runtime.context.backend)}


def collect_self_answers(state: CefState) -> dict[str, Any]:
    return {}


def fan_cross(state: CefState, runtime: Runtime[CefContext]) -> list[Send] | str:
    yes = {r["id"] for r in state.get("own") or [] if r["answer"] == "YES"}
    texts = _texts(state)
    size = max(1, runtime.context.backend.batch_size)
    sends = []
    for side in SIDES:
        exam = [
            q
            for q in state.get("questions") or []
            if q["side"] == side and q["status"] == "asked" and q["id"] in yes
        ]
        for i in range(0, len(exam), size):
            task = AnswerTask(side=OTHER[side], texts=texts, questions=exam[i : i + size])
            sends.append(Send("cross_answer", task))
    return sends or "score"


async def cross_answer(task: AnswerTask, runtime: Runtime[CefContext]) -> dict[str, Any]:
    return {"cross": await _answer(task, runtime.context.backend)}


def score(state: CefState, runtime: Runtime[CefContext]) -> dict[str, Any]:
    ctx = runtime.context
    result = assemble_result(
        questions=[CefQuestion.model_validate(q) for q in state.get("questions") or []],
        own=[AnswerRecord.model_validate(r) for r in state.get("own") or []],
        cross=[AnswerRecord.model_validate(r) for r in state.get("cross") or []],
        source=state["source"],
        summary=state["summary"],
        task=ctx.task,
        backend=ctx.backend.name,
        n_source=ctx.n_source,
        n_summary=ctx.n_summary,
        failures=state.get("failures") or [],
        item_id=state.get("item_id", ""),
        seconds=time.perf_counter() - state.get("started", time.perf_counter()),
    )
    return {"result": result.model_dump(mode="json")}


async def _answer(task: AnswerTask, backend: CefBackend) -> list[dict]:
    questions = [CefQuestion.model_validate(q) for q in task["questions"]]
    records = await backend.answer(questions, task["side"], task["texts"])  # type: ignore[arg-type]
    return [r.model_dump() for r in records]


def build_graph():
    """Compile the CEF graph; pass a :class:`CefContext` as ``context=`` when invoking with
    ``{"item_id", "source", "summary"}``; the final state's ``result`` is a
    :class:`~clinjudge.cef.result.CefResult` dict."""
    graph = StateGraph(CefState, context_schema=CefContext)
    graph.add_node("prepare", prepare)
    graph.add_node("generate", generate)
    graph.add_node("collect_questions", collect_questions)
    graph.add_node("self_check", self_check)
    graph.add_node("collect_self_answers", collect_self_answers)
    graph.add_node("cross_answer", cross_answer)
    graph.add_node("score", score)
    graph.add_edge(START, "prepare")
    graph.add_conditional_edges("prepare", fan_generate, ["generate"])
    graph.add_edge("generate", "collect_questions")
    graph.add_conditional_edges("collect_questions", fan_self_check, ["self_check", "score"])
    graph.add_edge("self_check", "collect_self_answers")
    graph.add_conditional_edges("collect_self_answers", fan_cross, ["cross_answer", "score"])
    graph.add_edge("cross_answer", "score")
    graph.add_edge("score", END)
    return graph.compile()
