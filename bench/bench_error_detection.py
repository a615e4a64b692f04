"""Benchmark of the paired error-detection harness on the 319 MEDEC-MS validation pairs (issue 4).

Runs detect → report (the Python API behind ``clinjudge detect`` / ``clinjudge pairs``) for:

- the three offline baselines: ``always-error``, ``never-error``, ``random`` (seed 0);
- the offline SOAP verifier used as an error detector. MEDEC notes have no transcript, so each
  sentence of a note is verified (inference-aware mode) against the *other* sentences of the same
  note, standing in for the transcript; the note is flagged when a sentence is judged a
  contradiction (tier 5) — or, in the looser variant, tier 4–5 — and the evidence quoted is that
  sentence (tier 5 first, then the first flagged one), so ECA can score its localization.

Prints one row per detector (pointwise metrics, BCR with its interval, independence ratio, ECA
TP-localization, parse failures, seconds) and the across-detector mean/SD of BCR; writes each
run's ``predictions.jsonl`` and report (``report.json``, ``report.md``, plots) under ``--out``,
plus ``bcr_vs_f1_all.png`` with every detector on one figure.

    .venv/bin/python bench/bench_error_detection.py [--data ../shared/data/medec/...jsonl]
        [--out DIR] [--limit N] [--dense]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from clinjudge.datasets.medec import load_pair_dataset
from clinjudge.graphs.error_detection import arun_detection
from clinjudge.grounding.note_input import NoteInput
from clinjudge.judges.error_detection import BaselineResponder, format_four_lines
from clinjudge.judges.offline import OfflineConfig, OfflineVerifier
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.metrics.paired import across_configurations, mean_independence_ratio
from clinjudge.report.pairs_plots import plot_bcr_vs_f1
from clinjudge.report.pairs_report import write_pairs_report
from clinjudge.text.sentences import split_sentences
from clinjudge.types import Claim, Verdict

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "medec"
    / "medec_ms_error_correct_pairs.jsonl"
)


_VERIFIER: OfflineVerifier | None = None  # set before the worker processes are forked


def sentence_tiers(text: str) -> list[tuple[int, str, str]]:
    """(tier, sentence, rationale) for each sentence of a note judged against the others."""
    assert _VERIFIER is not None
    sentences = [s.text for s in split_sentences(text)]
    out = []
    for i, sentence in enumerate(sentences):
        rest = " ".join(sentences[:i] + sentences[i + 1 :])
        claim = Claim(id=f"s{i}", text=sentence, section="assessment", start=0, end=len(sentence))
        (outcome,) = asyncio.run(_VERIFIER.verify([claim], NoteInput(rest, sentence)))
        if isinstance(outcome, Verdict):
            out.append((outcome.tier, sentence, outcome.rationale))
    return out


class SentenceVerdicts:
    """Per note, the offline verifier's sentence tiers, computed once for all notes (CPU-bound:
    a pool of forked worker processes shares the loaded knowledge base) and shared by the two
    flag rules."""

    def __init__(self, verifier: OfflineVerifier) -> None:
        self.verifier = verifier
        self.cache: dict[str, list[tuple[int, str, str]]] = {}

    def precompute(self, notes, workers: int) -> None:
        global _VERIFIER
        _VERIFIER = self.verifier
        texts = [n.text for n in notes]
        if workers > 1:
            context = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(workers, mp_context=context) as pool:
                results = list(pool.map(sentence_tiers, texts, chunksize=8))
        else:
            results = [sentence_tiers(t) for t in texts]
        self.cache = {n.note_id: r for n, r in zip(notes, results, strict=True)}

    async def tiers(self, note_id: str, text: str) -> list[tuple[int, str, str]]:
        if note_id not in self.cache:
            self.cache[note_id] = sentence_tiers(text)
        return self.cache[note_id]


class OfflineDetector:
    """A `Responder`: flags a note when a sentence gets one of ``flag_tiers``."""

    def __init__(self, verdicts: SentenceVerdicts, flag_tiers: frozenset[int], label: str):
        self.verdicts = verdicts
        self.flag_tiers = flag_tiers
        self.name = f"offline-verifier:{label}"

    def info(self) -> dict:
        return {"detector": self.name, "flag_tiers": sorted(self.flag_tiers)}

    async def respond(self, note_id: str, text: str) -> str:
        judged = await self.verdicts.tiers(note_id, text)
        flagged = sorted(
            (t for t in judged if t[0] in self.flag_tiers), key=lambda t: -t[0]
        )  # stable: tier 5 first, then reading order
        if not flagged:
            return format_four_lines(None, f"{len(judged)} sentences, none flagged.", 60, False)
        tier, sentence, why = flagged[0]
        return format_four_lines(sentence, f"tier {tier}: {why}", 60, True)


async def run_one(data, responder, out_dir: Path) -> tuple[dict, float]:
    started = time.perf_counter()
    run = await arun_detection(data, responder, out_dir / "predictions.jsonl", concurrency=4)
    info = {**responder.info(), "dataset": data.provenance()}
    report, _ = write_pairs_report(run.rows, out_dir / "report", run=info)
    return report, time.perf_counter() - started


def row(name: str, r: dict, seconds: float) -> str:
    def pct(entry: dict | None) -> str:
        v = (entry or {}).get("value")
        return "  n/a" if v is None else f"{100 * v:5.1f}"

    ci = r["bcr"]["ci95"]
    ratio = r["independence_ratio"]["value"]
    mcc = r["mcc"]["value"]
    return (
        f"{name:<28} {pct(r['sensitivity'])} {pct(r['specificity'])} {pct(r['precision'])} "
        f"{r['f1']['value'] or 0:5.3f} {pct(r['balanced_accuracy'])} "
        f"{'  n/a' if mcc is None else f'{mcc:+.3f}'} {pct(r['flag_rate'])} "
        f"{pct(r['bcr'])} [{100 * ci[0]:4.1f}, {100 * ci[1]:4.1f}] "
        f"{'  n/a' if ratio is None else f'{ratio:5.2f}'} {pct(r['eca']['tp_localization'])} "
        f"{r['parse_failures']['k']:3d} {seconds:6.1f}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None, help="first N pairs only")
    parser.add_argument("--dense", action="store_true", help="offline verifier with embeddings")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_error_detection_"))
    total = time.perf_counter()
    data = load_pair_dataset(args.data)
    if args.limit:
        data = data.head(args.limit)
    print(f"{data.name}: {len(data.pairs)} pairs, {len(data.notes)} notes -> {out}")

    detectors: list = [BaselineResponder(k) for k in ("always-error", "never-error", "random")]
    kb_started = time.perf_counter()
    verifier = OfflineVerifier(
        "inference-aware", KnowledgeBase.default(), OfflineConfig(dense=args.dense)
    )
    verdicts = SentenceVerdicts(verifier)
    kb_seconds = time.perf_counter() - kb_started
    offline_started = time.perf_counter()
    verdicts.precompute(data.notes, args.workers)
    offline_seconds = time.perf_counter() - offline_started
    print(
        f"offline verifier: {sum(len(v) for v in verdicts.cache.values())} sentences of "
        f"{len(data.notes)} notes judged in {offline_seconds:.1f} s ({args.workers} workers; "
        f"knowledge load {kb_seconds:.1f} s)"
    )
    detectors += [
        OfflineDetector(verdicts, frozenset({5}), "tier5"),
        OfflineDetector(verdicts, frozenset({4, 5}), "tier4-5"),
    ]
    header = (
        f"{'detector':<28} {'sens':>5} {'spec':>5} {'prec':>5} {'F1':>5} {'BA':>5} {'MCC':>6} "
        f"{'flag':>5} {'BCR':>5} {'BCR 95% CI':>12} {'indep':>5} {'TPloc':>5} {'PF':>3} "
        f"{'sec':>6}"
    )
    print(header)
    reports: dict[str, dict] = {}
    for detector in detectors:
        label = detector.name.split(":", 1)[1]
        report, seconds = await run_one(data, detector, out / label)
        reports[label] = report
        print(row(label, report, seconds))
    bcrs = {k: r["bcr"]["value"] for k, r in reports.items()}
    spread = across_configurations(bcrs)
    ratios = [r["independence_ratio"]["value"] for r in reports.values()]
    plot_bcr_vs_f1(reports, out / "bcr_vs_f1_all.png")
    summary = {
        "bcr": bcrs,
        "bcr_mean_sd": spread,
        "mean_independence_ratio": mean_independence_ratio(ratios),
        "knowledge_load_seconds": round(kb_seconds, 2),
        "offline_verifier_seconds": round(offline_seconds, 2),
        "total_seconds": round(time.perf_counter() - total, 2),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(
        f"BCR across detectors: mean {spread['mean']:.3f}, SD {spread['sd']:.3f}; "
        f"mean independence ratio {summary['mean_independence_ratio']}"
    )
    print(f"total {summary['total_seconds']:.1f} s (offline rows exclude the verifier time)")


if __name__ == "__main__":
    asyncio.run(main())
