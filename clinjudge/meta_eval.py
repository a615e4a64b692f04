"""Meta-evaluation of a judge on matched pairs (SPEC §4 paired AUROC, §5 error injection): does
it catch the injected error, and does it leave the legitimate rewrite alone?

A pair (:class:`~clinjudge.inject.pairs.PairRecord`) is an original text and the same text with
exactly one change at ``edited_span`` (``original_span`` in the original) — an injected error
(``kind="error"``) or a legitimate rewrite (``kind="rewrite"``). Each pair gives two items,
``<pair_id>#original`` and ``<pair_id>#edited`` (note = that text, transcript = ``pair.source``,
meta = ``pair.meta``), and each judge runs once over all items (resumable JSONL,
``DIR/runs/<judge>.jsonl``). Items with the same source and text (the original of every pair
cut from one note) are judged once per judge and the row is reused (``"same_as"``).

What a pair's scores mean, and the rates, AUROC and intervals of a block of pairs:
:mod:`clinjudge.meta_eval_scores`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clinjudge import __version__
from clinjudge.datasets.items import Dataset, Item
from clinjudge.evaluators.base import Evaluator
from clinjudge.files import atomic_write, dump_line
from clinjudge.inject.pairs import PairRecord
from clinjudge.llm_usage import cost_report
from clinjudge.meta_eval_scores import (
    N_RESAMPLES,
    SIDES,
    PairScore,
    item_id,
    score_pair,
    summarize_scores,
)
from clinjudge.run_dir import failure_summary, judge_dataset, run_lock
from clinjudge.runner import read_completed


def pair_items(pairs: Iterable[PairRecord]) -> list[Item]:
    """Two items per pair, original first (module docstring)."""
    return [
        Item(id=item_id(p.pair_id, side), transcript=p.source, note=text, meta=p.meta)
        for p in pairs
        for side, text in zip(SIDES, (p.original, p.edited), strict=True)
    ]


def pairs_dataset(path: Path, pairs: Sequence[PairRecord]) -> Dataset:
    """The pair file's items as a :class:`Dataset` (SHA-256 of the file's bytes)."""
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return Dataset(name=Path(path).name, path=Path(path), items=pair_items(pairs), sha256=digest)


class _SameTextOnce:
    """``evaluate`` that judges each distinct (source, text) once and reuses the row for the
    other items with the same texts (id replaced, ``same_as`` naming the judged item). Seeded
    with the rows of a previous run so a resumed run reuses them too."""

    def __init__(self, evaluator: Evaluator, items: list[Item], previous: dict[str, dict]):
        self.evaluator = evaluator
        self._done: dict[str, asyncio.Future] = {}
        self._key_of = {item.id: self._key(item) for item in items}
        for row_id, row in previous.items():
            if row_id in self._key_of and not row.get("retry"):
                future = asyncio.get_running_loop().create_future()
                future.set_result(row)
                self._done.setdefault(self._key_of[row_id], future)

    @staticmethod
    def _key(item: Item) -> str:
        return hashlib.sha256(f"{item.transcript}\x00{item.note}".encode()).hexdigest()

    async def evaluate(self, item: Item) -> dict[str, Any]:
        key = self._key_of.get(item.id) or self._key(item)
        if key in self._done:
            row = await asyncio.shield(self._done[key])
            if row["id"] == item.id:
                return row
            return {**row, "id": item.id, "same_as": row.get("same_as", row["id"])}
        future = asyncio.get_running_loop().create_future()
        self._done[key] = future
        try:
            row = await self.evaluator.evaluate(item)
        except BaseException as exc:
            del self._done[key]  # the next item with this text tries again
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning
            raise
        if row.get("retry"):
            del self._done[key]
        future.set_result(row)
        return row


@dataclass
class MetaEvalResult:
    report: dict[str, Any]
    scores: dict[str, list[PairScore]]
    files: list[Path]


async def run_meta_eval(
    pairs_path: Path,
    pairs: Sequence[PairRecord],
    judges: dict[str, Evaluator],
    out_dir: Path,
    *,
    concurrency: int = 4,
    progress: Callable[[str, int], Callable[[], None]] = lambda name, total: lambda: None,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    retry_failed: bool = True,
) -> MetaEvalResult:
    """Run every judge over both sides of every pair (resumably), score the pairs and write
    ``DIR/runs/<judge>.jsonl``, ``DIR/pairs_scored.jsonl``, ``report.json``, ``report.md`` and
    the plots. Top-level ``overall``/``by_type`` of the report are the *first* judge's.

    The first SOAP judge's claims are given to the other SOAP judges (as in ``compare``), so
    they rate the same claims. A run directory grows and resumes; one that would mix
    configurations is refused, naming the setting (:class:`clinjudge.run_dir.RunDir`)."""
    from clinjudge.report.meta_eval_html import write_meta_eval_html
    from clinjudge.report.meta_eval_report import write_meta_eval_report

    out_dir = Path(out_dir)
    dataset = pairs_dataset(pairs_path, pairs)
    with run_lock(out_dir):
        runs = await judge_dataset(
            dataset,
            judges,
            out_dir,
            concurrency=concurrency,
            progress=progress,
            retry_failed=retry_failed,
            wrap=lambda judge, path: _SameTextOnce(
                judge, dataset.items, read_completed(path, key="id")
            ),
        )
        scores = {
            name: [score_pair(p, name, judges[name], run.by_id(), run.failed) for p in pairs]
            for name, run in runs.items()
        }
        failed = {name: run.failed for name, run in runs.items()}
        seconds = {name: run.seconds for name, run in runs.items()}
        resumed = {name: run.resumed for name, run in runs.items()}
        summaries = {
            name: summarize_scores(s, n_resamples=n_resamples, seed=seed)
            for name, s in scores.items()
        }
        first = summaries[next(iter(judges))]
        report = {
            "pairs": pairs_summary(dataset, pairs),
            "judges": summaries,
            "overall": first["overall"],
            "by_type": first["by_type"],
            "first_judge": next(iter(judges)),
            "failed_items": {n: f for n, f in failed.items() if f},
            "items_to_retry": {n: ids for n, run in runs.items() if (ids := run.to_retry())},
            "failures": {
                n: f for n, run in runs.items() if (f := failure_summary(judges[n], run.rows))
            },
            "usage": {n: u for n, j in judges.items() if (u := j.usage()) is not None},
            "cost": cost_report({n: run.rows for n, run in runs.items()}, {}, None),
            "seconds": seconds,
            "resumed_items": resumed,
            "method": {
                "interval": "percentile bootstrap over pairs clustered by source_id; Wilson",
                "n_resamples": n_resamples,
                "seed": seed,
                "overlap": "clinjudge.inject.types.spans_touch",
            },
            "provenance": {
                "package_version": __version__,
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "pairs": dataset.provenance(),
                "judges": {n: j.provenance() for n, j in judges.items()},
            },
        }
        scored_path = out_dir / "pairs_scored.jsonl"
        atomic_write(scored_path, (dump_line(asdict(s)) for ss in scores.values() for s in ss))
        files = write_meta_eval_report(report, out_dir)
        page = write_meta_eval_html(report, pairs, scores, out_dir)
        return MetaEvalResult(report=report, scores=scores, files=[scored_path, *files, page])


def pairs_summary(dataset: Dataset, pairs: Sequence[PairRecord]) -> dict[str, Any]:
    """``path``, ``sha256``, ``n`` and the pair counts ``by_kind`` and ``by_type``."""
    by_kind: dict[str, int] = {}
    by_type: dict[str, int] = {}
    for p in pairs:
        by_kind[p.kind] = by_kind.get(p.kind, 0) + 1
        by_type[p.type] = by_type.get(p.type, 0) + 1
    return {
        "path": str(dataset.path),
        "sha256": dataset.sha256,
        "n": len(pairs),
        "by_kind": by_kind,
        "by_type": by_type,
    }


def run_meta_eval_sync(*args: Any, **kwargs: Any) -> MetaEvalResult:
    return asyncio.run(run_meta_eval(*args, **kwargs))
