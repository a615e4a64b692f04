"""The numeric judge (SPEC §7) on MedCalc-Bench Verified's 55 one-shot examples, offline.

Each example's ground-truth explanation ends in the right answer, so it is an answer the judge
must call correct; the same explanation with its last statement of the value changed is one it
must call wrong (decimal: ×1.2; integer: +1; date: one day later; weeks and days: one more
day). Printed: the judge's agreement with those known verdicts, its accuracy on each half with
the Wilson interval, how each value was read (json / marked / last), the disagreements, and the
seconds per answer.

    .venv/bin/python bench/bench_numeric.py [--data one_shot_data.csv]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import datetime as dt
import re
import time
from collections import Counter
from pathlib import Path

from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "medcalc-bench" / "one_shot_data.csv"
)


def wrong_value(truth: str, output_type: str) -> tuple[str, str]:
    """(what the explanation says, what the wrong answer says instead)."""
    weeks = re.search(r"(\d+) weeks', '(\d+) days", truth)
    if weeks:
        w, d = int(weeks.group(1)), int(weeks.group(2))
        return f"{w} weeks and {d} days", f"{w} weeks and {d + 1} days"
    if output_type == "date":
        day = dt.datetime.strptime(truth, "%m/%d/%Y") + dt.timedelta(days=1)
        return truth, day.strftime("%m/%d/%Y")
    if output_type == "integer":
        return truth, str(int(float(truth)) + 1)
    return truth, f"{float(truth) * 1.2:.3f}"


def answers(path: Path) -> list[tuple[Item, bool]]:
    out = []
    for row in csv.DictReader(path.open(encoding="utf-8")):
        meta = {
            "truth": row["Ground Truth Answer"],
            "output_type": row["Output Type"],
            "question": row["Question"],
        }
        text = row["Ground Truth Explanation"].strip()
        said, wrong = wrong_value(row["Ground Truth Answer"], row["Output Type"])
        at = text.rfind(said)
        rid = f"{row['Row Number']}:{row['Calculator Name']}"
        out.append((Item(id=f"{rid}:right", transcript="", note=text, meta=meta), True))
        if at < 0:
            print(f"{rid}: the explanation never states {said!r}; no wrong twin")
            continue
        edited = text[:at] + wrong + text[at + len(said) :]
        out.append((Item(id=f"{rid}:wrong", transcript="", note=edited, meta=meta), False))
    return out


async def main_async(path: Path) -> None:
    judge = build_evaluator("numeric", BuildOptions(backend="offline"))
    pairs = answers(path)
    rows, seconds = [], []
    for item, _ in pairs:
        started = time.perf_counter()
        rows.append(await judge.evaluate(item))
        seconds.append(time.perf_counter() - started)
    agree = [row["correct"] is expected for row, (_, expected) in zip(rows, pairs, strict=True)]
    print(f"\n== numeric judge, offline, {len(rows)} answers of {path.name} ==")
    share = sum(agree) / len(agree)
    print(f"agreement with the known verdicts: {sum(agree)}/{len(agree)} = {share:.1%}")
    for half, expected in (("right answers", True), ("wrong answers", False)):
        half_rows = [r for r, (_, e) in zip(rows, pairs, strict=True) if e is expected]
        accuracy = judge.summarize(half_rows)["headline"]["accuracy"]
        lo, hi = accuracy["ci95"]
        print(
            f"{half:>14}: judged correct {accuracy['value']:.1%} [{lo:.1%}–{hi:.1%}] "
            f"(n={accuracy['n']}; should be {'100%' if expected else '0%'})"
        )
    print("values read by:", dict(Counter((r["answer"] or {}).get("how", "none") for r in rows)))
    for row, (item, expected), ok in zip(rows, pairs, agree, strict=True):
        if not ok:
            value = (row["answer"] or {}).get("value")
            truth = row["truth"]
            print(f"  disagrees: {item.id} read {value!r}, truth {truth!r}, expected {expected}")
    seconds.sort()
    print(f"seconds per answer: median {seconds[len(seconds) // 2] * 1000:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="one_shot_data.csv")
    args = parser.parse_args()
    if not args.data.exists():
        parser.exit(2, f"bench_numeric: no file {args.data}\n")
    asyncio.run(main_async(args.data))


if __name__ == "__main__":
    main()
