"""Benchmark of the knowledge layer (not part of the test suite).

    python bench/bench_knowledge.py [--cache-dir DIR] [--keep] [--out results.json]

Each phase runs in a fresh Python process so that times and peak memory are those a user sees:
1. cold lexicon build (empty cache), 2. warm lexicon load, 3. cold semantic-index build,
4. warm index load + search latency (median over queries, after one warm-up query) and a few
quality probes. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERIES = [
    "heart attack",
    "short of breath",
    "sugar",
    "Zestril",
    "water pill",
    "pain in the chest",
    "knee pain after a fall",
    "elevated cholesterol",
    "metformin 500 mg",
    "trouble sleeping at night",
    "swollen ankles",
    "burning when peeing",
    "blood in the stool",
    "feeling dizzy when standing up",
    "high blood pressure",
    "rash on both arms",
    "seasonal allergies",
    "type 2 diabetes",
    "SOB",
    "pins and needles in the feet",
]


def phase(name: str, cache_dir: str) -> dict:
    import resource

    from clinjudge.knowledge.base import KnowledgeBase

    out: dict = {"phase": name}
    start = time.perf_counter()
    kb = KnowledgeBase.load(Path(cache_dir))
    out["lexicon_seconds"] = round(time.perf_counter() - start, 2)
    if name in ("index_build", "index_load"):
        start = time.perf_counter()
        index = kb.index()
        out["index_seconds"] = round(time.perf_counter() - start, 2)
        out["index_rebuilt"] = kb.index_rebuilt
        out["vectors"] = len(index)
    if name == "index_load":
        start = time.perf_counter()
        kb.search("warm up")  # loads the sentence-transformers model
        out["model_load_seconds"] = round(time.perf_counter() - start, 2)
        times, top = [], {}
        for q in QUERIES:
            t = time.perf_counter()
            hits = kb.search(q, k=5)
            times.append(time.perf_counter() - t)
            top[q] = [(h.concept_id, h.preferred, h.score) for h in hits[:3]]
        out["search_ms_median"] = round(1000 * statistics.median(times), 1)
        out["search_ms_p90"] = round(1000 * sorted(times)[int(0.9 * len(times))], 1)
        out["top3"] = top
        out["stats"] = kb.stats()
    if name == "lexicon_load":
        text = " ".join(QUERIES) * 50
        start = time.perf_counter()
        mentions = kb.concepts_in(text)
        out["scan_chars_per_second"] = round(len(text) / (time.perf_counter() - start))
        out["scan_mentions"] = len(mentions)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def run_phase(name: str, cache_dir: str) -> dict:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, "--phase", name, "--cache-dir", cache_dir],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["process_seconds"] = round(time.perf_counter() - start, 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache-dir")
    parser.add_argument("--phase")
    parser.add_argument("--keep", action="store_true", help="keep the temporary cache")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.cache_dir)))
        return
    cache_dir = args.cache_dir or tempfile.mkdtemp(prefix="clinjudge-bench-")
    results = [
        run_phase(p, cache_dir)
        for p in ("lexicon_build", "lexicon_load", "index_build", "index_load")
    ]
    text = json.dumps(results, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    if not args.cache_dir and not args.keep:
        shutil.rmtree(cache_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
