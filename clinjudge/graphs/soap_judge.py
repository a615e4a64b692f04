"""The SOAP-note judge graph (SPEC §1), one graph for the lexical and inference-aware modes.

    segment ──> extract_claims ──(Send per batch of claims)──> verify_batch ──> aggregate ──> END
    extract_claims ──(no claim to verify)──> aggregate

The verifier (offline rules or an LLM judge) and the claim extractor arrive through the run
context; the state holds only serialisable values: the two texts, claim dicts and outcome dicts.
Claims given in the input skip extraction, so two judges can be run over the very same claims.
"""

from __future__ import annotations

import operator
import time
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send
from typing_extensions import TypedDict

from clinjudge.grounding.note_input import NoteInput
from clinjudge.judges.base import ClaimVerifier, ensure_complete
from clinjudge.judges.extraction import ClaimExtractor
from clinjudge.judges.note_report import build_note_report
from clinjudge.types import CallError, Claim, ParseFailure, Verdict


class SoapState(TypedDict, total=False):
    note_id: str
    transcript: str
    note: str
    claims: list[dict]
    extraction: dict
    outcomes: Annotated[list[dict], operator.add]
    started: float
    report: dict


class BatchTask(TypedDict):
    note_id: str
    transcript: str
    note: str
    claims: list[dict]


class ClaimProgress(Protocol):
    """Told how far one note's judging has gone (a long note takes minutes)."""

    def found(self, claims: int) -> None:
        """The note's claims are cut: ``claims`` will be judged."""

    def judged(self, claims: int) -> None:
        """``claims`` more have their outcome."""


@dataclass
class JudgeContext:
    """Run-scoped dependencies of the graph (never checkpointed)."""

    verifier: ClaimVerifier
    extractor: ClaimExtractor
    batch_size: int = 8
    notes: dict[tuple[str, str], NoteInput] = field(default_factory=dict)
    #: One invocation's progress (``dataclasses.replace`` the run's context to set it).
    progress: ClaimProgress | None = None

    def note_input(self, transcript: str, note: str) -> NoteInput:
        """Parse each (transcript, note) pair once per run; batches of a note share it."""
        key = (transcript, note)
        if key not in self.notes:
            if len(self.notes) > 64:
                self.notes.clear()
            self.notes[key] = NoteInput(transcript, note)
        return self.notes[key]


def segment(state: SoapState, runtime: Runtime[JudgeContext]) -> dict[str, Any]:
    runtime.context.note_input(state["transcript"], state["note"])
    return {"started": time.perf_counter()}


async def extract_claims(state: SoapState, runtime: Runtime[JudgeContext]) -> dict[str, Any]:
    if state.get("claims"):
        return {"extraction": {"method": "given", "failure": None}}
    note = runtime.context.note_input(state["transcript"], state["note"])
    claims, info = await runtime.context.extractor.extract(note)
    return {"claims": [c.model_dump() for c in claims], "extraction": info}


def fan_out(state: SoapState, runtime: Runtime[JudgeContext]) -> list[Send] | str:
    claims = state.get("claims") or []
    if runtime.context.progress is not None:
        runtime.context.progress.found(len(claims))
    if not claims:
        return "aggregate"
    # a verifier without model calls says how many claims it reads at once (its learned
    # scorer batches them); a model's batch is the context's (claims per call)
    size = max(1, getattr(runtime.context.verifier, "claims_per_batch", runtime.context.batch_size))
    return [
        Send(
            "verify_batch",
            BatchTask(
                note_id=state["note_id"],
                transcript=state["transcript"],
                note=state["note"],
                claims=claims[i : i + size],
            ),
        )
        for i in range(0, len(claims), size)
    ]


async def verify_batch(task: BatchTask, runtime: Runtime[JudgeContext]) -> dict[str, Any]:
    note = runtime.context.note_input(task["transcript"], task["note"])
    claims = [Claim.model_validate(c) for c in task["claims"]]
    outcomes = ensure_complete(claims, await runtime.context.verifier.verify(claims, note))
    if runtime.context.progress is not None:
        runtime.context.progress.judged(len(claims))
    return {"outcomes": [o.model_dump() for o in outcomes]}


def aggregate(state: SoapState, runtime: Runtime[JudgeContext]) -> dict[str, Any]:
    verifier = runtime.context.verifier
    claims = [Claim.model_validate(c) for c in state.get("claims") or []]
    outcomes = [_outcome(o) for o in state.get("outcomes") or []]
    report = build_note_report(
        note_id=state["note_id"],
        mode=verifier.mode,
        backend=verifier.backend,
        claims=claims,
        outcomes=outcomes,
        seconds=time.perf_counter() - state.get("started", time.perf_counter()),
    )
    return {"report": {**report.model_dump(), "extraction": state.get("extraction", {})}}


def _outcome(data: dict) -> Verdict | ParseFailure | CallError:
    kind = data.get("kind")
    if kind == "parse_failure":
        return ParseFailure.model_validate(data)
    if kind == "error":
        return CallError.model_validate(data)
    return Verdict.model_validate({k: v for k, v in data.items() if k != "supported"})


def build_graph():
    """Compile the SOAP judge graph; pass a `JudgeContext` as ``context=`` when invoking."""
    graph = StateGraph(SoapState, context_schema=JudgeContext)
    graph.add_node("segment", segment)
    graph.add_node("extract_claims", extract_claims)
    graph.add_node("verify_batch", verify_batch)
    graph.add_node("aggregate", aggregate)
    graph.add_edge(START, "segment")
    graph.add_edge("segment", "extract_claims")
    graph.add_conditional_edges("extract_claims", fan_out, ["verify_batch", "aggregate"])
    graph.add_edge("verify_batch", "aggregate")
    graph.add_edge("aggregate", END)
    return graph.compile()
