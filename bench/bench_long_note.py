"""One very long note (issue 16): wall time, peak memory and claims of ``clinjudge judge`` on a
2 MB note, offline, inference-aware, as a user would run it (its own process, start-up
included).

Two notes of the same size, judged against the transcript of ACI-Bench train encounter 1:

- ``repeated``: that encounter's reference note carried forward again and again (the shape of a
  copy-forward hospital record; every sentence recurs);
- ``distinct``: the reference and generated notes of other ACI-Bench encounters one after the
  other, no paragraph twice (nearly every claim is unsupported by this transcript: the hardest
  case for the verifier, which searches the transcript for each).

    .venv/bin/python bench/bench_long_note.py [--mb 2.0] [--notes repeated,distinct]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench"
CLI = Path(sys.executable).with_name("clinjudge")


def rows(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 30)
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def build_notes(size: int) -> tuple[str, dict[str, str]]:
    train = rows(DATA / "challenge_data" / "train.csv")
    transcript, note = train[0]["dialogue"], train[0]["note"]
    repeated = ((note + "\n\n") * (size // (len(note) + 2) + 1))[:size]
    paragraphs: dict[str, None] = {}
    sources = [DATA / "challenge_data" / f"{s}.csv" for s in ("train", "valid", "clef_taskC_test3")]
    sources += sorted((DATA / "model_notes").glob("*.csv"))
    for path in sources:
        for row in rows(path)[1:] if path.stem == "train" else rows(path):
            text = row.get("note") or ""
            for paragraph in text.split("\n\n"):
                if paragraph.strip():
                    paragraphs.setdefault(paragraph.strip())
    distinct, total = [], 0
    for paragraph in paragraphs:
        if total >= size:
            break
        distinct.append(paragraph)
        total += len(paragraph) + 2
    return transcript, {"repeated": repeated, "distinct": "\n\n".join(distinct)[:size]}


def judge(transcript: Path, note: Path, out: Path) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (MB) and claims of one ``clinjudge judge`` run."""
    command = ["/usr/bin/time", "-f", "%M", str(CLI), "judge", "--transcript", str(transcript)]
    command += ["--note", str(note), "--backend", "offline", "--format", "tsv"]
    started = time.perf_counter()
    with out.open("w") as handle:
        done = subprocess.run(command, stdout=handle, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"judge failed ({done.returncode}): {done.stderr[-2000:]}")
    peak_kb = int(done.stderr.strip().splitlines()[-1])
    claims = sum(1 for _ in out.open()) - 1
    return wall, peak_kb // 1024, claims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=2.0)
    parser.add_argument("--notes", default="repeated,distinct")
    args = parser.parse_args()
    transcript_text, notes = build_notes(int(args.mb * 1_000_000))
    print(f"{'note':>9} {'MB':>5} {'claims':>7} {'wall s':>7} {'claims/s':>9} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        transcript = Path(tmp) / "transcript.txt"
        transcript.write_text(transcript_text)
        for name in args.notes.split(","):
            note = Path(tmp) / f"{name}.txt"
            note.write_text(notes[name])
            wall, peak, claims = judge(transcript, note, Path(tmp) / f"{name}.tsv")
            mb = len(notes[name]) / 1e6
            print(f"{name:>9} {mb:>5.2f} {claims:>7} {wall:>7.1f} {claims / wall:>9.0f} {peak:>8}")


if __name__ == "__main__":
    main()
