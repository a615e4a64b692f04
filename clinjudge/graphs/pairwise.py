"""The pairwise judge graph (SPEC §6, issue 25): two texts of one item, asked in both orders,
combined into one outcome per criterion.

    gather ──(one task per order)──> ask_order ──> collect
    gather ──(a text has no evidence)──> fail ──> END
    collect ──(both orders read)──> combine ──> END
    collect ──(an order failed)──> fail

``gather`` fetches, offline, what the other judges found in each text (the run context's
``evidence_of``: the offline SOAP and omission judges' rows, :mod:`clinjudge.arena.evidence`)
— a text they could not judge goes to ``fail`` —, and on the LLM backend checks that both
texts are there. ``ask_order`` runs once with A shown first and once with B first (a ``Send``
each) and gives a verdict per criterion and overall: offline by the rules of
:func:`clinjudge.arena.preference.prefer`, on the LLM backend by one call of the
``pairwise.compare`` prompt per order (every criterion of the run in that call; read
strictly, :mod:`clinjudge.arena.replies`). ``collect`` routes an order whose call failed or
whose reply named no winner to ``fail``. ``combine`` keeps a win only when the same text
wins in both orders, else a draw (:func:`clinjudge.metrics.pairwise.combine_orders`), and
records, per criterion, whether the verdict followed the position. A failed row is retried
by the next run, never given a guessed outcome. The state holds plain values; the evidence
source, the caller and the prompt arrive through the run context.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from clinjudge.arena.evidence import TextEvidence
from clinjudge.arena.preference import CRITERIA, prefer
from clinjudge.arena.replies import (
    PairReply,
    criteria_listing,
    reply_shape,
    verdicts_from_reply,
)
from clinjudge.llm import StructuredCaller
from clinjudge.metrics.pairwise import combine_orders
from clinjudge.prompts import Prompt

#: The two presentations: A shown first, then B shown first.
ORDERS = ("ab", "ba")


class PairState(TypedDict, total=False):
    id: str
    a: str
    b: str
    #: LLM backend: the source and the two texts
    source: str
    text_a: str
    text_b: str
    evidence: dict[str, dict[str, int]]
    orders: Annotated[list[dict[str, Any]], operator.add]
    failure: dict[str, Any]
    row: dict[str, Any]


@dataclass
class PairwiseContext:
    #: A text's evidence by its item id; ``None`` when the other judges could not judge it.
    evidence_of: Callable[[str], TextEvidence | None]
    #: The criteria asked (offline: the rules of each; LLM: listed in the prompt).
    criteria: tuple[str, ...] = CRITERIA
    caller: StructuredCaller | None = None
    prompt: Prompt | None = None


def gather(state: PairState, runtime: Runtime[PairwiseContext]) -> dict[str, Any]:
    if runtime.context.caller is not None:
        if not (state.get("text_a", "").strip() and state.get("text_b", "").strip()):
            reason = "a note of the pair is empty"
            return {"failure": {"kind": "error", "id": state["id"], "reason": reason}}
        return {}
    found: dict[str, dict[str, int]] = {}
    for side in ("a", "b"):
        evidence = runtime.context.evidence_of(state[side])
        if evidence is None:
            reason = f"the other judges have no result for {state[side]!r}"
            return {"failure": {"kind": "error", "id": state["id"], "reason": reason}}
        found[side] = evidence.as_dict()
    return {"evidence": found}


def route_gather(state: PairState) -> list[Send] | str:
    if state.get("failure"):
        return "fail"
    if "evidence" in state:  # offline: what the other judges found
        a, b = state["evidence"]["a"], state["evidence"]["b"]
        shared: dict[str, Any] = {}
    else:  # LLM backend: the texts themselves
        a, b = state["text_a"], state["text_b"]
        shared = {"id": state["id"], "source": state["source"]}
    shown = {"ab": (a, b), "ba": (b, a)}
    return [
        Send("ask_order", {**shared, "order": o, "first": shown[o][0], "second": shown[o][1]})
        for o in ORDERS
    ]


async def ask_order(task: dict[str, Any], runtime: Runtime[PairwiseContext]) -> dict[str, Any]:
    ctx = runtime.context
    if ctx.caller is not None and ctx.prompt is not None:
        return {"orders": [await _ask_model(task, ctx)]}
    first = TextEvidence.from_dict(task["first"])
    second = TextEvidence.from_dict(task["second"])
    decisions = prefer(first, second, criteria=ctx.criteria)
    return {
        "orders": [
            {
                "order": task["order"],
                "verdicts": {c: d.verdict for c, d in decisions.items()},
                "decided_by": {
                    c: {"measure": d.measure, "values": list(d.values)}
                    for c, d in decisions.items()
                    if d.measure is not None
                },
            }
        ]
    }


async def _ask_model(task: dict[str, Any], ctx: PairwiseContext) -> dict[str, Any]:
    assert ctx.caller is not None and ctx.prompt is not None
    key = f"{task['id']}:{task['order']}"
    variables = {
        "criteria": criteria_listing(ctx.criteria),
        "shape": reply_shape(ctx.criteria),
        "source": task["source"],
        "first": task["first"],
        "second": task["second"],
    }
    reply = await ctx.caller.call(ctx.prompt, variables, PairReply, key=key)
    if not isinstance(reply, PairReply):
        return {"order": task["order"], "failure": reply.model_dump()}
    verdicts = verdicts_from_reply(reply, ctx.criteria)
    if isinstance(verdicts, str):
        failure = {"kind": "parse_failure", "id": key, "reason": verdicts}
        return {"order": task["order"], "failure": failure}
    reasons = {c.criterion: c.reason for c in reply.criteria} | {"overall": reply.overall.reason}
    return {
        "order": task["order"],
        "verdicts": verdicts,
        "decided_by": {c: {"reason": reasons.get(c, "")} for c in verdicts},
    }


def collect(state: PairState) -> dict[str, Any]:
    failed = [o["failure"] for o in state.get("orders", []) if o.get("failure")]
    return {"failure": failed[0]} if failed else {}


def route_collect(state: PairState) -> str:
    return "fail" if state.get("failure") else "combine"


def combine(state: PairState) -> dict[str, Any]:
    by_order = {o["order"]: o for o in state["orders"]}
    ab, ba = by_order["ab"]["verdicts"], by_order["ba"]["verdicts"]
    criteria = tuple(ab)  # the run's criteria and overall
    row = {
        **_pair(state),
        "outcomes": {c: combine_orders(ab[c], ba[c]) for c in criteria},
        "orders": {o: by_order[o]["verdicts"] for o in ORDERS},
        "follows_position": {c: ab[c] == ba[c] != "tie" for c in criteria},
        "decided_by": {o: by_order[o]["decided_by"] for o in ORDERS},
        "evidence": state.get("evidence"),
        "failure": None,
    }
    return {"row": row}


def fail(state: PairState) -> dict[str, Any]:
    return {"row": {**_pair(state), "outcomes": None, "failure": state["failure"]}}


def _pair(state: PairState) -> dict[str, Any]:
    return {"id": state["id"], "a": state["a"], "b": state["b"]}


def build_graph():
    """Compile the graph; invoke it with a :class:`PairwiseContext` as ``context=``."""
    graph = StateGraph(PairState, context_schema=PairwiseContext)
    graph.add_node("gather", gather)
    graph.add_node("ask_order", ask_order)
    graph.add_node("collect", collect)
    graph.add_node("combine", combine)
    graph.add_node("fail", fail)
    graph.add_edge(START, "gather")
    graph.add_conditional_edges("gather", route_gather, ["ask_order", "fail"])
    graph.add_edge("ask_order", "collect")
    graph.add_conditional_edges("collect", route_collect, ["combine", "fail"])
    graph.add_edge("combine", END)
    graph.add_edge("fail", END)
    return graph.compile()
