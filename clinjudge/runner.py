"""One async runner for dataset runs of a compiled judge graph.

Bounded concurrency (a semaphore: LangGraph's ``max_concurrency`` multiplies across fan-outs),
per-item results appended to a JSONL file as they complete (flushed and fsynced), and resume:
items already in the file are loaded, not run again, so an interrupted run loses nothing and
judges nothing twice. A torn last line from a crash is dropped and its item re-run. An item
whose graph raises is recorded in ``failed`` and retried by the next run.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from clinjudge.datasets.items import Item

RECURSION_LIMIT = 50
T = TypeVar("T")


@dataclass
class RunResult:
    rows: list[dict]
    failed: dict[str, str] = field(default_factory=dict)
    resumed: int = 0


def read_completed(path: Path) -> dict[str, dict]:
    """Rows of a results file by id; a torn (unparseable) line is dropped from the file."""
    if not path.exists():
        return {}
    rows: dict[str, dict] = {}
    good_lines: list[str] = []
    torn = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            torn = True
            continue
        rows[str(row["note_id"])] = row
        good_lines.append(line)
    if torn:
        path.write_text("".join(f"{line}\n" for line in good_lines), encoding="utf-8")
    return rows


def run_mismatch(manifest: Path, identity: dict[str, Any]) -> str | None:
    """The first key of ``identity`` whose value differs from the run recorded in ``manifest``
    (a run directory's JSON), or ``None`` when there is no such run or it matches — so that a
    resumed run never mixes results of two configurations. Raises ``ValueError`` when the
    manifest is not JSON."""
    if not manifest.exists():
        return None
    previous = json.loads(manifest.read_text(encoding="utf-8"))
    return next((key for key, value in identity.items() if previous.get(key) != value), None)


class JsonlWriter:
    """Appends one JSON object per line; each write is flushed and fsynced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = asyncio.Lock()

    async def write(self, row: dict) -> None:
        line = json.dumps(row, ensure_ascii=False) + "\n"
        async with self._lock:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())


async def run_graph(
    graph: Any,
    context: Any,
    items: Iterable[T],
    *,
    key: Callable[[T], str],
    make_input: Callable[[T], dict[str, Any]],
    make_row: Callable[[T, dict[str, Any]], dict],
    out_path: Path,
    done: dict[str, dict],
    concurrency: int = 4,
    keep: Callable[[dict], bool] = lambda row: True,
    on_done: Callable[[], None] = lambda: None,
) -> RunResult:
    """Invoke ``graph`` once per item not in ``done``; append ``make_row(item, final_state)`` to
    ``out_path`` as each finishes. A written row counts as done when ``keep(row)`` (a row that
    records a failed call is written, and retried by the next run). Rows come back in item
    order; an item whose graph raises is listed in ``failed``, not written."""
    items = list(items)
    writer = JsonlWriter(out_path)
    semaphore = asyncio.Semaphore(max(1, concurrency))
    failed: dict[str, str] = {}
    resumed = sum(1 for item in items if key(item) in done)
    for _ in range(resumed):
        on_done()

    async def one(item: T) -> None:
        async with semaphore:
            try:
                state = await graph.ainvoke(
                    make_input(item), context=context, config={"recursion_limit": RECURSION_LIMIT}
                )
            except Exception as exc:  # an item that breaks the graph must not end the run
                failed[key(item)] = f"{type(exc).__name__}: {exc}"
                on_done()
                return
            row = make_row(item, state)
            await writer.write(row)
            if keep(row):
                done[key(item)] = row
            on_done()

    await asyncio.gather(*(one(item) for item in items if key(item) not in done))
    rows = [done[key(item)] for item in items if key(item) in done]
    return RunResult(rows=rows, failed=failed, resumed=resumed)


async def run_items(
    graph: Any,
    context: Any,
    items: Iterable[Item],
    *,
    out_path: Path,
    concurrency: int = 4,
    given_claims: dict[str, list[dict]] | None = None,
    on_done: Callable[[], None] = lambda: None,
) -> RunResult:
    """Run the SOAP judge graph once per item (input: note id, transcript, note, and the claims
    to judge when ``given_claims`` has them); rows are the notes' reports."""

    def make_input(item: Item) -> dict[str, Any]:
        state: dict[str, Any] = {
            "note_id": item.id,
            "transcript": item.transcript,
            "note": item.note,
        }
        if given_claims and given_claims.get(item.id):
            state["claims"] = given_claims[item.id]
        return state

    return await run_graph(
        graph,
        context,
        items,
        key=lambda item: item.id,
        make_input=make_input,
        make_row=lambda item, state: state["report"],
        out_path=out_path,
        done=read_completed(out_path),
        concurrency=concurrency,
        on_done=on_done,
    )
