"""The pairwise judge graph (SPEC §6, issue 25): two texts of one item, asked in both orders,
combined into one outcome per criterion.

    gather ──(one task per order)──> ask_order ──> collect
    gather ──(a text has no evidence)──> fail ──> END
    collect ──(both orders read)──> combine ──> END
    collect ──(an order failed)──> fail

``gather`` fetches what the other judges found in each text (the run context's
``evidence_of``: the offline SOAP and omission judges' rows, :mod:`clinjudge.arena.evidence`);
a text they could not judge goes to ``fail``. ``ask_order`` runs once with A shown first and
once with B first (a ``Send`` each) and gives a verdict per criterion and overall
(:func:`clinjudge.arena.preference.prefer`); ``collect`` routes an order that failed to
``fail``. ``combine`` keeps a win only when the same text wins in both orders, else a draw
(:func:`clinjudge.metrics.pairwise.combine_orders`), and records, per criterion, whether the
verdict followed the position. A failed row is retried by the next run, never given a
guessed outcome. The state holds plain values; the evidence source arrives through the run
context.
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
from clinjudge.arena.preference import CRITERIA, OVERALL, prefer
from clinjudge.metrics.pairwise import combine_orders

#: The two presentations: A shown first, then B shown first.
ORDERS = ("ab", "ba")


class PairState(TypedDict, total=False):
    id: str
    a: str
    b: str
    evidence: dict[str, dict[str, int]]
    orders: Annotated[list[dict[str, Any]], operator.add]
    failure: dict[str, Any]
    row: dict[str, Any]


@dataclass
class PairwiseContext:
    #: A text's evidence by its item id; ``None`` when the other judges could not judge it.
    evidence_of: Callable[[str], TextEvidence | None]


def gather(state: PairState, runtime: Runtime[PairwiseContext]) -> dict[str, Any]:
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
    ev = state["evidence"]
    shown = {"ab": (ev["a"], ev["b"]), "ba": (ev["b"], ev["a"])}
    return [
        Send("ask_order", {"order": o, "first": shown[o][0], "second": shown[o][1]}) for o in ORDERS
    ]


def ask_order(task: dict[str, Any]) -> dict[str, Any]:
    first = TextEvidence.from_dict(task["first"])
    second = TextEvidence.from_dict(task["second"])
    decisions = prefer(first, second)
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


def collect(state: PairState) -> dict[str, Any]:
    failed = [o["failure"] for o in state.get("orders", []) if o.get("failure")]
    return {"failure": failed[0]} if failed else {}


def route_collect(state: PairState) -> str:
    return "fail" if state.get("failure") else "combine"


def combine(state: PairState) -> dict[str, Any]:
    by_order = {o["order"]: o for o in state["orders"]}
    ab, ba = by_order["ab"]["verdicts"], by_order["ba"]["verdicts"]
    criteria = (*CRITERIA, OVERALL)
    row = {
        **_pair(state),
        "outcomes": {c: combine_orders(ab[c], ba[c]) for c in criteria},
        "orders": {o: by_order[o]["verdicts"] for o in ORDERS},
        "follows_position": {c: ab[c] == ba[c] != "tie" for c in criteria},
        "decided_by": {o: by_order[o]["decided_by"] for o in ORDERS},
        "evidence": state["evidence"],
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
