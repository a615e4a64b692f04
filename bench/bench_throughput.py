"""Throughput of the LLM path (issue 16): the inference-aware judge over ACI-Bench notes against
a loopback OpenAI-compatible endpoint (the test suite's ``openai_stub``, real HTTP, the real
``ChatOpenAI``) that answers every call validly after a fixed delay.

For each concurrency (items judged at once) it prints the wall time, the model calls, and two
bounds:

    latency bound = depth · delay · ceil(notes / concurrency)
        (depth 2: a note's claim extraction, then its verdict batches, which run in parallel;
        notes go out in waves of `concurrency`)
    CPU bound     = the CPU seconds the run itself spent (retrieval, embeddings, parsing,
                    the HTTP client), measured — on 2 cores the event loop runs on one

and the ratio wall / max(bounds) (issue target: ≤ 1.5 at 32-way with 1 s replies). A note's
CPU work needs its extracted claims, so it cannot start before the first round's replies, and
its verdict calls wait for it: on one core the run cannot end before latency + CPU (the
"floor"), whose ratio is printed too. Each
concurrency runs in its own process with an empty response cache, as one CLI run would; the
CPU bound includes loading the embedding model on first use (start-up imports excluded). The
endpoint runs in a process of its own, as a real server would: in the judge's process its
handler threads would add their CPU to the judge's and contend for its interpreter lock.

    .venv/bin/python bench/bench_throughput.py [--notes 20] [--delay 1.0] [--ways 1,8,32,128]
        [--repeat 3]   (each concurrency runs this often; the median run by wall time is shown)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
started_process = time.perf_counter()

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from openai_stub import Delay, OpenAIStub, Reply  # noqa: E402

from clinjudge.compare import run_compare  # noqa: E402
from clinjudge.datasets import Dataset, load_aci_bench  # noqa: E402
from clinjudge.evaluators import BuildOptions, build_evaluator  # noqa: E402
from clinjudge.llm import LLMSettings, ResponseCache  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench" / "challenge_data"
DEPTH = 2


def reply_for(body: dict) -> str:
    """A valid reply: claims for an extraction prompt, tier 1 for every claim of a verdict
    batch."""
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    if "<claims>" in text:
        ids = dict.fromkeys(re.findall(r'"id":\s*"(c\d+)"', text.split("<claims>", 1)[1]))
        verdicts = [
            {"claim_id": i, "tier": 1, "subtype": "restatement", "rationale": "", "evidence": []}
            for i in ids
        ]
        return json.dumps({"verdicts": verdicts})
    note = text.split("<note>", 1)[-1].split("</note>", 1)[0]
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", note) if len(s.strip()) > 20]
    return json.dumps(
        {"claims": [{"text": s, "section": "subjective", "quote": s} for s in sentences]}
    )


async def one_run(dataset: Dataset, base_url: str, ways: int, out: Path) -> dict[str, float]:
    settings = LLMSettings(model="stub-throughput", base_url=base_url, max_retries=0)
    cache = ResponseCache(out / "cache.sqlite")
    judge = build_evaluator(
        "inference-aware",
        BuildOptions(backend="llm", settings=settings, cache=cache, options={"claims": "llm"}),
    )
    cpu, wall = time.process_time(), time.perf_counter()
    await run_compare(dataset, {"inference-aware": judge}, out / "run", concurrency=ways)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"wall": wall, "cpu": cpu, "calls": (judge.usage() or {}).get("calls", 0)}


def serve(delay: float) -> None:
    """The endpoint, in this process until stdin closes: prints its base URL first."""
    with OpenAIStub() as stub:
        stub.script(lambda body: Delay(delay, Reply(reply_for(body))))
        print(stub.base_url, flush=True)
        sys.stdin.read()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=20)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--ways", default="1,8,32,128")
    parser.add_argument("--repeat", type=int, default=3, help="runs per concurrency (median)")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.delay)
        return
    items = load_aci_bench(DATA / "train.csv").items[: args.notes]
    dataset = Dataset(name="aci-bench train", path=DATA, items=items, sha256="bench")
    if args.one is not None:  # one concurrency, in its own process (as one CLI run would be)
        with tempfile.TemporaryDirectory() as tmp:
            measured = asyncio.run(one_run(dataset, args.base_url, args.one, Path(tmp)))
        print(json.dumps(measured))
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--delay", str(args.delay)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    base_url = (server.stdout.readline() if server.stdout else "").strip()
    startup = time.perf_counter() - started_process
    print(f"start-up (imports): {startup:.1f} s; {len(items)} notes, replies after {args.delay} s")
    header = ("ways", "wall s", "calls", "latency bound", "CPU bound", "ratio", "to floor")
    widths = (5, 8, 6, 14, 10, 6, 9)
    print(" ".join(f"{h:>{w}}" for h, w in zip(header, widths, strict=True)))
    for ways in (int(w) for w in args.ways.split(",")):
        command = [sys.executable, __file__, "--notes", str(args.notes), "--delay"]
        command += [str(args.delay), "--one", str(ways), "--base-url", base_url]
        runs = []
        for _ in range(args.repeat):  # this machine's speed varies by ±20% from run to run
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        measured = sorted(runs, key=lambda r: r["wall"])[len(runs) // 2]  # the median run
        latency = DEPTH * args.delay * math.ceil(len(items) / ways)  # notes go out in waves
        ratio = measured["wall"] / max(latency, measured["cpu"])
        floor = measured["wall"] / (latency + measured["cpu"])
        print(
            f"{ways:>5} {measured['wall']:>8.1f} {measured['calls']:>6} {latency:>14.1f} "
            f"{measured['cpu']:>10.1f} {ratio:>6.2f} {floor:>9.2f}"
        )
    if server.stdin:
        server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()
