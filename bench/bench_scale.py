"""Scale-out of ``compare`` (issue 27): the local executor against ``--executor ray``.

1. **Offline**: the 87 ACI-Bench train + valid notes with both offline judges (lexical,
   inference-aware): the local executor (one item at a time, as ``compare`` runs offline) and a
   Ray of 2 CPUs with 2 workers. Wall time of the judging (the workers' start-up — each loads
   the knowledge base — apart), speed-up, CPU seconds per note (local), the overhead per item
   (its round trip as the driver sees it minus the judge's own ``seconds`` in the row), and
   whether the rows are the same (timing aside).
2. **LLM path**: the inference-aware judge on the llm backend (``--claims llm``: a note's claim
   extraction, then its verdict batches) against a loopback OpenAI-compatible endpoint in its
   own process that answers validly after a fixed delay (``bench_throughput.py --serve``), with
   the local executor at concurrency W and with Ray at W workers × 1 item each, W = 2, 8, 32.
   Items/s against the ideal ``N / (ceil(N / W) · depth · delay)`` (depth 2: notes go out in
   waves of W) and against the CPU ceiling of this machine (cores / CPU seconds per note).
3. **Projection** for 50,000 notes on 64 cores, with its assumptions printed.

    .venv/bin/python bench/bench_scale.py [--notes 87] [--delay 0.5] [--ways 2,8,32]
        [--part all|offline|llm]

This machine has 2 cores and is shared: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "aci-bench" / "challenge_data"
DEPTH = 2
CORES = os.cpu_count() or 1

import ray  # noqa: E402

from clinjudge.compare import run_compare  # noqa: E402
from clinjudge.datasets import Dataset, load_aci_bench  # noqa: E402
from clinjudge.executors.ray_cluster import RayExecutor  # noqa: E402
from clinjudge.executors.spec import JudgeSpec  # noqa: E402
from clinjudge.knowledge.cache import cache_root  # noqa: E402


def notes(n: int) -> Dataset:
    items = [*load_aci_bench(DATA / "train.csv").items, *load_aci_bench(DATA / "valid.csv").items]
    return Dataset(name="aci-bench train+valid", path=DATA, items=items[:n], sha256="bench")


def rows(out: Path, judge: str) -> dict[str, dict]:
    """A runs file's rows by id, without their seconds."""
    found = {}
    for line in (out / "runs" / f"{judge}.jsonl").read_text().splitlines():
        row = json.loads(line)
        found[row["id"]] = {k: v for k, v in row.items() if k != "seconds"}
    return found


def timed_pool(executor: RayExecutor) -> list[tuple[str, str, float]]:
    """Record (judge, item id, round-trip seconds) of every item the pool judges."""
    pool = executor.pool
    assert pool is not None
    trips: list[tuple[str, str, float]] = []
    evaluate = pool.evaluate

    async def timed(judge, item, given):
        started = time.perf_counter()
        row = await evaluate(judge, item, given)
        trips.append((judge, item.id, time.perf_counter() - started))
        return row

    pool.evaluate = timed  # type: ignore[method-assign]
    return trips


