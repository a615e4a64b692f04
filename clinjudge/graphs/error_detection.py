"""The error-detection graph (SPEC §4), one note per run:

    respond ──> parse ──> END

``respond`` asks the responder from the run context (an LLM with a detection prompt, or an
offline baseline) for its four-line answer; ``parse`` reads it strictly. The state holds only
serialisable values. :func:`arun_detection` runs the graph over a paired dataset with bounded
concurrency and appends one prediction row per note to a JSONL file, resumably.
"""

from __future__ import annotations

import asyncio
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
from clinjudge.runner import RECURSION_LIMIT, JsonlWriter
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


def parse(state: DetectState) -> dict[str, Any]:
    if state.get("call_error"):
        detection = Detection(status="error", reason=state["call_error"])
    else:
        detection = parse_four_lines(state.get("raw", ""))
    seconds = time.perf_counter() - state.get("started", time.perf_counter())
    return {"detection": detection.model_dump(), "seconds": seconds}


def build_graph():
    """Compile the detection graph; pass a `DetectContext` as ``context=`` when invoking."""
    graph = StateGraph(DetectState, context_schema=DetectContext)
    graph.add_node("respond", respond)
    graph.add_node("parse", parse)
    graph.add_edge(START, "respond")
    graph.add_edge("respond", "parse")
    graph.add_edge("parse", END)
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
    graph = build_graph()
    context = DetectContext(responder=responder)
    writer = JsonlWriter(out_path)
    semaphore = asyncio.Semaphore(max(1, concurrency))
    failed: dict[str, str] = {}
    resumed = sum(1 for note in data.notes if note.note_id in done)
    for _ in range(resumed):
        on_done()

    async def one(note: DetectionNote) -> None:
        async with semaphore:
            try:
                state = await graph.ainvoke(
                    {"note_id": note.note_id, "text": note.text},
                    context=context,
                    config={"recursion_limit": RECURSION_LIMIT},
                )
            except Exception as exc:  # one broken note must not end the run
                failed[note.note_id] = f"{type(exc).__name__}: {exc}"
                on_done()
                return
            detection = Detection.model_validate(state["detection"])
            row = prediction_row(
                note, data.pairs_of(note.note_id), detection, responder.name, state["seconds"]
            )
            await writer.write(row)
            if detection.status != "error":
                done[note.note_id] = row
            on_done()

    await asyncio.gather(*(one(n) for n in data.notes if n.note_id not in done))
    rows = [done[n.note_id] for n in data.notes if n.note_id in done]
    return DetectionRun(rows, resumed, failed, time.perf_counter() - started)
