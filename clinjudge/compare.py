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
from dataclasses import dataclass, field
from pathlib import Path

from clinjudge import __version__
from clinjudge.compare_systems import system_rates
from clinjudge.datasets.items import Dataset
from clinjudge.evaluators.base import Evaluator
from clinjudge.files import atomic_write, dump_line
from clinjudge.judges.compare import paired_rates, verdict_flips
from clinjudge.llm_usage import Prices, cost_report
from clinjudge.report import write_compare_report
from clinjudge.report.claims_csv import write_claims_csv
from clinjudge.report.flagged_claims import flagged_claims
from clinjudge.report.html_report import write_compare_html
from clinjudge.run_dir import RunDir, failure_summary, judge_dataset, run_lock


@dataclass
class CompareResult:
    report: dict
    files: list[Path]


@dataclass
class Judged:
    """What a compare report is made of, per judge: rows (in item order), items whose call
    raised, items to judge again, provenance and usage; ``not_judged``: items of the dataset
    with no row yet (a report re-rendered from an unfinished run)."""

    rows: dict[str, list[dict]]
    failed: dict[str, dict[str, str]]
    to_retry: dict[str, list[str]]
    provenance: dict[str, dict]
    usage: dict[str, dict]
    not_judged: dict[str, list[str]] = field(default_factory=dict)


async def run_compare(
    dataset: Dataset,
    judges: dict[str, Evaluator],
    out_dir: Path,
    *,
    concurrency: int = 4,
    progress: Callable[[str, int], Callable[[], None]] = lambda name, total: lambda: None,
    retry_failed: bool = True,
    command: dict | None = None,
    kept: dict[str, Evaluator] | None = None,
    prices: Prices | None = None,
) -> CompareResult:
    """Run every judge over the dataset (resumably, :func:`clinjudge.run_dir.run_judges`) and
    write the report files. ``command`` (how to load the dataset and build the judges) is kept
    in the run's manifest for ``clinjudge report``. ``kept``: judges the run already holds that
    this command does not name — their rows are reported as they are, not judged (a run's
    reports cover every judge it holds). ``prices`` turn the run's tokens into money."""
    with run_lock(out_dir):
        runs = await judge_dataset(
            dataset,
            judges,
            out_dir,
            command=command,
            concurrency=concurrency,
            progress=progress,
            retry_failed=retry_failed,
        )
        judged = Judged(
            rows={name: run.rows for name, run in runs.items()},
            failed={name: run.failed for name, run in runs.items() if run.failed},
            to_retry={name: ids for name, run in runs.items() if (ids := run.to_retry())},
            provenance={name: judge.provenance() for name, judge in judges.items()},
            usage={name: u for name, judge in judges.items() if (u := judge.usage()) is not None},
        )
        if kept:
            judged = _with_kept(judged, judged_on_disk(dataset, kept, out_dir), kept)
            every = {**kept, **judges}
            recorded = [n for n in RunDir(out_dir).recorded().get("judges", {}) if n in every]
            judges = {n: every[n] for n in [*recorded, *(n for n in every if n not in recorded)]}
        return write_compare(dataset, judges, judged, out_dir, prices=prices)


def _with_kept(judged: Judged, on_disk: Judged, kept: dict[str, Evaluator]) -> Judged:
    """``judged`` with the rows of the ``kept`` judges as ``on_disk`` holds them."""
    return Judged(
        rows={**judged.rows, **{n: on_disk.rows[n] for n in kept}},
        failed=judged.failed,
        to_retry={**judged.to_retry, **{n: v for n, v in on_disk.to_retry.items() if n in kept}},
        provenance={**judged.provenance, **{n: on_disk.provenance[n] for n in kept}},
        usage=judged.usage,
        not_judged={**on_disk.not_judged, **judged.not_judged},
    )


