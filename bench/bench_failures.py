"""Failures that tell the truth and runs that recover (issue 16), measured as a user meets them:
the ``clinjudge`` command in its own process, on ACI-Bench train notes.

1. ``kill -9`` of an offline ``compare`` after a number of notes, then the same command: is the
   report identical to an uninterrupted run's, and is every note judged exactly once?
2. An unreachable endpoint (``http://127.0.0.1:9/v1``): exit code, seconds and the last stderr
   line of ``judge`` and ``compare``.
3. An endpoint that fails the first run (HTTP 500 on every call) and answers the second: the
   requests the second run makes and its exit code.

    .venv/bin/python bench/bench_failures.py [--notes 12] [--kill-after 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from openai_stub import HttpError, OpenAIStub, Reply  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench" / "challenge_data"
CLI = str(Path(sys.executable).with_name("clinjudge"))
DEAD = "http://127.0.0.1:9/v1"


def subset(notes: int, folder: Path) -> Path:
    """The first ``notes`` rows of ACI-Bench train as a CSV of their own."""
    import csv

    csv.field_size_limit(1 << 30)
    with (DATA / "train.csv").open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        rows = [row for _, row in zip(range(notes), reader, strict=False)]
        fields = reader.fieldnames or []
    path = folder / "notes.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return path


def run(args: list[str], env: dict[str, str]) -> tuple[int, float, str]:
    started = time.perf_counter()
    done = subprocess.run([CLI, *args], capture_output=True, text=True, env=env)
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return done.returncode, time.perf_counter() - started, lines[-1] if lines else ""


def comparable(report: dict) -> str:
    """The report without what differs between two runs of the same judging (times, dates)."""
    text = json.dumps(report, sort_keys=True)
    text = re.sub(r'"(created|seconds|started|finished|wall_seconds)": [^,}]+', "", text)
    return re.sub(r'"seconds_per_[a-z_]+": [^,}]+', "", text)


def killed_and_resumed(data: Path, kill_after: int, env: dict[str, str], tmp: Path) -> None:
    base = ["compare", str(data), "--judges", "lexical,inference-aware", "--backend", "offline"]
    whole = tmp / "whole"
    code, seconds, _ = run([*base, "--out", str(whole)], env)
    print(f"uninterrupted run: exit {code}, {seconds:.0f} s")
    resumed = tmp / "resumed"
    process = subprocess.Popen(
        [CLI, *base, "--out", str(resumed)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rows = resumed / "runs" / "inference-aware.jsonl"
    while process.poll() is None:
        if rows.exists() and sum(1 for _ in rows.open()) >= kill_after:
            process.send_signal(signal.SIGKILL)
            break
        time.sleep(0.2)
    process.wait()
    before = {p.stem: sum(1 for _ in p.open()) for p in (resumed / "runs").glob("*.jsonl")}
    code, seconds, _ = run([*base, "--out", str(resumed)], env)
    after = {
        p.stem: [json.loads(x)["id"] for x in p.open()] for p in (resumed / "runs").glob("*.jsonl")
    }
    once = all(len(ids) == len(set(ids)) for ids in after.values())
    same = comparable(json.loads((whole / "report.json").read_text())) == comparable(
        json.loads((resumed / "report.json").read_text())
    )
    print(
        f"kill -9 after {before} rows, then the same command: exit {code}, {seconds:.0f} s; "
        f"every note judged once: {once}; report identical to the uninterrupted run's: {same}"
    )


def unreachable(data: Path, env: dict[str, str], tmp: Path) -> None:
    dead = {**env, "CLINJUDGE_MODEL": "m", "OPENAI_BASE_URL": DEAD, "OPENAI_API_KEY": "sk-x"}
    transcript, note = tmp / "t.txt", tmp / "n.txt"
    import csv

    with data.open(encoding="utf-8", newline="") as handle:
        row = next(csv.DictReader(handle))
    transcript.write_text(row["dialogue"])
    note.write_text(row["note"])
    judge = ["judge", "--transcript", str(transcript), "--note", str(note), "--backend", "llm"]
    compare = ["compare", str(data), "--judges", "inference-aware", "--backend", "llm"]
    for name, args in (("judge", judge), ("compare", [*compare, "--out", str(tmp / "dead")])):
        code, seconds, last = run(args, dead)
        print(f"unreachable endpoint, {name}: exit {code} after {seconds:.1f} s: {last}")


def fails_then_answers(data: Path, env: dict[str, str], tmp: Path) -> None:
    def valid(body: dict) -> Reply:
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        ids = dict.fromkeys(re.findall(r'"id":\s*"(c\d+)"', text.split("<claims>", 1)[-1]))
        verdicts = [{"claim_id": i, "tier": 1, "subtype": "restatement"} for i in ids]
        return Reply(json.dumps({"verdicts": verdicts}))

    with OpenAIStub() as stub:
        live = {**env, "CLINJUDGE_MODEL": "m", "OPENAI_BASE_URL": stub.base_url}
        live |= {"OPENAI_API_KEY": "sk-x", "CLINJUDGE_MAX_RETRIES": "0"}
        args = ["compare", str(data), "--judges", "inference-aware", "--backend", "llm"]
        args += ["--claims", "split", "--out", str(tmp / "flaky")]
        stub.script(lambda _body: HttpError(500, "down for maintenance"))
        code, seconds, last = run(args, live)
        first = len(stub.requests)
        print(f"endpoint failing (500): exit {code}, {first} requests, {seconds:.1f} s: {last}")
        stub.script(valid)
        code, seconds, _ = run(args, live)
        report = json.loads((tmp / "flaky" / "report.json").read_text())
        rate = report["judges"]["inference-aware"]["headline"]
        n = next(iter(rate.values())).get("n")
        print(
            f"same command, endpoint answering: exit {code}, {len(stub.requests) - first} "
            f"requests, {seconds:.1f} s; the report now rates n = {n}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=12)
    parser.add_argument("--kill-after", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "CLINJUDGE_CACHE_DIR": str(tmp / "cache")}
        env.pop("CLINJUDGE_MODEL", None)
        shared = Path(os.environ.get("CLINJUDGE_CACHE_DIR", Path.home() / ".cache" / "clinjudge"))
        if (shared / "knowledge").is_dir():  # reuse the built knowledge, not the LLM cache
            (tmp / "cache").mkdir()
            (tmp / "cache" / "knowledge").symlink_to(shared / "knowledge")
        data = subset(args.notes, tmp)
        killed_and_resumed(data, args.kill_after, env, tmp)
        unreachable(data, env, tmp)
        fails_then_answers(data, env, tmp)


if __name__ == "__main__":
    main()
