"""``clinjudge arena``: which of several systems writes the better notes (SPEC §6, issue 25).

A run over a multi-system dataset (:mod:`clinjudge.datasets.systems`: one item per
encounter and system) in two stages, both through the run layer (:mod:`clinjudge.run_dir`),
so both resume — a re-run judges only what is missing or failed:

1. offline, every text by the judges the pairwise judge reads (:data:`~clinjudge.evaluators.
   pairwise.EVIDENCE_JUDGES`: the offline inference-aware SOAP judge and the offline omission
   judge), rows in ``DIR/runs/<judge>.jsonl`` (on an LLM the judge reads the texts themselves,
   and this stage is empty);
2. the pairs of systems per encounter (:func:`clinjudge.arena.pairing.arena_pairs`) by the
   pairwise judge, rows in ``DIR/runs/pairwise.jsonl``. ``concurrency`` items are judged at
   once (the CLI gives 1 on a local model server: the pairs of one encounter, both orders, go
   back to back, each call opening with the prompt's instructions, criteria and the visit, so
   the server reuses that prefix from the call before).

Then the standings (:func:`clinjudge.arena.standings.standings`: Elo with its initial rating,
K, shuffled orders and bootstrap over encounters; Bradley–Terry; the win/tie/loss matrix;
position bias) and the files ``report.json``, ``leaderboard.md``, ``ratings.png`` and
``report.html``.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clinjudge import __version__
from clinjudge.arena.evidence import TextEvidence, evidence_from_rows
from clinjudge.arena.pairing import arena_pairs
from clinjudge.arena.standings import RatingSettings, standings
from clinjudge.datasets.items import Dataset
from clinjudge.errors import ConfigError
from clinjudge.evaluators.base import Evaluator
from clinjudge.evaluators.pairwise import EVIDENCE_JUDGES, PairwiseEvaluator
from clinjudge.files import read_objects
from clinjudge.report.arena_report import write_arena_report
from clinjudge.run_dir import (
    JudgeRun,
    Progress,
    RunDir,
    check_sources,
    failure_summary,
    no_progress,
    run_judges,
    run_lock,
)


@dataclass
class ArenaResult:
    report: dict[str, Any]
    files: list[Path]


async def run_arena(
    dataset: Dataset,
    systems: list[str],
    text_judges: dict[str, Evaluator],
    pairwise: PairwiseEvaluator,
    out_dir: Path,
    *,
    settings: RatingSettings | None = None,
    pairs_per_item: int | None = None,
    progress: Progress = no_progress,
    command: dict[str, Any] | None = None,
    concurrency: int = 4,
) -> ArenaResult:
    """Judge the texts, then the pairs, resumably into ``out_dir``; write the report
    (module docstring). ``text_judges`` are the judges named in :data:`EVIDENCE_JUDGES`
    (offline) or none (a pairwise judge on an LLM)."""
    settings = settings or RatingSettings()
    if pairwise.uses_model:
        text_judges = {}
        pairwise.use_texts({item.id: item.note for item in dataset.items})
    judges = {**text_judges, pairwise.name: pairwise}
    check_sources(dataset, judges)
    with run_lock(out_dir):
        run_dir = RunDir(out_dir).open(
            RunDir.identity(dataset, judges), cutter=EVIDENCE_JUDGES[0], command=command
        )
        texts = await run_judges(
            dataset.items, text_judges, run_dir, progress=progress, concurrency=concurrency
        )
        if texts:
            pairwise.use_evidence(text_evidence(texts, [i.id for i in dataset.items]))
        pairs = arena_pairs(dataset.items, systems, per_item=pairs_per_item, seed=settings.seed)
        started = time.perf_counter()
        judged = await run_judges(
            pairs, {pairwise.name: pairwise}, run_dir, progress=progress, concurrency=concurrency
        )
        pair_run = judged[pairwise.name]
        pair_seconds = time.perf_counter() - started
        meta = {p.id: p.meta for p in pairs}
        rows = [{**meta[r["id"]], **r} for r in pair_run.rows]
        board = standings(rows, systems, settings, criteria=("overall", *pairwise.criteria))
        new_pairs = len(pairs) - pair_run.resumed
        report = {
            "dataset": dataset.name,
            "systems": systems,
            "judge": pairwise.name,
            "backend": pairwise.identity()["backend"],
            "criteria_asked": list(pairwise.criteria),
            "settings": {
                **settings.as_dict(),
                "pairs_per_item": pairs_per_item or "all",
                "elo_point": f"mean over {settings.n_orders} shuffled match orders",
                "intervals": f"95% percentile bootstrap over encounters ({settings.replicates} "
                "replicates, match order shuffled in each)",
            },
            **board,
            "timing": {
                "pairs_judged_now": new_pairs,
                "seconds_per_pair": pair_seconds / new_pairs if new_pairs else None,
                "seconds_per_pair_with_text_judging": (
                    (pair_seconds + sum(r.seconds for r in texts.values())) / new_pairs
                    if new_pairs
                    else None
                ),
                "seconds_per_text": {n: _per_item(r) for n, r in texts.items()},
            },
            "usage": _usage(pairwise, new_pairs),
            "failed_items": {n: r.failed for n, r in {**texts, **judged}.items() if r.failed},
            "failures": {
                n: f
                for n, j in judges.items()
                if (f := failure_summary(j, {**texts, **judged}[n].rows))
            },
            "skipped_items": [s.model_dump() for s in dataset.skipped],
            "provenance": {
                "package_version": __version__,
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "dataset": dataset.provenance(),
                "judges": {n: j.provenance() for n, j in judges.items()},
            },
        }
        files = write_arena_report(report, rows, out_dir, dataset.items)
        return ArenaResult(report=report, files=files)


def render_arena_again(out_dir: Path, dataset: Dataset) -> ArenaResult:
    """Write an arena run's files again from its ``report.json`` and ``pairs.jsonl``, with the
    notes of ``dataset`` for the pair view; nothing is judged and no rating recomputed.

    Raises:
        ConfigError: the run has no report yet (the arena command writes it at its end).
    """
    found = [out_dir / n for n in ("report.json", "pairs.jsonl")]
    if missing := [p.name for p in found if not p.exists()]:
        raise ConfigError(
            f"{out_dir}: an arena run without {missing[0]} yet; run the same arena command "
            "into it to finish it"
        )
    with run_lock(out_dir):
        report = json.loads(found[0].read_text(encoding="utf-8"))
        rows = [row for _, row in read_objects(found[1])]
        files = write_arena_report(report, rows, out_dir, dataset.items)
    return ArenaResult(report=report, files=files)


def text_evidence(runs: dict[str, JudgeRun], ids: list[str]) -> dict[str, TextEvidence | None]:
    """Each text's evidence from the SOAP and omission rows (``None`` where either judge has
    no complete row for it)."""
    soap, omission = (runs[name].by_id() for name in EVIDENCE_JUDGES)
    found: dict[str, TextEvidence | None] = {}
    for item_id in ids:
        s, o = soap.get(item_id), omission.get(item_id)
        usable = s is not None and o is not None and not s.get("retry") and not o.get("retry")
        found[item_id] = evidence_from_rows(s, o) if usable else None  # type: ignore[arg-type]
    return found


def _usage(pairwise: PairwiseEvaluator, pairs: int) -> dict[str, Any] | None:
    """The model's calls and tokens, and calls per pair judged by this run (``None``
    offline)."""
    usage = pairwise.usage()
    if usage is None:
        return None
    return {**usage, "calls_per_pair": usage["calls"] / pairs if pairs else None}


def _per_item(run: JudgeRun) -> float | None:
    fresh = len(run.rows) - run.resumed
    return run.seconds / fresh if fresh > 0 else None
