"""One async runner for dataset runs of a compiled judge graph.

Bounded concurrency (a semaphore: LangGraph's ``max_concurrency`` multiplies across fan-outs),
per-item results appended to a JSONL file as they complete (flushed and fsynced), and resume:
items already in the file are loaded, not run again, so an interrupted run loses nothing and
judges nothing twice. A torn last line from a crash is dropped (the file rewritten atomically:
the old file or the repaired one, never less) and its item re-run. An item whose graph raises
is recorded in ``failed`` and retried by the next run. Lines are split at ``\n`` only
(:mod:`clinjudge.files.jsonl`): a row whose text holds U+2028 is one row.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from clinjudge.datasets.items import Item, visit_order
from clinjudge.files import atomic_write, dump_line, read_jsonl
from clinjudge.llm_usage import with_cost

RECURSION_LIMIT = 50
T = TypeVar("T")


@dataclass
class RunResult:
    rows: list[dict]
    failed: dict[str, str] = field(default_factory=dict)
    resumed: int = 0


def read_completed(path: Path, key: str = "note_id") -> dict[str, dict]:
    """Rows of a results file by ``row[key]``; a torn line (not a JSON object with ``key``) is
    dropped from the file, which is rewritten atomically (module docstring)."""
    if not path.exists():
        return {}
    rows: dict[str, dict] = {}
    torn = 0
    for line in read_jsonl(path, skip_bom=False):
        if line.ok and isinstance(line.value, dict) and key in line.value:
            rows[str(line.value[key])] = line.value
        else:
            torn += 1
    if torn:
        atomic_write(path, _good_lines(path, key))
    return rows


def _good_lines(path: Path, key: str):
    """The lines of ``path`` that :func:`read_completed` keeps, as they are on disk."""
    for line in read_jsonl(path, skip_bom=False):
        if line.ok and isinstance(line.value, dict) and key in line.value:
            yield line.raw + b"\n"


def run_mismatch(manifest: Path, identity: dict[str, Any]) -> str | None:
    """What differs between ``identity`` and the run recorded in ``manifest`` (a run
    directory's JSON) — the setting's dotted path with both values, ``decoding.model "m1", now
    "m2"`` — or ``None`` when there is no such run or it matches, so that a resumed run never
    mixes results of two configurations. Raises ``ValueError`` when the manifest is not JSON."""
    if not manifest.exists():
        return None
    previous = json.loads(manifest.read_text(encoding="utf-8"))
    found = first_difference({k: previous.get(k) for k in identity}, identity)
    if found is None:
        return None
    key, old, new = found
    return f"{key} {short_value(old)}, now {short_value(new)}"


def first_difference(old: Any, new: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The dotted path of the first value that differs between two JSON values, with both."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(dict.fromkeys([*old, *new])):
            if found := first_difference(old.get(key), new.get(key), f"{path}.{key}".lstrip(".")):
                return found
        return None
    return None if old == new else (path or "settings", old, new)


def short_value(value: Any) -> str:
    """A value as JSON, cut to 40 characters, for one-line messages."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


class JsonlWriter:
    """Appends one JSON object per line; each write is flushed and fsynced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = asyncio.Lock()

    async def write(self, row: dict) -> None:
        line = dump_line(row)
        async with self._lock:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())


async def run_each(
    fn: Callable[[T], Awaitable[dict]],
    items: Iterable[T],
    *,
    key: Callable[[T], str],
    out_path: Path,
    done: dict[str, dict],
    concurrency: int = 4,
    keep: Callable[[dict], bool] = lambda row: True,
    on_done: Callable[[], None] = lambda: None,
    report_unkept: bool = False,
) -> RunResult:
    """Await ``fn(item)`` once per item not in ``done`` and append its row to ``out_path`` as
    each finishes. A written row counts as done for the next run only when ``keep(row)`` (a row
    that records a failed call is run again next time); rows come back in item order with the
    resumed ones — the unkept ones too when ``report_unkept``. An item whose ``fn`` raises is
    listed in ``failed``, not written."""
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
                row = await fn(item)
            except Exception as exc:  # an item that breaks its judge must not end the run
                failed[key(item)] = f"{type(exc).__name__}: {exc}"
                on_done()
                return
            await writer.write(row)
            if report_unkept:
                got[key(item)] = row
            if keep(row):
                done[key(item)] = row
            on_done()

    got: dict[str, dict] = {}
    await asyncio.gather(*(one(item) for item in items if key(item) not in done))
    rows = [got.get(key(item)) or done[key(item)] for item in items if key(item) in done | got]
    return RunResult(rows=rows, failed=failed, resumed=resumed)


async def run_graph(
    graph: Any,
    context: Any,
    items: Iterable[T],
    *,
    make_input: Callable[[T], dict[str, Any]],
    make_row: Callable[[T, dict[str, Any]], dict],
    **run: Any,
) -> RunResult:
    """:func:`run_each` of a compiled graph: the row is ``make_row(item, final_state)``."""

    async def invoke(item: T) -> dict:
        state = await graph.ainvoke(
            make_input(item), context=context, config={"recursion_limit": RECURSION_LIMIT}
        )
        return make_row(item, state)

    return await run_each(invoke, items, **run)


async def run_evaluator(
    evaluator: Any,
    items: Iterable[Item],
    *,
    out_path: Path,
    concurrency: int = 4,
    on_done: Callable[[], None] = lambda: None,
    retry_failed: bool = True,
) -> RunResult:
    """Run an :class:`~clinjudge.evaluators.base.Evaluator` over items, resumably: rows are
    keyed by ``id``; a row marked ``"retry"`` (a failed call or an unreadable reply lost part
    of it) is reported and run again next time, unless ``retry_failed`` is off. Each row
    carries its ``cost`` (:func:`clinjudge.llm_usage.with_cost`: calls, tokens, seconds), so a
    resumed run keeps what its items cost. Items are judged in :func:`visit_order` (one visit's
    notes back to back); rows come back in the items' order."""
    items = list(items)
    done = {
        k: row
        for k, row in read_completed(out_path, key="id").items()
        if not (retry_failed and row.get("retry"))
    }

    async def evaluate(item: Item) -> dict:
        return await with_cost(lambda: evaluator.evaluate(item))

    result = await run_each(
        evaluate,
        visit_order(items),
        key=lambda item: item.id,
        out_path=out_path,
        done=done,
        concurrency=concurrency,
        keep=lambda row: not row.get("retry"),
        on_done=on_done,
        report_unkept=True,
    )
    position = {item.id: i for i, item in enumerate(items)}
    result.rows.sort(key=lambda row: position[row["id"]])
    return result
