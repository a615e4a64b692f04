"""Acceptance statistics of the offline injection pipeline (issue 7, SPEC §5) on the 87 ACI-Bench
train+valid encounters: every mechanical type (offline injectors through the shape check), one
seeded attempt per note and type — attempted, not applicable, shape-rejected, accepted, the
acceptance rate with its 95% Wilson interval, the injector mix, the edit sizes, and run time.

    .venv/bin/python bench/bench_inject.py [--data DIR] [--limit N] [--seed S] [--types ...]
        [--out pairs.jsonl]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from clinjudge.datasets import load_aci_bench  # noqa: E402
from clinjudge.inject.outputs import InjectFiles, run_offline, run_provenance  # noqa: E402
from clinjudge.inject.pairs import read_pairs  # noqa: E402
from clinjudge.inject.taxonomy import select_types  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench" / "challenge_data"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--types", default="all")
    parser.add_argument("--out", type=Path, default=None, help="keep the pair file here")
    args = parser.parse_args()

    started = time.perf_counter()
    kb = KnowledgeBase.default()
    loaded = time.perf_counter() - started
    train = load_aci_bench(args.data / "train.csv")
    valid = load_aci_bench(args.data / "valid.csv")
    data = train.model_copy(
        update={"name": "aci-bench train+valid", "items": train.items + valid.items}
    )
    if args.limit:
        data = data.model_copy(update={"items": data.items[: args.limit]})
    types = select_types(args.types, offline=True)
    out = args.out or Path(tempfile.mkdtemp()) / "pairs.jsonl"
    files = InjectFiles(out)
    for f in files.all():
        f.unlink(missing_ok=True)
    provenance = run_provenance("offline", data, seed=args.seed, kb=kb)
    t0 = time.perf_counter()
    stats = run_offline(data, types, files, provenance, seed=args.seed, kb=kb)
    seconds = time.perf_counter() - t0
    pairs = read_pairs(files.pairs)

    print(f"{len(data)} notes × {len(types)} types = {len(data) * len(types)} attempts")
    print(f"knowledge load {loaded:.1f} s; injection {seconds:.1f} s "
          f"({seconds / len(data):.2f} s per note, all types)\n")  # fmt: skip
    header = f"{'type':<22}{'kind':<8}{'tried':>6}{'n/a':>6}{'shape✗':>8}{'kept':>6}"
    print(header + "   acceptance [95% CI]     applicable   injectors used")
    for type_id in types:
        s = stats["per_type"][type_id]
        kind = next((p.kind for p in pairs if p.type == type_id), "")
        lo, hi = s["ci95"]
        rate = "n/a" if s["acceptance_rate"] is None else f"{s['acceptance_rate']:6.1%}"
        used = Counter(p.meta["injector"] for p in pairs if p.type == type_id)
        applicable = s["attempted"] - s["not_applicable"]
        print(
            f"{type_id:<22}{kind:<8}{s['attempted']:>6}{s['not_applicable']:>6}"
            f"{s['shape_rejected']:>8}{s['accepted']:>6}   {rate} [{lo:5.1%}–{hi:5.1%}]"
            f"   {applicable / s['attempted']:6.1%}   "
            + ", ".join(f"{k} {v}" for k, v in used.most_common())
        )
    t = stats["total"]
    lo, hi = t["ci95"]
    print(f"{'total':<30}{t['attempted']:>6}{t['not_applicable']:>6}{t['shape_rejected']:>8}"
          f"{t['accepted']:>6}   {t['acceptance_rate']:6.1%} [{lo:5.1%}–{hi:5.1%}]")  # fmt: skip
    print("\nedit size of accepted pairs (median / max): chars removed, added, sentences")
    for type_id in types:
        shapes = [p.shape for p in pairs if p.type == type_id]
        if not shapes:
            continue
        cols = [
            [s[k] for s in shapes] for k in ("chars_removed", "chars_added", "sentences_touched")
        ]
        print(
            f"  {type_id:<22}"
            + "  ".join(f"{statistics.median(c):>5.0f} / {max(c):<4}" for c in cols)
        )
    print(f"\nwrote {files.pairs}")


if __name__ == "__main__":
    main()