def write_compare(
    dataset: Dataset,
    judges: dict[str, Evaluator],
    judged: Judged,
    out_dir: Path,
    *,
    prices: Prices | None = None,
) -> CompareResult:
    """``report.json``, ``report.md``, ``verdicts.jsonl``, the plots and ``report.html`` of
    ``judged`` (the judges render rows; they make no call here); ``cost`` sums the rows' own
    costs (resumed rows included), in money when there are ``prices``."""
    rows = judged.rows
    system_of = {i.id: str(i.meta["system"]) for i in dataset.items if "system" in i.meta}
    report = {
        "dataset": dataset.name,
        "n_items": len(dataset.items),
        "skipped_items": [s.model_dump() for s in dataset.skipped],
        **compare_rows(judges, rows),
        "failed_items": judged.failed,
        "items_to_retry": judged.to_retry,
        "failures": {n: f for n, j in judges.items() if (f := failure_summary(j, rows[n]))},
        "usage": judged.usage,
        "cost": cost_report(rows, system_of, prices),
        "provenance": {
            "package_version": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "dataset": dataset.provenance(),
            "judges": judged.provenance,
        },
    }
    if judged.not_judged:
        report["not_judged"] = judged.not_judged
    if systems := system_rates(judges, rows, dataset.items):
        report["systems"] = systems
    lines = verdict_lines(judges, rows)
    atomic_write(out_dir / "verdicts.jsonl", (dump_line(line) for line in lines))
    write_claims_csv(out_dir / "claims.csv", lines, dataset.items)
    kinds = {name: judge.kind for name, judge in judges.items()}
    files = write_compare_report(report, out_dir, flagged_claims(kinds, rows))
    page = write_compare_html(report, dataset.items, kinds, rows, out_dir)
    written = [out_dir / "verdicts.jsonl", out_dir / "claims.csv", *files, page]
    return CompareResult(report=report, files=written)


def judged_on_disk(dataset: Dataset, judges: dict[str, Evaluator], out_dir: Path) -> Judged:
    """The rows a run directory holds for ``dataset``'s items, with the provenance and usage
    its last report recorded (else the manifest's judge identity): what ``clinjudge report``
    renders without judging anything."""
    from clinjudge.run_dir import JudgeRun, RunDir
    from clinjudge.runner import read_completed

    run_dir = RunDir(out_dir)
    manifest = run_dir.recorded()
    last_report = out_dir / "report.json"
    last = json.loads(last_report.read_text(encoding="utf-8")) if last_report.exists() else {}
    recorded = last.get("provenance", {}).get("judges", {})
    rows: dict[str, list[dict]] = {}
    not_judged: dict[str, list[str]] = {}
    for name in judges:
        on_disk = read_completed(run_dir.rows_path(name), key="id")
        rows[name] = [on_disk[item.id] for item in dataset.items if item.id in on_disk]
        if missing := [item.id for item in dataset.items if item.id not in on_disk]:
            not_judged[name] = missing
    return Judged(
        rows=rows,
        failed={},
        to_retry={n: ids for n, r in rows.items() if (ids := JudgeRun(r).to_retry())},
        provenance={n: recorded.get(n) or manifest.get("judges", {}).get(n, {}) for n in judges},
        usage={n: u for n in judges if (u := last.get("usage", {}).get(n)) is not None},
        not_judged=not_judged,
    )


def compare_rows(judges: dict[str, Evaluator], rows: dict[str, list[dict]]) -> dict:
    """``judges`` (each judge's summary), ``per_item`` (each item's scores under every judge
    that has a row for it, and its ``cost`` per judge), and, between SOAP judges, ``paired``
    rate differences and claim ``flips``."""
    by_id = {name: {row["id"]: row for row in judge_rows} for name, judge_rows in rows.items()}
    ids = list(dict.fromkeys(row["id"] for judge_rows in rows.values() for row in judge_rows))
    per_item = []
    for item_id in ids:
        entry: dict = {"id": item_id}
        for name, judge in judges.items():
            if (row := by_id[name].get(item_id)) is not None:
                entry[name] = judge.item_scores(row)
                if row.get("cost") is not None:
                    entry.setdefault("cost", {})[name] = row["cost"]
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


def verdict_lines(judges: dict[str, Evaluator], rows: dict[str, list[dict]]) -> list[dict]:
    """One line per judged unit (claim, question) of every judge — ``verdicts.jsonl``: the
    item's ``id``, the ``judge``, and the judge's fields for it (a SOAP claim's own id is
    ``claim_id``)."""
    return [
        line
        for name, judge in judges.items()
        for row in rows[name]
        for line in judge.verdict_lines(row)
    ]


def run_compare_sync(*args, **kwargs) -> CompareResult:
    return asyncio.run(run_compare(*args, **kwargs))
