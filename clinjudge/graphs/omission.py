"""The omission graph (SPEC §9 "Omissions"): the visit's facts, then whether the note carries
each.

    extract ──(facts read)──> check ──(statuses read)──> score ──> END
    extract ──(the judge's own call failed)──> fail ──> END
    check ──(the judge's own call failed)──> fail

``extract`` reads the transcript's facts offline (:func:`clinjudge.omissions.visit_facts.
visit_facts`) or with the ``omission.visit_facts`` prompt; ``check`` gives each fact its status
offline (:func:`clinjudge.omissions.coverage.check_facts`) or with the ``omission.coverage``
prompt (facts in batches of :data:`BATCH`). A call that fails, or a reply that cannot be
parsed, goes to ``fail``: the item stays unjudged and is retried by the next run, never given
guessed statuses. ``score`` counts the statuses. Caller, prompts and knowledge base arrive
through the run context; the state holds plain values.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from clinjudge.grounding.transcript_facts import TranscriptFacts, build_transcript_facts
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import StructuredCaller
from clinjudge.omissions.coverage import FactCoverage, check_facts
from clinjudge.omissions.fact import VisitFact
from clinjudge.omissions.replies import (
    CoverageReply,
    FactsReply,
    coverage_from_reply,
    facts_from_reply,
    facts_listing,
    missing_ids,
)
from clinjudge.omissions.tally import tally
from clinjudge.omissions.visit_facts import visit_facts
from clinjudge.prompts import Prompt
from clinjudge.text.transcript import parse_transcript

#: Facts per coverage call on the LLM backend.
BATCH = 40


class OmissionState(TypedDict, total=False):
    id: str
    transcript: str
    note: str
    facts: list[dict[str, Any]]
    checked: list[dict[str, Any]]
    failure: dict[str, Any]
    row: dict[str, Any]


@dataclass
class OmissionContext:
    kb: KnowledgeBase | None
    caller: StructuredCaller | None = None
    facts_prompt: Prompt | None = None
    coverage_prompt: Prompt | None = None


def _transcript_facts(state: OmissionState, kb: KnowledgeBase) -> TranscriptFacts:
    return _read_transcript(state["transcript"], kb)


@lru_cache(maxsize=8)
def _read_transcript(transcript: str, kb: KnowledgeBase) -> TranscriptFacts:
    """Parsed once for both nodes and for every note of the same visit (meta-eval pairs)."""
    return build_transcript_facts(parse_transcript(transcript), kb, dense=False)


async def extract(state: OmissionState, runtime: Runtime[OmissionContext]) -> dict[str, Any]:
    ctx = runtime.context
    if ctx.caller is None or ctx.facts_prompt is None:
        assert ctx.kb is not None
        facts = visit_facts(_transcript_facts(state, ctx.kb), ctx.kb)
        return {"facts": [_fact_dict(f) for f in facts]}
    variables = {"transcript": state["transcript"]}
    reply = await ctx.caller.call(ctx.facts_prompt, variables, FactsReply, key=state["id"])
    if not isinstance(reply, FactsReply):
        return {"failure": reply.model_dump()}
    facts = facts_from_reply(reply, state["transcript"])
    return {"facts": [_fact_dict(f) for f in facts]}


async def check(state: OmissionState, runtime: Runtime[OmissionContext]) -> dict[str, Any]:
    ctx = runtime.context
    facts = [_fact(d) for d in state["facts"]]
    if ctx.caller is None or ctx.coverage_prompt is None:
        assert ctx.kb is not None
        found = check_facts(facts, state["note"], _transcript_facts(state, ctx.kb), ctx.kb)
        return {"checked": [_coverage_dict(c) for c in found]}
    checked: list[dict[str, Any]] = []
    for lo in range(0, len(facts), BATCH):
        batch = facts[lo : lo + BATCH]
        variables = {"note": state["note"], "facts": facts_listing(batch)}
        key = f"{state['id']}:{lo // BATCH}"
        reply = await ctx.caller.call(ctx.coverage_prompt, variables, CoverageReply, key=key)
        if not isinstance(reply, CoverageReply):
            return {"failure": reply.model_dump()}
        if lost := missing_ids(reply, batch):
            reason = f"the reply gave no status for {len(lost)} fact(s): {', '.join(lost[:5])}"
            return {"failure": {"kind": "parse_failure", "id": key, "reason": reason}}
        checked += [_coverage_dict(c) for c in coverage_from_reply(reply, batch, state["note"])]
    return {"checked": checked}


def route_extract(state: OmissionState) -> str:
    return "fail" if state.get("failure") else "check"


def route_check(state: OmissionState) -> str:
    return "fail" if state.get("failure") else "score"


def score(state: OmissionState) -> dict[str, Any]:
    return {"row": {"id": state["id"], **tally(state["checked"]), "failure": None}}


def fail(state: OmissionState) -> dict[str, Any]:
    return {"row": {"id": state["id"], **tally(None), "failure": state["failure"]}}


def _fact_dict(f: VisitFact) -> dict[str, Any]:
    d = asdict(f)
    d["spans"] = [list(s) for s in f.spans]
    d["canonical"] = list(f.canonical)
    d["quantities"] = [q.model_dump() for q in f.quantities]
    return d


def _fact(d: dict[str, Any]) -> VisitFact:
    from clinjudge.text.quantities import Quantity

    return VisitFact(
        **{
            **d,
            "spans": tuple(tuple(s) for s in d["spans"]),
            "canonical": tuple(d["canonical"]),
            "quantities": tuple(Quantity.model_validate(q) for q in d["quantities"]),
        }
    )


def _coverage_dict(c: FactCoverage) -> dict[str, Any]:
    fact = _fact_dict(c.fact)
    fact["quantities"] = [q["text"] for q in fact["quantities"]]
    del fact["canonical"]
    return {
        **fact,
        "status": c.status,
        "note_span": [c.note_start, c.note_end],
        "rationale": c.rationale,
    }


def build_graph():
    """Compile the graph; invoke it with an :class:`OmissionContext` as ``context=``."""
    graph = StateGraph(OmissionState, context_schema=OmissionContext)
    graph.add_node("extract", extract)
    graph.add_node("check", check)
    graph.add_node("score", score)
    graph.add_node("fail", fail)
    graph.add_edge(START, "extract")
    graph.add_conditional_edges("extract", route_extract, ["check", "fail"])
    graph.add_conditional_edges("check", route_check, ["score", "fail"])
    graph.add_edge("score", END)
    graph.add_edge("fail", END)
    return graph.compile()