def offline(data: Dataset, tmp: Path) -> dict[str, float]:
    spec = JudgeSpec.of(["lexical", "inference-aware"], backend="offline")
    judges = spec.build()
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(run_compare(data, judges, tmp / "local", concurrency=1))
    local_wall, local_cpu = time.perf_counter() - wall, time.process_time() - cpu
    started = time.perf_counter()
    with RayExecutor(spec, workers=2) as ray_run:
        remote = ray_run.judges(judges)
        startup = time.perf_counter() - started
        trips = timed_pool(ray_run)
        wall = time.perf_counter()
        asyncio.run(run_compare(data, remote, tmp / "ray", concurrency=ray_run.concurrency))
        ray_wall = time.perf_counter() - wall
    overheads = []
    for judge in ("lexical", "inference-aware"):
        own = {}
        for line in (tmp / "ray" / "runs" / f"{judge}.jsonl").read_text().splitlines():
            row = json.loads(line)
            own[row["id"]] = row["seconds"]
        overheads += [trip - own[i] for j, i, trip in trips if j == judge]
    same = all(
        rows(tmp / "local", j) == rows(tmp / "ray", j) for j in ("lexical", "inference-aware")
    )
    verdicts_same = (tmp / "local" / "verdicts.jsonl").read_bytes() == (
        tmp / "ray" / "verdicts.jsonl"
    ).read_bytes()
    n = len(data.items)
    print(f"\n1. offline, {n} notes, lexical + inference-aware ({2 * n} items)")
    print(f"   local (1 at a time):  wall {local_wall:7.1f} s  ({local_wall / n:.2f} s/note)")
    print(f"                         CPU  {local_cpu:7.1f} s  ({local_cpu / n:.2f} s/note)")
    print(f"   ray, 2 workers:       wall {ray_wall:7.1f} s  ({ray_wall / n:.2f} s/note)")
    print(f"                         start-up (2 workers build the judges) {startup:.1f} s")
    print(f"   speed-up {local_wall / ray_wall:.2f}x of 2 ({local_wall / ray_wall / 2:.0%})")
    print(
        f"   overhead per item (round trip - judge seconds): median "
        f"{sorted(overheads)[len(overheads) // 2] * 1000:.0f} ms, mean "
        f"{sum(overheads) / len(overheads) * 1000:.0f} ms"
    )
    print(
        f"   rows identical (seconds aside): {same}; verdicts.jsonl byte-identical: {verdicts_same}"
    )
    return {"cpu_per_note": local_cpu / n, "startup": startup, "speedup": local_wall / ray_wall}


def serve(delay: float) -> tuple[subprocess.Popen, str]:
    """The loopback endpoint in its own process (bench_throughput.py --serve)."""
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_throughput.py"),
            "--serve",
            "--delay",
            str(delay),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return server, (server.stdout.readline() if server.stdout else "").strip()


def fresh_cache(tmp: Path, name: str) -> None:
    """No reply cached (a fresh CLINJUDGE_CACHE_DIR), the knowledge already built (linked)."""
    cache = tmp / name
    cache.mkdir()
    (cache / "knowledge").symlink_to(cache_root(), target_is_directory=True)
    os.environ["CLINJUDGE_CACHE_DIR"] = str(cache)


def llm_run(data: Dataset, tmp: Path, name: str, ways: int, executor: str) -> dict[str, float]:
    default_root = cache_root()
    fresh_cache(tmp, f"cache-{name}")
    assert cache_root() != default_root
    spec = JudgeSpec.of(["inference-aware"], backend="llm", claims="llm")
    judges = spec.build()
    out = tmp / name
    if executor == "local":
        cpu, wall = time.process_time(), time.perf_counter()
        asyncio.run(run_compare(data, judges, out, concurrency=ways))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        calls = judges["inference-aware"].usage()["calls"]
        return {"wall": wall, "cpu": cpu, "startup": 0.0, "calls": calls}
    started = time.perf_counter()
    with RayExecutor(spec, workers=ways, per_worker=1, uses_model=True) as ray_run:
        remote = ray_run.judges(judges)
        startup = time.perf_counter() - started
        wall = time.perf_counter()
        asyncio.run(run_compare(data, remote, out, concurrency=ray_run.concurrency))
        wall = time.perf_counter() - wall
    calls = remote["inference-aware"].usage()["calls"]
    return {"wall": wall, "cpu": float("nan"), "startup": startup, "calls": calls}


