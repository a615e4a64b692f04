"""The error-detection graph (SPEC §4), one note per run:

    respond ──(answered)──> parse ──> END
    respond ──(the call failed)──> record_error ──> END

``respond`` asks the responder from the run context (an LLM with a detection prompt, or an
offline baseline) for its four-line answer; ``parse`` reads it strictly; a failed call is
recorded as such by ``record_error``, never read as an answer. The state holds only
serialisable values. :func:`arun_detection` runs the graph over a paired dataset with bounded
concurrency and appends one prediction row per note to a JSONL file, resumably.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from clinjudge.judges.error_detection import (
    Detection,
    Responder,
    parse_four_lines,
    prediction_row,
    read_predictions,
)
from clinjudge.pairs import DetectionNote, PairDataset
from clinjudge.runner import run_graph
from clinjudge.types import CallError


class DetectState(TypedDict, total=False):
    note_id: str
    text: str
    started: float
    raw: str
    call_error: str | None
    detection: dict
    seconds: float


@dataclass
class DetectContext:
    """Run-scoped dependency of the graph (never checkpointed)."""

    responder: Responder


async def respond(state: DetectState, runtime: Runtime[DetectContext]) -> dict[str, Any]:
    started = time.perf_counter()
    answer = await runtime.context.responder.respond(state["note_id"], state["text"])
    if isinstance(answer, CallError):
        return {"raw": "", "call_error": answer.reason, "started": started}
    return {"raw": answer, "call_error": None, "started": started}


def answered(state: DetectState) -> bool:
    return not state.get("call_error")


def parse(state: DetectState) -> dict[str, Any]:
    """The four-line answer read strictly (a reply that breaks the format is a parse failure)."""
    return _done(state, parse_four_lines(state.get("raw", "")))


def record_error(state: DetectState) -> dict[str, Any]:
    """A failed call: status ``error``, retried by the next resumed run."""
    return _done(state, Detection(status="error", reason=state["call_error"]))


def _done(state: DetectState, detection: Detection) -> dict[str, Any]:
    seconds = time.perf_counter() - state.get("started", time.perf_counter())
    return {"detection": detection.model_dump(), "seconds": seconds}


def build_graph():
    """Compile the detection graph; pass a `DetectContext` as ``context=`` when invoking."""
    graph = StateGraph(DetectState, context_schema=DetectContext)
    graph.add_node("respond", respond)
    graph.add_node("parse", parse)
    graph.add_node("record_error", record_error)
    graph.add_edge(START, "respond")
    graph.add_conditional_edges("respond", answered, {True: "parse", False: "record_error"})
    graph.add_edge("parse", END)
    graph.add_edge("record_error", END)
    return graph.compile()


@dataclass
class DetectionRun:
    rows: list[dict]
    resumed: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


async def arun_detection(
    data: PairDataset,
    responder: Responder,
    out_path: Path,
    *,
    concurrency: int = 4,
    on_done: Callable[[], None] = lambda: None,
) -> DetectionRun:
    """Judge every note of ``data``; append a prediction row per note to ``out_path``.

    Resumable: notes already in the file with status ``ok`` or ``parse_failure`` are not run
    again; notes whose call failed (status ``error``) are retried. Rows are returned in dataset
    order; ``failed`` holds notes whose graph raised (not written, retried next time)."""
    started = time.perf_counter()
    done = {
        note_id: row
        for note_id, row in read_predictions(out_path, repair=True).items()
        if row.get("status") != "error"
    }

    def make_row(note: DetectionNote, state: dict[str, Any]) -> dict:
        detection = Detection.model_validate(state["detection"])
        pairs = data.pairs_of(note.note_id)
        return prediction_row(note, pairs, detection, responder.name, state["seconds"])

    result = await run_graph(
        build_graph(),
        DetectContext(responder=responder),
        data.notes,
        key=lambda note: note.note_id,
        make_input=lambda note: {"note_id": note.note_id, "text": note.text},
        make_row=make_row,
        out_path=out_path,
        done=done,
        concurrency=concurrency,
        keep=lambda row: row.get("status") != "error",
        on_done=on_done,
    )
    return DetectionRun(result.rows, result.resumed, result.failed, time.perf_counter() - started)
