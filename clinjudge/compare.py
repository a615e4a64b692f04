"""``clinjudge compare``: several judges over one dataset, on the same claims, into one report.

The first judge's claims are handed to the others, so every judge rates the very same claim ids
and flips can be listed. Per-judge results stream to ``DIR/runs/<judge>.jsonl``; a re-run with the
same settings resumes from them, and a run with different settings into the same directory is
refused (``run.json`` records the settings fingerprint).
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
from clinjudge.graphs.soap_judge import JudgeContext, build_graph
from clinjudge.judges.compare import compare_summary
from clinjudge.judges.factory import JUDGE_NAMES, JudgeSetup
from clinjudge.judges.note_report import claim_rows
from clinjudge.report import write_compare_report
from clinjudge.runner import run_items, run_mismatch
from clinjudge.types import NoteReport


@dataclass
class CompareResult:
    report: dict
    files: list[Path]


def parse_judges(spec: str) -> list[str]:
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise ConfigError("--judges is empty: use e.g. lexical,inference-aware")
    unknown = [n for n in names if n not in JUDGE_NAMES]
    if unknown:
        raise ConfigError(f"unknown judge {unknown[0]!r}: choose from {', '.join(JUDGE_NAMES)}")
    if len(set(names)) != len(names):
        raise ConfigError("--judges lists a judge twice")
    return names


def fingerprint(dataset: Dataset, setups: dict[str, JudgeSetup]) -> dict:
    """What must match for a run directory to be resumed."""
    judges = {}
    for name, setup in setups.items():
        p = setup.provenance
        judges[name] = {
            "backend": p.backend,
            "mode": p.mode,
            "model": p.model,
            "decoding": p.decoding,
            "prompts": [ref.sha256 for ref in p.prompts],
        }
    return {"dataset_sha256": dataset.sha256, "judges": judges, "version": __version__}


def check_resumable(out_dir: Path, settings: dict) -> None:
    manifest = out_dir / "run.json"
    if run_mismatch(manifest, settings):
        raise ConfigError(
            f"{out_dir} holds a run with other settings; use another --out or delete it"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps(settings, indent=2), encoding="utf-8")


async def run_compare(
    dataset: Dataset,
    setups: dict[str, JudgeSetup],
    out_dir: Path,
    *,
    concurrency: int = 4,
    progress: Callable[[str, int], Callable[[], None]] = lambda name, total: lambda: None,
) -> CompareResult:
    check_resumable(out_dir, fingerprint(dataset, setups))
    graph = build_graph()
    runs: dict[str, list[NoteReport]] = {}
    failed: dict[str, dict[str, str]] = {}
    given: dict[str, list[dict]] | None = None
    for name, setup in setups.items():
        context = JudgeContext(verifier=setup.verifier, extractor=setup.extractor)
        result = await run_items(
            graph,
            context,
            dataset.items,
            out_path=out_dir / "runs" / f"{name}.jsonl",
            concurrency=concurrency,
            given_claims=given,
            on_done=progress(name, len(dataset.items)),
        )
        failed[name] = result.failed
        runs[name] = [
            NoteReport.model_validate({k: v for k, v in row.items() if k != "extraction"})
            for row in result.rows
        ]
        if given is None:
            given = {r.note_id: [c.model_dump() for c in r.claims] for r in runs[name]}
    report = {
        "dataset": dataset.name,
        "n_items": len(dataset.items),
        **compare_summary(runs),
        "failed_items": {n: f for n, f in failed.items() if f},
        "usage": {n: s.caller.usage.as_dict() for n, s in setups.items() if s.caller},
        "provenance": {
            "package_version": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "dataset": dataset.provenance(),
            "judges": {n: s.provenance.model_dump() for n, s in setups.items()},
        },
    }
    write_verdicts(out_dir / "verdicts.jsonl", runs)
    files = write_compare_report(report, out_dir)
    return CompareResult(report=report, files=[out_dir / "verdicts.jsonl", *files])


def write_verdicts(path: Path, runs: dict[str, list[NoteReport]]) -> None:
    """One line per judged claim: the note's ``id``, the ``judge``, and the claim fields of
    ``judge --json`` — the claim's own id under ``claim_id`` (``id`` names the note)."""
    with path.open("w", encoding="utf-8") as handle:
        for name, reports in runs.items():
            for report in reports:
                for row in claim_rows(report):
                    line = {"id": report.note_id, "judge": name, "claim_id": row.pop("id"), **row}
                    handle.write(json.dumps(line, ensure_ascii=False) + "\n")


def run_compare_sync(*args, **kwargs) -> CompareResult:
    return asyncio.run(run_compare(*args, **kwargs))
