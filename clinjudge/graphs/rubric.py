"""The rubric graph (issue 39): grade each criterion, then aggregate the item's score.

    prepare ──(offline)──> grade_offline ──> aggregate ──> END
    prepare ──(a model)──> grade_llm ──> aggregate
    prepare ──(a jury)───> grade_jury ──> vote ──> aggregate

``prepare`` counts the transcript's turns (a cited turn outside them is dropped).
``grade_offline`` grades fact criteria by the omission judge's reading and records every other
criterion "needs a model" (:func:`clinjudge.rubric.offline.grade_offline`; with
``offline_facts`` off, every criterion). ``grade_llm`` grades the fact criteria by that reading
when ``offline_facts`` is on, and sends the others in batches of :attr:`RubricContext.batch`,
all batches of an item sharing one prompt prefix (instructions, the visit with numbered turns,
the note) and in flight together;
criteria a reply leaves out are asked again once in one call, then recorded as parse failures;
a call that fails records its criteria as errors (:mod:`clinjudge.rubric.replies`).
``grade_jury`` (``--jury``) has every juror grade every criterion as ``grade_llm`` does (batches
of :attr:`RubricContext.batch`; ``offline_facts`` is off with a jury), the jurors in flight
together; ``vote`` makes each criterion's verdict from theirs — majority, ties
kept, or the mean level (:func:`clinjudge.rubric.jury.jury_grade`).
``aggregate`` scores the graded criteria (:func:`clinjudge.rubric.scoring.item_score`); a
jury's failures are its jurors' (one per juror and criterion without a verdict).
Rubric, caller, prompt and knowledge base arrive through the run context; the state holds
plain values.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.rubric.grades import needs_model, not_graded
from clinjudge.rubric.jury import juror_failures, jury_grade
from clinjudge.rubric.model import Criterion, Rubric
from clinjudge.rubric.offline import grade_offline as offline_grades
from clinjudge.rubric.replies import (
    GradesReply,
    grades_from_reply,
    grades_schema,
    prompt_variables,
)
from clinjudge.rubric.scoring import item_score
from clinjudge.text.transcript import turn_spans

#: Criteria per call on the LLM backend.
BATCH = 8


class RubricState(TypedDict, total=False):
    id: str
    transcript: str
    note: str
    question: str
    reference: str
    criteria: list[dict[str, Any]]
    n_turns: int
    grades: list[dict[str, Any]]
    juror_grades: dict[str, list[dict[str, Any]]]
    row: dict[str, Any]


@dataclass
class JurorSeat:
    """One juror of a jury: its name, its model caller and its grading prompt."""

    name: str
    caller: StructuredCaller
    prompt: Prompt


@dataclass
class RubricContext:
    rubric: Rubric
    kb: KnowledgeBase | None = None
    caller: StructuredCaller | None = None
    prompt: Prompt | None = None
    batch: int = BATCH
    #: Fact criteria graded by the knowledge reading (offline's default; on a model, the
    #: model then grades only the rest); off: offline they need a model. Off with a jury
    #: (every juror grades every criterion).
    offline_facts: bool = True
    #: The jurors (``--jury``), each grading in batches of :attr:`batch`.
    jury: list[JurorSeat] = field(default_factory=list)


def prepare(state: RubricState) -> dict[str, Any]:
    transcript = state["transcript"]
    return {"n_turns": len(turn_spans(transcript)) if transcript.strip() else 0}


def route(state: RubricState, runtime: Runtime[RubricContext]) -> str:
    if runtime.context.jury:
        return "grade_jury"
    return "grade_offline" if runtime.context.caller is None else "grade_llm"


def grade_offline(state: RubricState, runtime: Runtime[RubricContext]) -> dict[str, Any]:
    criteria = _criteria(state)
    if not runtime.context.offline_facts:
        return {"grades": [needs_model(c) for c in criteria]}
    return {"grades": _by_knowledge(state, runtime.context, criteria)}


def _by_knowledge(
    state: RubricState, ctx: RubricContext, criteria: list[Criterion]
) -> list[dict[str, Any]]:
    assert ctx.kb is not None
    return offline_grades(criteria, state["transcript"], state["note"], ctx.kb)


async def grade_llm(state: RubricState, runtime: Runtime[RubricContext]) -> dict[str, Any]:
    ctx = runtime.context
    assert ctx.caller is not None and ctx.prompt is not None
    return {"grades": await _grade(state, ctx, ctx.caller, ctx.prompt)}


async def grade_jury(state: RubricState, runtime: Runtime[RubricContext]) -> dict[str, Any]:
    seats = runtime.context.jury
    found = await asyncio.gather(
        *(_grade(state, runtime.context, s.caller, s.prompt) for s in seats)
    )
    return {"juror_grades": {s.name: grades for s, grades in zip(seats, found, strict=True)}}


def vote(state: RubricState) -> dict[str, Any]:
    by_juror = {n: {g["id"]: g for g in grades} for n, grades in state["juror_grades"].items()}
    return {
        "grades": [
            jury_grade(c, {n: mine[c.id] for n, mine in by_juror.items()}) for c in _criteria(state)
        ]
    }


async def _grade(
    state: RubricState, ctx: RubricContext, caller: StructuredCaller, prompt: Prompt
) -> list[dict[str, Any]]:
    """Every criterion of the item graded by one model: batches in flight together, the
    missing ones asked again once together, what is still missing a parse failure."""
    criteria = _criteria(state)
    done: dict[str, dict[str, Any]] = {}
    if ctx.offline_facts and any(c.fact for c in criteria):
        facts = [c for c in criteria if c.fact]
        done = {g["id"]: g for g in _by_knowledge(state, ctx, facts)}
    asked = [c for c in criteria if c.id not in done]
    batches = [asked[lo : lo + ctx.batch] for lo in range(0, len(asked), ctx.batch)]
    found = await asyncio.gather(
        *(_ask(state, ctx, caller, prompt, b, f"{state['id']}:{i}") for i, b in enumerate(batches))
    )
    done |= {g["id"]: g for part in found for g in part[0]}
    missing = [c for part in found for c in part[1]]
    if missing:  # asked again once, together; what is still missing is a parse failure
        again, still = await _ask(state, ctx, caller, prompt, missing, f"{state['id']}:again")
        done |= {g["id"]: g for g in again}
        for c in still:
            if c.id not in done:
                reason = "the grader's reply gave no valid verdict for it, twice"
                done[c.id] = not_graded(c, "parse_failure", reason)
    return [done[c.id] for c in criteria]


async def _ask(
    state: RubricState,
    ctx: RubricContext,
    caller: StructuredCaller,
    prompt: Prompt,
    batch: list[Criterion],
    key: str,
) -> tuple[list[dict[str, Any]], list[Criterion]]:
    """One call for ``batch``: its grades and the criteria the reply left missing. A failed call
    or an unreadable reply grades none: its criteria are recorded so, not asked again."""
    rubric = ctx.rubric
    variables = prompt_variables(
        rubric,
        batch,
        transcript=state["transcript"],
        note=state["note"],
        question=state.get("question", ""),
        reference=state.get("reference", ""),
    )
    schema = grades_schema(rubric, batch)
    reply = await caller.call(prompt, variables, GradesReply, key=key, wire_schema=schema)
    if not isinstance(reply, GradesReply):
        return [not_graded(c, reply.kind, reply.reason) for c in batch], []
    return grades_from_reply(rubric, reply, batch, state["n_turns"])


def aggregate(state: RubricState, runtime: Runtime[RubricContext]) -> dict[str, Any]:
    grades = state["grades"]
    failures = [
        f
        for g in grades
        for f in (
            juror_failures(state["id"], g)
            if "jurors" in g
            else [{"kind": g["status"], "id": f"{state['id']}:{g['id']}", "reason": g["reason"]}]
            if g["status"] in ("parse_failure", "error")
            else []
        )
    ]
    row = {
        "id": state["id"],
        "mode": runtime.context.rubric.mode,
        **item_score(runtime.context.rubric, grades),
        "criteria": grades,
        "failures": failures,
    }
    return {"row": row}


def _criteria(state: RubricState) -> list[Criterion]:
    return [Criterion.model_validate(c) for c in state["criteria"]]


def build_graph():
    """Compile the graph; invoke it with a :class:`RubricContext` as ``context=``."""
    graph = StateGraph(RubricState, context_schema=RubricContext)
    graph.add_node("prepare", prepare)
    graph.add_node("grade_offline", grade_offline)
    graph.add_node("grade_llm", grade_llm)
    graph.add_node("grade_jury", grade_jury)
    graph.add_node("vote", vote)
    graph.add_node("aggregate", aggregate)
    graph.add_edge(START, "prepare")
    graph.add_conditional_edges("prepare", route, ["grade_offline", "grade_llm", "grade_jury"])
    graph.add_edge("grade_offline", "aggregate")
    graph.add_edge("grade_llm", "aggregate")
    graph.add_edge("grade_jury", "vote")
    graph.add_edge("vote", "aggregate")
    graph.add_edge("aggregate", END)
    return graph.compile()
