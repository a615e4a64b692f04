"""Benchmark of the omission judge (issue 14), offline.

1. **Injected critical omissions.** Every ``critical_omission`` candidate (one note sentence
   carrying a red flag, an allergy, an abnormal result or a return precaution deleted) of the
   ACI-Bench notes of a split. Per pair, the judge runs on both notes (same transcript, so the
   same facts): *detected* ⇔ some fact covered in the original is omitted in the edited note
   (and *detected as critical* ⇔ such a fact is critical). *False omissions* on the untouched
   note: over the offline rewrite pairs (brand/generic, lay → clinical, abbreviation: the same
   facts in other words), the share of pairs where a fact covered in the original is omitted
   in the rewrite, and the share of facts so lost.
2. **Systems of test3.** Omission and critical-omission rates (pooled, Wilson 95%) of the
   reference notes and the ``model_notes/`` systems, among them the transcript-copy baseline
   (should be near 0) and the longest-doctor-turn baseline (many).
3. **MTS-Dialog human scores.** Spearman ρ of the omission rate with human ``OmissionRate``
   and of coverage (1 − omission rate) with ``FactualRecall`` over the 100 scored summaries,
   95% bootstrap intervals resampling dialogues, on all summaries and on the two halves by
   dialogue rank (even = every other dialogue, odd = the rest), so that over-fitting shows.
4. Seconds per note.

    .venv/bin/python bench/bench_omission.py [--split train,valid|test3] [--limit N]
        [--skip injection,systems,mts]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from clinjudge.datasets import load_aci_bench  # noqa: E402
from clinjudge.datasets.items import Item  # noqa: E402
from clinjudge.evaluators import BuildOptions, build_evaluator  # noqa: E402
from clinjudge.inject.injectors import INJECTORS  # noqa: E402
from clinjudge.inject.taxonomy import load_taxonomy, select_types  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402
from clinjudge.metrics.agreement import spearman  # noqa: E402
from clinjudge.metrics.intervals import wilson_interval  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ACI = DATA / "aci-bench"
MTS = DATA / "mts-dialog" / "human_scored_summaries.jsonl"
SYSTEMS = ("GPT-4_test3", "ChatGPT_test3", "BART_large_clef_taskC_test3")
BASELINES = ("transcript_clef_taskC_test3", "longest_doctor_turn_clef_taskC_test3")


def judge_all(judge, items: list[Item], timings: list[float] | None = None) -> list[dict]:
    async def run() -> list[dict]:
        rows = []
        for item in items:
            started = time.perf_counter()
            rows.append(await judge.evaluate(item))
            if timings is not None:
                timings.append(time.perf_counter() - started)
        return rows

    return asyncio.run(run())


def lost_facts(original: dict, edited: dict) -> list[dict]:
    """Facts covered in the original and omitted in the edited note."""
    before = {f["id"]: f["status"] for f in original["facts"] or []}
    return [
        f
        for f in edited["facts"] or []
        if f["status"] == "omitted" and before.get(f["id"]) == "covered"
    ]


def notes(split: str) -> list[Item]:
    items: list[Item] = []
    for name in split.split(","):
        path = (
            ACI / "challenge_data" / ("clef_taskC_test3.csv" if name == "test3" else f"{name}.csv")
        )
        items += load_aci_bench(path).items
    return items


def injection(judge, kb, items: list[Item]) -> None:
    pairs = []
    for item in items:
        for p in INJECTORS["critical_omission"].candidates(
            item.note, item.transcript, kb=kb, source_id=item.id
        ):
            pairs.append((item, p))
    originals = {i.id: r for i, r in zip(items, judge_all(judge, items), strict=True)}
    edited = judge_all(
        judge,
        [
            Item(id=f"{i.id}~{n}", transcript=i.transcript, note=p.note)
            for n, (i, p) in enumerate(pairs)
        ],
    )
    detected = critical = 0
    by_item: dict[str, list[int]] = {}
    for (item, p), row in zip(pairs, edited, strict=True):
        lost = lost_facts(originals[item.id], row)
        if os.environ.get("BENCH_VERBOSE"):
            print("   ", p.rationale[:110], "->", [(f["text"], f["category"]) for f in lost])
        detected += bool(lost)
        critical += any(f["importance"] == "critical" for f in lost)
        kind = p.rationale.split(":")[0].removeprefix("omitted the ")
        by_item.setdefault(kind, [0, 0])
        by_item[kind][0] += bool(lost)
        by_item[kind][1] += 1
    n = len(pairs)
    print(f"== injected critical omissions: {n} pairs from {len(items)} notes ==")
    for label, k in (
        ("detected (a covered fact omitted)", detected),
        ("detected as critical", critical),
    ):
        lo, hi = wilson_interval(k, n)
        print(f"  {label:36}: {k}/{n} = {k / n:.1%} [{lo:.1%}–{hi:.1%}]")
    for kind, (k, m) in sorted(by_item.items()):
        print(f"    {kind:28}: {k}/{m}")
    rewrites(judge, kb, items, originals)


def rewrites(judge, kb, items: list[Item], originals: dict[str, dict]) -> None:
    taxonomy = load_taxonomy()
    pairs = []
    for t in select_types("rewrites", offline=True):
        for name in taxonomy[t].injectors:
            for item in items:
                for p in INJECTORS[name].candidates(
                    item.note, item.transcript, kb=kb, source_id=item.id
                ):
                    pairs.append((item, p))
    edited = judge_all(
        judge,
        [
            Item(id=f"{i.id}~r{n}", transcript=i.transcript, note=p.note)
            for n, (i, p) in enumerate(pairs)
        ],
    )
    flagged = lost_total = covered_total = 0
    for (item, _), row in zip(pairs, edited, strict=True):
        lost = lost_facts(originals[item.id], row)
        flagged += bool(lost)
        lost_total += len(lost)
        covered_total += sum(f["status"] == "covered" for f in originals[item.id]["facts"])
    n = len(pairs)
    lo, hi = wilson_interval(flagged, n)
    print(f"== false omissions on legitimate rewrites: {n} pairs ==")
    print(
        f"  rewrites losing a covered fact: {flagged}/{n} = {flagged / n:.1%} [{lo:.1%}–{hi:.1%}]"
    )
    print(
        f"  covered facts lost: {lost_total}/{covered_total} "
        f"= {lost_total / max(covered_total, 1):.2%}"
    )


def read_system(name: str) -> list[Item]:
    with (ACI / "model_notes" / f"{name}.csv").open(newline="", encoding="utf-8") as f:
        return [
            Item(id=r["encounter_id"], transcript=r.get("dialogue", ""), note=r["note"])
            for r in csv.DictReader(f)
        ]


def systems(judge, limit: int | None) -> None:
    reference = notes("test3")[:limit]
    dialogues = {i.id: i.transcript for i in reference}
    print(f"== test3 systems ({len(reference)} encounters) ==")
    print(f"  {'system':40} {'omission':>22} {'critical omission':>24} {'contradicted':>12}")
    for name in ("reference", *SYSTEMS, *BASELINES):
        items = reference if name == "reference" else read_system(name)
        items = [
            Item(id=i.id, transcript=dialogues.get(i.id, i.transcript), note=i.note)
            for i in items
            if i.id in dialogues
        ]
        summary = judge.summarize(judge_all(judge, items))
        h = summary["headline"]
        cells = []
        for metric in ("omission_rate", "critical_omission_rate"):
            m = h[metric]
            if m["value"] is None:
                cells.append("n/a")
                continue
            lo, hi = m["ci95"]
            cells.append(f"{m['value']:.1%} [{lo:.0%}–{hi:.0%}] n={m['n']}")
        contradicted = h["contradiction_rate"]["value"] or 0.0
        print(f"  {name:40} {cells[0]:>22} {cells[1]:>24} {contradicted:>12.1%}")


def mts(judge, limit: int | None) -> None:
    rows = [
        json.loads(line) for line in MTS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    rows = rows[:limit]
    items = [
        Item(id=str(r["row"]), transcript=r["dialogue"], note=r["automatic_summary"]) for r in rows
    ]
    judged = judge_all(judge, items)
    dialogues = sorted({r["dialogue_id"] for r in rows})
    rank = {d: i for i, d in enumerate(dialogues)}
    print(f"== MTS-Dialog: {len(rows)} human-scored summaries of {len(dialogues)} dialogues ==")
    for half in ("all", "even", "odd"):
        keep = [
            k
            for k, r in enumerate(rows)
            if half == "all" or rank[r["dialogue_id"]] % 2 == (half == "odd")
        ]
        keep = [k for k in keep if judged[k]["omission_rate"] is not None]
        groups = [rows[k]["dialogue_id"] for k in keep]
        for ours, theirs, sign in (
            ("omission_rate", "OmissionRate", 1),
            ("omission_rate", "FactualRecall", -1),
        ):
            x = np.array([sign * judged[k][ours] for k in keep])
            y = np.array([float(rows[k]["human"][theirs]) for k in keep])
            rho = spearman(x, y)
            ci = cluster_ci(x, y, groups)
            label = "omission rate vs OmissionRate" if sign == 1 else "coverage vs FactualRecall"
            print(
                f"  {half:>4} (n={len(keep)}): {label:32} ρ = {rho:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"
            )


def cluster_ci(
    x: np.ndarray, y: np.ndarray, groups: list, n_boot: int = 2000
) -> tuple[float, float]:
    """95% percentile bootstrap of Spearman ρ, resampling whole dialogues."""
    rng = np.random.default_rng(0)
    ids = sorted(set(groups))
    members = {g: [k for k, h in enumerate(groups) if h == g] for g in ids}
    values = []
    for _ in range(n_boot):
        pick = [k for g in rng.choice(ids, size=len(ids)) for k in members[g]]
        if len(set(x[pick])) > 1 and len(set(y[pick])) > 1:
            values.append(spearman(x[pick], y[pick]))
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="train,valid")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--skip", default="")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    kb = KnowledgeBase.default()
    judge = build_evaluator("omission", BuildOptions(backend="offline", knowledge=kb))
    started = time.perf_counter()
    if "injection" not in skip:
        injection(judge, kb, notes(args.split)[: args.limit])
    if "systems" not in skip:
        systems(judge, args.limit)
    if "mts" not in skip:
        mts(judge, args.limit)
    timings: list[float] = []
    judge_all(judge, notes("test3")[:10], timings)
    print(
        f"seconds per note (10 test3 notes, transcript cache cold then warm): "
        f"median {statistics.median(timings):.3f}, mean {statistics.mean(timings):.3f}"
    )
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
