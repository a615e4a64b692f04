"""``clinjudge compare``: several judges over one dataset into one report.

Any :class:`~clinjudge.evaluators.base.Evaluator` can take part (SOAP judges, CEF, the
fact-checker). The first SOAP judge's claims are handed to the other SOAP judges, so they rate
the very same claim ids and flips can be listed. Per-judge results stream to
``DIR/runs/<judge>.jsonl``; a re-run with the same settings resumes from them, and a run with
different settings into the same directory is refused (``run.json`` records the fingerprint).
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
from clinjudge.errors import ConfigError
from clinjudge.evaluators.base import Evaluator
from clinjudge.evaluators.soap import SoapEvaluator
from clinjudge.judges.compare import paired_rates, verdict_flips
from clinjudge.report import write_compare_report
from clinjudge.runner import run_evaluator, run_mismatch


@dataclass
class CompareResult:
    report: dict
    files: list[Path]


def fingerprint(dataset: Dataset, judges: dict[str, Evaluator]) -> dict:
    """What must match for a run directory to be resumed."""
    return {
        "dataset_sha256": dataset.sha256,
        "judges": {name: judge.identity() for name, judge in judges.items()},
        "version": __version__,
    }


def check_resumable(out_dir: Path, settings: dict) -> None:
    manifest = out_dir / "run.json"
    if run_mismatch(manifest, settings):
        raise ConfigError(
            f"{out_dir} holds a run with other settings; use another --out or delete it"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps(settings, indent=2), encoding="utf-8")


def check_dataset(dataset: Dataset, judges: dict[str, Evaluator]) -> None:
    """Judges that read a source text need every item to have one."""
    needing = [name for name, judge in judges.items() if judge.needs_source]
    missing = next((item.id for item in dataset.items if not item.transcript.strip()), None)
    if needing and missing is not None:
        raise ConfigError(
            f"{dataset.path}: item {missing!r} has no source text (transcript/dialogue/source "
            f"column), which judge {needing[0]!r} needs"
        )


async def run_compare(
    dataset: Dataset,
    judges: dict[str, Evaluator],
    out_dir: Path,
    *,
    concurrency: int = 4,
    progress: Callable[[str, int], Callable[[], None]] = lambda name, total: lambda: None,
) -> CompareResult:
    """Run every judge over the dataset (resumably) and write the report files."""
    check_dataset(dataset, judges)
    check_resumable(out_dir, fingerprint(dataset, judges))
    rows: dict[str, list[dict]] = {}
    failed: dict[str, dict[str, str]] = {}
    given: dict[str, list[dict]] | None = None
    for name, judge in judges.items():
        if isinstance(judge, SoapEvaluator):
            judge.given_claims = given
        result = await run_evaluator(
            judge,
            dataset.items,
            out_path=out_dir / "runs" / f"{name}.jsonl",
            concurrency=concurrency,
            on_done=progress(name, len(dataset.items)),
        )
        failed[name] = result.failed
        rows[name] = result.rows
        if isinstance(judge, SoapEvaluator) and given is None:
            given = {row["id"]: row["claims"] for row in result.rows}
    report = {
        "dataset": dataset.name,
        "n_items": len(dataset.items),
        **compare_rows(judges, rows),
        "failed_items": {n: f for n, f in failed.items() if f},
        "usage": {n: u for n, j in judges.items() if (u := j.usage()) is not None},
        "provenance": {
            "package_version": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "dataset": dataset.provenance(),
            "judges": {n: j.provenance() for n, j in judges.items()},
        },
    }
    write_verdicts(out_dir / "verdicts.jsonl", judges, rows)
    files = write_compare_report(report, out_dir)
    return CompareResult(report=report, files=[out_dir / "verdicts.jsonl", *files])


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
        name: [SoapEvaluator.report(row) for row in rows[name]]
        for name, judge in judges.items()
        if isinstance(judge, SoapEvaluator)
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
