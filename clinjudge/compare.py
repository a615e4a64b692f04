"""``clinjudge compare``: several judges over one dataset into one report.

Any :class:`~clinjudge.evaluators.base.Evaluator` can take part (SOAP judges, CEF, the
fact-checker). The first SOAP judge's claims are handed to the other SOAP judges, so they rate
the very same claim ids and flips can be listed. Per-judge results stream to
``DIR/runs/<judge>.jsonl``; a re-run with the same settings resumes from them, and a run with
different settings into the same directory is refused (:class:`clinjudge.run_dir.RunDir`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clinjudge import __version__
from clinjudge.datasets.items import Dataset
from clinjudge.evaluators.base import Evaluator
from clinjudge.judges.compare import paired_rates, verdict_flips
from clinjudge.report import write_compare_report
from clinjudge.report.flagged_claims import flagged_claims
from clinjudge.report.html_report import write_compare_html
from clinjudge.run_dir import failure_summary, judge_dataset


@dataclass
class CompareResult:
    report: dict
    files: list[Path]


async def run_compare(
    dataset: Dataset,
    judges: dict[str, Evaluator],
    out_dir: Path,
    *,
    concurrency: int = 4,
    progress: Callable[[str, int], Callable[[], None]] = lambda name, total: lambda: None,
    retry_failed: bool = True,
) -> CompareResult:
    """Run every judge over the dataset (resumably, :func:`clinjudge.run_dir.run_judges`) and
    write the report files."""
    runs = await judge_dataset(
        dataset,
        judges,
        out_dir,
        concurrency=concurrency,
        progress=progress,
        retry_failed=retry_failed,
    )
    rows = {name: run.rows for name, run in runs.items()}
    failed = {name: run.failed for name, run in runs.items()}
    report = {
        "dataset": dataset.name,
        "n_items": len(dataset.items),
        "skipped_items": [s.model_dump() for s in dataset.skipped],
        **compare_rows(judges, rows),
        "failed_items": {n: f for n, f in failed.items() if f},
        "items_to_retry": {n: ids for n, run in runs.items() if (ids := run.to_retry())},
        "failures": {n: f for n, j in judges.items() if (f := failure_summary(j, rows[n]))},
        "usage": {n: u for n, j in judges.items() if (u := j.usage()) is not None},
        "provenance": {
            "package_version": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "dataset": dataset.provenance(),
            "judges": {n: j.provenance() for n, j in judges.items()},
        },
    }
    write_verdicts(out_dir / "verdicts.jsonl", judges, rows)
    kinds = {name: judge.kind for name, judge in judges.items()}
    files = write_compare_report(report, out_dir, flagged_claims(kinds, rows))
    page = write_compare_html(report, dataset.items, kinds, rows, out_dir)
    return CompareResult(report=report, files=[out_dir / "verdicts.jsonl", *files, page])


def compare_rows(judges: dict[str, Evaluator], rows: dict[str, list[dict]]) -> dict:
    """``judges`` (each judge's summary), ``per_item`` (each item's scores under every judge
    that has a row for it), and, between SOAP judges, ``paired`` rate differences and claim
    ``flips``."""
    by_id = {name: {row["id"]: row for row in judge_rows} for name, judge_rows in rows.items()}
    ids = list(dict.fromkeys(row["id"] for judge_rows in rows.values() for row in judge_rows))
    per_item = []
    for item_id in ids:
        entry: dict = {"id": item_id}
        for name, judge in judges.items():
            if (row := by_id[name].get(item_id)) is not None:
                entry[name] = judge.item_scores(row)
        per_item.append(entry)
    soap_runs = {
        name: [judge.report(row) for row in rows[name]]  # type: ignore[attr-defined]
        for name, judge in judges.items()
        if judge.kind == "soap"
    }
    return {
        "judges": {name: judge.summarize(rows[name]) for name, judge in judges.items()},
        "paired": paired_rates(soap_runs),
        "per_item": per_item,
        "flips": verdict_flips(soap_runs),
    }


def write_verdicts(path: Path, judges: dict[str, Evaluator], rows: dict[str, list[dict]]) -> None:
    """One line per judged unit (claim, question) of every judge: the item's ``id``, the
    ``judge``, and the judge's fields for it (a SOAP claim's own id is ``claim_id``)."""
    with path.open("w", encoding="utf-8") as handle:
        for name, judge in judges.items():
            for row in rows[name]:
                for line in judge.verdict_lines(row):
                    handle.write(json.dumps(line, ensure_ascii=False) + "\n")


def run_compare_sync(*args, **kwargs) -> CompareResult:
    return asyncio.run(run_compare(*args, **kwargs))
