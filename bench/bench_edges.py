"""Fast, quiet edges (issue 24): how long each command takes to reject a path that does not
exist, against ``clinjudge --help`` in the same run (the floor: Python and the CLI's own
imports), and ``knowledge search`` cold (first query of a process) and warm, one query and ten
in one call.

    .venv/bin/python bench/bench_edges.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CLI = str(Path(sys.executable).parent / "clinjudge")
BAD = [
    ["judge", "--transcript", "/nope.txt", "--note", "/nope2.txt"],
    ["compare", "/nope.csv", "--out", "/tmp/clinjudge-edges"],
    ["cef", "--source", "/nope.txt", "--summary", "/nope2.txt"],
    ["factcheck", "--answer", "/nope.txt"],
    ["meta-eval", "/nope.jsonl", "--out", "/tmp/clinjudge-edges"],
    ["inject", "/nope.csv", "--out", "/tmp/clinjudge-edges"],
    ["detect", "/nope.jsonl", "--out", "/tmp/clinjudge-edges"],
    ["pairs", "/nope.csv", "--out", "/tmp/clinjudge-edges"],
    ["gate", "/nope.json"],
    ["report", "/nope"],
]
QUERIES = ["heart attack", "sugar", "zestril", "high blood sugar", "sob", "pt", "afib",
           "water pill", "tylenol", "knee pain"]  # fmt: skip


def timed(args: list[str]) -> tuple[float, int, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    started = time.perf_counter()
    done = subprocess.run([CLI, *args], capture_output=True, text=True, env=env, check=False)
    line = (done.stderr or done.stdout).strip().splitlines()[:1]
    return time.perf_counter() - started, done.returncode, line[0] if line else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    helps = [timed(["--help"])[0] for _ in range(args.repeat)]
    floor = statistics.median(helps)
    print(f"clinjudge --help: median {floor:.2f} s over {args.repeat}")
    print(f"{'command':<12} {'median s':>8} {'× help':>7}  exit  message")
    for bad in BAD:
        runs = [timed(bad) for _ in range(args.repeat)]
        median = statistics.median(r[0] for r in runs)
        _, code, line = runs[-1]
        print(f"{bad[0]:<12} {median:>8.2f} {median / floor:>7.2f}  {code:>4}  {line[:70]}")
    timed(["knowledge", "search", "warm up the caches"])  # builds or exports what is missing
    one = [timed(["knowledge", "search", QUERIES[0]])[0] for _ in range(args.repeat)]
    ten = [timed(["knowledge", "search", *QUERIES])[0] for _ in range(args.repeat)]
    print(f"knowledge search, 1 query (warm): median {statistics.median(one):.2f} s")
    print(f"knowledge search, 10 queries in one call: median {statistics.median(ten):.2f} s")


if __name__ == "__main__":
    main()
