"""The claim-level fact-checking graph, SAFE style (SPEC §3).

    decompose ──(Send per relevant claim)──> find_evidence ──> pool
    decompose ──(no relevant claim)──> aggregate
    pool ──(Send per claim with evidence)──> rate ──> aggregate ──> END
    pool ──(no claim to rate)──> aggregate

``find_evidence`` is a subgraph (:func:`build_evidence_graph`): make_queries, search.

``decompose`` cuts the answer into labelled claims (``relevant`` / ``context`` / ``meta``); only
relevant claims are sent on. Each ``find_evidence`` writes targeted queries and searches; a query
reply that cannot be parsed, a failed model call or a search that fails after its retries is
routed to ``record_failure`` and becomes that claim's recorded failure, so one claim never sinks
the answer. ``pool`` waits for every claim's evidence and says what each rating reads
(:mod:`clinjudge.factcheck.evidence`: the claim's own passages, or with ``evidence=pooled`` all
the answer's passages as one block); ``rate`` rates each claim from that evidence alone, the
claims in order, so that the calls of one answer come back to back, queries first, then
ratings (a server keeps each stage's shared prefix warm). ``aggregate`` orders the checks by
claim and builds the :class:`~clinjudge.factcheck.models.AnswerResult`.

The decomposer, query writer, rater and search backends arrive through the run context
(:class:`FactcheckContext`); state holds only serialisable values. An item's own corpus is a
backend registered in the context under the item's ``search_key``.
"""

from __future__ import annotations

import asyncio
import operator
import time
from dataclasses import dataclass, field
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from clinjudge.factcheck.evidence import pool_evidence, reported_evidence
from clinjudge.factcheck.models import AnswerResult, ClaimCheck, FactClaim
from clinjudge.factcheck.setup import FactcheckSetup
from clinjudge.runner import RECURSION_LIMIT
from clinjudge.search.base import Passage, SearchBackend, SearchError
from clinjudge.types import CallError, ParseFailure


class FactcheckState(TypedDict, total=False):
    answer_id: str
    answer: str
    question: str | None
    search_key: str
    claims: list[dict]
    decomposition: dict
    found: Annotated[list[dict], operator.add]
    evidence_pool: list[dict] | None
    checks: Annotated[list[dict], operator.add]
    started: float
    result: dict


class ClaimState(TypedDict, total=False):
    claim: dict
    question: str | None
    search_key: str
    queries: list[str]
    failure: dict | None
    found: list[dict]
    checks: list[dict]


class EvidenceOutput(TypedDict):
    found: list[dict]
    checks: list[dict]


@dataclass
class FactcheckContext:
    """Run-scoped dependencies (never checkpointed)."""

    setup: FactcheckSetup
    searches: dict[str, SearchBackend] = field(default_factory=dict)

    def search_for(self, key: str | None) -> SearchBackend:
        return self.searches.get(key or "", self.setup.search)


# -- per claim: its evidence -------------------------------------------------------------------
async def make_queries(state: ClaimState, runtime: Runtime[FactcheckContext]) -> dict[str, Any]:
    claim = FactClaim.model_validate(state["claim"])
    queries = await runtime.context.setup.query_writer.queries(claim, state.get("question"))
    if isinstance(queries, ParseFailure | CallError):
        return {"queries": [], "failure": queries.model_dump()}
    return {"queries": queries, "failure": None}


async def search(state: ClaimState, runtime: Runtime[FactcheckContext]) -> dict[str, Any]:
    engine = runtime.context.search_for(state.get("search_key"))
    k = runtime.context.setup.k
    try:
        ranked = await asyncio.gather(*(engine.search(q, k) for q in state["queries"]))
    except SearchError as exc:
        failure = CallError(claim_id=state["claim"]["id"], reason=f"search failed: {exc}")
        return {"failure": failure.model_dump()}
    passages = [p.model_dump() for p in merge_rankings(ranked, k)]
    return {"found": [{"claim": state["claim"], "queries": state["queries"], "own": passages}]}


def failed(state: ClaimState) -> bool:
    return bool(state.get("failure"))


def record_failure(state: ClaimState) -> dict[str, Any]:
    """The claim's check with the failure that stopped it (never a guessed verdict)."""
    claim = FactClaim.model_validate(state["claim"])
    check = ClaimCheck(**claim.model_dump(), queries=state.get("queries") or [])
    failure = state["failure"]
    kind = ParseFailure if failure.get("kind") == "parse_failure" else CallError
    check.failure = kind.model_validate({**failure, "claim_id": claim.id})
    return {"checks": [check.model_dump()]}


def merge_rankings(rankings: list[list[Passage]], k: int) -> list[Passage]:
    """The ``k`` first distinct passages taking each query's results in turn (round robin: every
    query's best hit comes before any query's second; scores of different queries are never
    compared)."""
    merged: list[Passage] = []
    seen: set[tuple[str, str]] = set()
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking):
                p = ranking[rank]
                if (p.id, p.text) not in seen:
                    seen.add((p.id, p.text))
                    merged.append(p)
    return merged[:k]


