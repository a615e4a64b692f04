"""The framework's quality dashboard (issue 7 benchmark): offline injection over the 87
ACI-Bench train+valid notes, every mechanical type, then ``clinjudge meta-eval`` of the lexical
and inference-aware judges side by side in one run (SPEC §4/§5).

Prints per type and judge: detection rate (errors) or false-flag rate (rewrites) with its 95%
bootstrap interval (clustered by note), differential detection, paired AUROC with its interval,
exclusions — and the run time of each stage. Pairs come from
:func:`clinjudge.inject.pipeline.inject_offline` (seeded, shape-checked); full notes are judged
on both sides of every pair (each distinct note text once per judge).

    .venv/bin/python bench/bench_meta_eval.py [--data DIR] [--limit N] [--seed S]
        [--types all|errors|rewrites|a,b] [--judges lexical,inference-aware] [--out DIR]
        [--option JUDGE.KEY=VALUE ...]   (e.g. --judges cef --option cef.task=note)

The output directory (default ``runs/bench-meta-eval[-limitN]``) holds the pair file
``pairs-<sha12>.jsonl`` and the meta-eval run ``meta-eval-<sha12>/``; a second run with the same
pairs resumes (nothing is judged twice).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from clinjudge.cli.common import judge_options, stdout  # noqa: E402
from clinjudge.cli.meta_eval import print_meta_eval_table  # noqa: E402
from clinjudge.datasets import load_aci_bench  # noqa: E402
from clinjudge.evaluators import BuildOptions, build_evaluator, parse_judge_names  # noqa: E402
from clinjudge.inject.pairs import read_pairs, write_pair  # noqa: E402
from clinjudge.inject.pipeline import acceptance_stats, inject_offline  # noqa: E402
from clinjudge.inject.taxonomy import load_taxonomy, select_types  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402
from clinjudge.meta_eval import run_meta_eval_sync  # noqa: E402

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench" / "challenge_data"
)


def make_pairs(data: Path, limit: int | None, types: list[str], seed: int, kb, out: Path) -> Path:
    """Offline injection of every type into every note; writes ``out/pairs-<sha12>.jsonl``
    (named by its content, so a change of the injectors makes a new file and a new run
    directory instead of clashing with the previous run)."""
    items = [*load_aci_bench(data / "train.csv").items, *load_aci_bench(data / "valid.csv").items]
    items = items[:limit]
    taxonomy = load_taxonomy()
    started = time.perf_counter()
    outcomes = [
        inject_offline(item, taxonomy[t], seed=seed, kb=kb) for item in items for t in types
    ]
    buffer = io.StringIO()
    for o in outcomes:
        if o.pair is not None:
            write_pair(buffer, o.pair)
    text = buffer.getvalue()
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"pairs-{hashlib.sha256(text.encode()).hexdigest()[:12]}.jsonl"
    path.write_text(text, encoding="utf-8")
    stats = acceptance_stats(outcomes, types)
    seconds = time.perf_counter() - started
    print(f"== injection: {len(items)} notes × {len(types)} types in {seconds:.1f} s ==")
    for t, s in stats["per_type"].items():
        print(
            f"{t:>22}: {s['accepted']:3d} pairs ({s['not_applicable']} not applicable, "
            f"{s['shape_rejected']} shape-rejected)"
        )
    print(f"{'total':>22}: {stats['total']['accepted']} pairs -> {path}")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None, help="only the first N notes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--types", default="all", help="taxonomy selection (mechanical types)")
    parser.add_argument("--judges", default="lexical,inference-aware")
    parser.add_argument(
        "--option", action="append", default=[], help="JUDGE.KEY=VALUE, e.g. cef.task=note"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path("runs/bench-meta-eval" + (f"-limit{args.limit}" if args.limit else ""))
    started = time.perf_counter()
    kb = KnowledgeBase.default()
    types = select_types(args.types, offline=True)
    pairs_path = make_pairs(args.data, args.limit, types, args.seed, kb, out)
    pairs = read_pairs(pairs_path)
    names = parse_judge_names(args.judges)
    options = judge_options(args.option, names)
    judges = {
        name: build_evaluator(
            name, BuildOptions(backend="offline", knowledge=kb, options=options.get(name, {}))
        )
        for name in names
    }
    judged = time.perf_counter()
    run_dir = out / f"meta-eval-{pairs_path.stem.removeprefix('pairs-')}"
    result = run_meta_eval_sync(pairs_path, pairs, judges, run_dir, concurrency=1)
    report = result.report
    print(f"\n== meta-evaluation: {report['pairs']['n']} pairs {report['pairs']['by_kind']} ==")
    print_meta_eval_table(report, stdout)
    print("\nby offline injector (rate = detection for errors, false flags for rewrites):")
    judges_by = report["judges"]
    injectors = dict.fromkeys(i for j in judges_by.values() for i in j["by_injector"])
    for injector in injectors:
        for judge, summary in judges_by.items():
            b = summary["by_injector"].get(injector)
            if b is None:
                continue
            auroc = "n/a" if b["auroc"] is None else f"{b['auroc']:.3f}"
            rate = "n/a" if b["rate"] is None else f"{b['rate']:.1%}"
            print(
                f"{injector:>22} {judge:>16}: {rate:>6} ({b['flagged']}/{b['n_judged']}), "
                f"differential {b['differential']}/{b['differential_n']}, AUROC {auroc}"
            )
    for name, seconds in report["seconds"].items():
        resumed = report["resumed_items"][name]
        n_items = 2 * len(pairs)
        print(f"{name:>16}: {seconds:7.1f} s for {n_items - resumed} items ({resumed} resumed)")
    failed = {n: len(f) for n, f in report["failed_items"].items()}
    print(f"failed items: {failed or 'none'}")
    print(
        f"judging {time.perf_counter() - judged:.1f} s, total {time.perf_counter() - started:.1f} s"
    )
    print(f"report: {run_dir / 'report.md'}")


if __name__ == "__main__":
    main()