def llm(data: Dataset, tmp: Path, delay: float, ways: list[int]) -> dict[str, float]:
    server, base_url = serve(delay)
    os.environ.update(
        {"CLINJUDGE_MODEL": "stub-scale", "OPENAI_BASE_URL": base_url, "CLINJUDGE_MAX_RETRIES": "0"}
    )
    n = len(data.items)
    print(f"\n2. LLM path, {n} notes, inference-aware --claims llm, replies after {delay} s")
    header = ("executor", "W", "start s", "wall s", "calls", "items/s", "ideal", "eff.", "CPU cap")
    print("   " + " ".join(f"{h:>9}" for h in header))
    cpu_per_note = None
    try:
        for executor in ("local", "ray"):
            for w in ways:
                m = llm_run(data, tmp, f"{executor}-{w}", w, executor)
                if executor == "local" and cpu_per_note is None:
                    cpu_per_note = m["cpu"] / n
                ideal = n / (math.ceil(n / w) * DEPTH * delay)
                cap = CORES / cpu_per_note if cpu_per_note else float("nan")
                rate = n / m["wall"]
                cells = (executor, w, f"{m['startup']:.1f}", f"{m['wall']:.1f}", m["calls"])
                cells += (f"{rate:.2f}", f"{ideal:.2f}", f"{rate / min(ideal, cap):.0%}")
                print("   " + " ".join(f"{c:>9}" for c in (*cells, f"{cap:.1f}")))
                calls_per_note = m["calls"] / n
    finally:
        if server.stdin:
            server.stdin.close()
        server.wait()
    print(
        "   ideal = N / (ceil(N/W) * 2 * delay) items/s (latency only); CPU cap = "
        f"{CORES} cores / {cpu_per_note:.2f} CPU s per note (local run at W=2); "
        "eff. = items/s / min(ideal, CPU cap)"
    )
    return {"cpu_per_note": cpu_per_note or 0.0, "calls_per_note": calls_per_note}


def projection(off: dict[str, float], on: dict[str, float]) -> None:
    notes_total, cores = 50_000, 64
    print(f"\n3. projection: {notes_total:,} notes on {cores} cores")
    if off:
        eff = min(1.0, off["speedup"] / 2)
        hours = notes_total * off["cpu_per_note"] / (cores * eff) / 3600
        print(
            f"   offline (lexical + inference-aware): {off['cpu_per_note']:.2f} CPU s/note "
            f"(measured, this machine) / {cores} workers at the measured efficiency {eff:.0%} "
            f"= {hours:.1f} h, plus each worker's start-up ({off['startup']:.0f} s, in parallel)"
        )
    if on:
        cpu_h = notes_total * on["cpu_per_note"] / cores / 3600
        calls = on["calls_per_note"]
        print(
            f"   LLM path: {calls:.1f} calls/note (measured); the CPU side alone "
            f"({on['cpu_per_note']:.2f} s/note) takes {cpu_h:.2f} h on {cores} cores, so the "
            "endpoints set the pace:"
        )
        for latency, slots in ((2.0, 16), (5.0, 8)):
            per_endpoint = slots / (calls * latency)  # notes/s one endpoint sustains
            needed = math.ceil(notes_total / (per_endpoint * 8 * 3600))
            print(
                f"     assume {latency:.0f} s per call and {slots} requests in flight per "
                f"endpoint: {per_endpoint:.2f} notes/s per endpoint, {needed} endpoints to "
                f"finish in 8 h (with {cores} workers x {math.ceil(needed * slots / cores)} "
                "items each in flight)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=87)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--ways", default="2,8,32")
    parser.add_argument("--part", choices=("all", "offline", "llm"), default="all")
    args = parser.parse_args()
    data = notes(args.notes)
    print(f"load average before: {os.getloadavg()[0]:.2f} on {CORES} cores")
    ray.init(num_cpus=CORES, include_dashboard=False, log_to_driver=False)
    off: dict[str, float] = {}
    on: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.part in ("all", "offline"):
            off = offline(data, Path(tmp))
        if args.part in ("all", "llm"):
            on = llm(data, Path(tmp), args.delay, [int(w) for w in args.ways.split(",")])
    ray.shutdown()
    projection(off, on)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