def build_evidence_graph():
    """One relevant claim's evidence: its queries, then what they retrieve; a failed step goes
    to ``record_failure``, which keeps the claim with its failure:

        make_queries ──(queries written)──> search ──(searched)──> END
        make_queries ──(the query call failed)──> record_failure ──> END
        search ──(the search failed)──> record_failure
    """
    graph = StateGraph(ClaimState, context_schema=FactcheckContext, output_schema=EvidenceOutput)
    graph.add_node("make_queries", make_queries)
    graph.add_node("search", search)
    graph.add_node("record_failure", record_failure)
    graph.add_edge(START, "make_queries")
    on_failure = {True: "record_failure", False: "search"}
    graph.add_conditional_edges("make_queries", failed, on_failure)
    graph.add_conditional_edges("search", failed, {True: "record_failure", False: END})
    graph.add_edge("record_failure", END)
    return graph.compile()


# -- per answer --------------------------------------------------------------------------------
async def decompose(state: FactcheckState, runtime: Runtime[FactcheckContext]) -> dict[str, Any]:
    started = time.perf_counter()
    if state.get("claims"):
        return {"started": started, "decomposition": {"method": "given", "failure": None}}
    decomposer = runtime.context.setup.decomposer
    claims, info = await decomposer.decompose(state["answer"], state.get("question"))
    return {"started": started, "claims": [c.model_dump() for c in claims], "decomposition": info}


def fan_out(state: FactcheckState) -> list[Send] | str:
    relevant = [c for c in state.get("claims") or [] if c["label"] == "relevant"]
    if not relevant:
        return "aggregate"
    return [
        Send(
            "find_evidence",
            {"claim": c, "question": state.get("question"), "search_key": state.get("search_key")},
        )
        for c in relevant
    ]


def pool(state: FactcheckState, runtime: Runtime[FactcheckContext]) -> dict[str, Any]:
    """Every claim's evidence is in: with ``evidence=pooled``, the answer's passages as one
    block (:func:`~clinjudge.factcheck.evidence.pool_evidence`, claims in order)."""
    if runtime.context.setup.evidence != "pooled":
        return {"evidence_pool": None}
    own = [[Passage.model_validate(p) for p in f["own"]] for f in _in_claim_order(state)]
    return {"evidence_pool": [p.model_dump() for p in pool_evidence(own)]}


def route_pool(state: FactcheckState) -> list[Send] | str:
    """A rating task per claim with evidence, in claim order, each with what it reads."""
    found = _in_claim_order(state)
    if not found:
        return "aggregate"
    block, question = state.get("evidence_pool"), state.get("question")
    return [
        Send("rate", {**f, "read": f["own"] if block is None else block, "question": question})
        for f in found
    ]


def _in_claim_order(state: FactcheckState) -> list[dict]:
    order = {c["id"]: i for i, c in enumerate(state.get("claims") or [])}
    return sorted(state.get("found") or [], key=lambda f: order.get(f["claim"]["id"], 0))


async def rate(task: dict[str, Any], runtime: Runtime[FactcheckContext]) -> dict[str, Any]:
    claim = FactClaim.model_validate(task["claim"])
    own = [Passage.model_validate(p) for p in task["own"]]
    read = [Passage.model_validate(p) for p in task["read"]]
    check = ClaimCheck(**claim.model_dump(), queries=task["queries"], evidence=own)
    rating = await runtime.context.setup.rater.rate(claim, read, task.get("question"))
    if isinstance(rating, ParseFailure | CallError):
        check.failure = rating.model_copy(update={"claim_id": claim.id})
    else:
        check.verdict = rating.verdict
        check.checkable = rating.checkable
        check.rationale = rating.rationale
        check.cited = rating.cited
        check.support_score = rating.support_score
        check.evidence = reported_evidence(own, read, rating.cited)
    return {"checks": [check.model_dump()]}


def aggregate(state: FactcheckState, runtime: Runtime[FactcheckContext]) -> dict[str, Any]:
    checks = {c["id"]: c for c in state.get("checks") or []}
    claims = [ClaimCheck.model_validate(checks.get(c["id"], c)) for c in state.get("claims") or []]
    engine = runtime.context.search_for(state.get("search_key"))
    result = AnswerResult(
        id=state["answer_id"],
        backend=runtime.context.setup.backend,
        search=engine.name,
        claims=claims,
        decomposition=state.get("decomposition") or {},
        seconds=round(time.perf_counter() - state.get("started", time.perf_counter()), 4),
    )
    return {"result": result.model_dump(mode="json")}


def build_graph():
    """Compile the fact-checking graph; invoke with ``context=FactcheckContext(setup)``."""
    graph = StateGraph(FactcheckState, context_schema=FactcheckContext)
    graph.add_node("decompose", decompose)
    graph.add_node("find_evidence", build_evidence_graph())
    graph.add_node("pool", pool)
    graph.add_node("rate", rate)
    graph.add_node("aggregate", aggregate)
    graph.add_edge(START, "decompose")
    graph.add_conditional_edges("decompose", fan_out, ["find_evidence", "aggregate"])
    graph.add_edge("find_evidence", "pool")
    graph.add_conditional_edges("pool", route_pool, ["rate", "aggregate"])
    graph.add_edge("rate", "aggregate")
    graph.add_edge("aggregate", END)
    return graph.compile()


async def check_answer(
    graph: Any,
    context: FactcheckContext,
    *,
    answer_id: str,
    answer: str,
    question: str | None = None,
    search_key: str = "",
) -> AnswerResult:
    """Run the compiled graph on one answer and return its result."""
    state = await graph.ainvoke(
        {"answer_id": answer_id, "answer": answer, "question": question, "search_key": search_key},
        context=context,
        config={"recursion_limit": RECURSION_LIMIT},
    )
    return AnswerResult.from_row(state["result"])
