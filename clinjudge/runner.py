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
from typing import Any

from clinjudge.datasets.items import Item

RECURSION_LIMIT = 50


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
    """Run ``graph`` once per item (input: note id, transcript, note, optional claims)."""
    items = list(items)
    done = read_completed(out_path)
    writer = JsonlWriter(out_path)
    semaphore = asyncio.Semaphore(max(1, concurrency))
    failed: dict[str, str] = {}
    resumed = sum(1 for item in items if item.id in done)
    for _ in range(resumed):
        on_done()

    async def one(item: Item) -> None:
        async with semaphore:
            state: dict[str, Any] = {
                "note_id": item.id,
                "transcript": item.transcript,
                "note": item.note,
            }
            if given_claims and given_claims.get(item.id):
                state["claims"] = given_claims[item.id]
            try:
                result = await graph.ainvoke(
                    state, context=context, config={"recursion_limit": RECURSION_LIMIT}
                )
            except Exception as exc:  # an item that breaks the graph must not end the run
                failed[item.id] = f"{type(exc).__name__}: {exc}"
                on_done()
                return
            row = result["report"]
            await writer.write(row)
            done[item.id] = row
            on_done()

    await asyncio.gather(*(one(item) for item in items if item.id not in done))
    rows = [done[item.id] for item in items if item.id in done]
    return RunResult(rows=rows, failed=failed, resumed=resumed)
