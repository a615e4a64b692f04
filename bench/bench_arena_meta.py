"""Meta-evaluation of the arena on matched pairs (issue 25, item 3; SPEC §5/§6), offline or
with a model.

``clinjudge inject`` makes, from each ACI-Bench note, the same note with exactly one injected
error (or one legitimate rewrite); each pair becomes one "encounter" with two systems,
``original`` and ``edited``, over the same transcript, and ``clinjudge arena`` judges it in both
orders. On an error pair the original must win; on a rewrite pair a draw is right (the two
notes say the same).

Printed per type, overall and on the safety criterion: the original's wins, draws and losses,
its win rate with a Wilson 95% interval, the same among the pairs where the other judges *see*
the edit (the two notes differ in grounded claims, major errors, errors about the person,
facts covered or contradicted — :data:`SEEING`; the arena cannot prefer what its judges do not
see), and the position-bias rate. Target: the original
wins ≥ 90% per error type among the pairs the offline judges see.

With ``--backend llm`` (``CLINJUDGE_MODEL`` at ``OPENAI_BASE_URL``, e.g. the local model behind
``clinjudge serve``) the arena judges the first ``--pairs N`` pairs with the ``pairwise.compare``
prompt; "seen" is then n/a (no offline evidence), and the bench also prints, per criterion, how
often a verdict followed the position (the same position won in both orders), and how often a
reply's reason names one note while its winner is the other.

    .venv/bin/python bench/bench_arena_meta.py [--split test3|train,valid] [--limit N]
        [--out /tmp/arena-meta] [--backend offline|llm] [--pairs N] [--arena DIR]

Each step resumes (the inject file is reused when present; the arena run directory resumes).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from clinjudge.metrics.intervals import wilson_interval  # noqa: E402

ACI = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench" / "challenge_data"
SPLITS = {
    "test3": ["clef_taskC_test3.csv"],
    "train,valid": ["train.csv", "valid.csv"],
}
CLI = str(Path(sys.executable).with_name("clinjudge"))
#: The evidence measures that tell an error or a loss of content (not repetition or layout):
#: the judges *see* an edit when one of them differs between the two notes.
SEEING = (
    "n_grounded",
    "n_major_errors",
    "n_person_errors",
    "n_covered",
    "n_critical_covered",
    "n_contradicted_facts",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="test3", choices=sorted(SPLITS))
    parser.add_argument("--limit", type=int, default=None, help="notes per file")
    parser.add_argument("--out", type=Path, default=Path("/tmp/arena-meta"))
    parser.add_argument("--backend", default="offline", choices=("offline", "llm"))
    parser.add_argument("--pairs", type=int, default=None, help="only the first N pairs")
    parser.add_argument("--arena", type=Path, default=None, help="the arena run directory")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    pairs: list[dict] = []
    for name in SPLITS[args.split]:
        path = args.out / f"pairs-{Path(name).stem}.jsonl"
        if not path.exists():
            command = [CLI, "inject", str(ACI / name), "--types", "all", "--backend", "offline"]
            command += ["--out", str(path)] + (["--limit", str(args.limit)] if args.limit else [])
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        pairs += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    data = args.out / "pairs.csv"
    with data.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["encounter_id", "dialogue", "original", "edited"])
        for p in pairs:
            writer.writerow([p["pair_id"], p["source"], p["original"], p["edited"]])
    arena = args.arena or args.out / ("arena" if args.backend == "offline" else "arena-llm")
    subprocess.run(
        [CLI, "arena", str(data), "--systems", "original,edited", "--judge", "pairwise"]
        + ["--backend", args.backend, "--out", str(arena)]
        + (["--limit", str(args.pairs)] if args.pairs else []),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    judged = {
        row["encounter"]: row
        for row in map(json.loads, (arena / "pairs.jsonl").read_text().splitlines())
    }
    if args.pairs:
        pairs = pairs[: args.pairs]
    report(pairs, judged)
    if args.backend == "llm":
        model_report(list(judged.values()))


def report(pairs: list[dict], judged: dict[str, dict]) -> None:
    """The per-type table (module docstring)."""
    by_type: dict[tuple[str, str], list[tuple[str, str, bool, bool]]] = defaultdict(list)
    failed = 0
    for p in pairs:
        row = judged.get(p["pair_id"])
        if row is None or not row.get("outcomes"):
            failed += 1
            continue
        original = "a" if row["system_a"] == "original" else "b"
        ev = row["evidence"]
        seen = ev is not None and any(ev["a"][m] != ev["b"][m] for m in SEEING)
        biased = any(row["follows_position"].values())
        for criterion in ("overall", "safety"):
            won = row["outcomes"][criterion]
            result = "win" if won == original else "draw" if won == "draw" else "loss"
            by_type[(p["kind"], p["type"])].append((criterion, result, seen, biased))
    print(f"{len(pairs)} pairs, {failed} not judged (left out)")
    header = (
        f"{'kind':6} {'type':22} {'n':>4}  {'overall win/draw/loss':>22}  {'win rate':>20}"
        f"  {'seen':>5} {'win rate when seen':>24}  {'safety win rate':>20}"
    )
    print(header)
    for (kind, type_), results in sorted(by_type.items()):
        overall = [r for r in results if r[0] == "overall"]
        safety = [r for r in results if r[0] == "safety"]
        seen = [r for r in overall if r[2]]
        counts = {k: sum(1 for r in overall if r[1] == k) for k in ("win", "draw", "loss")}
        print(
            f"{kind:6} {type_:22} {len(overall):>4}  "
            f"{counts['win']:>6}/{counts['draw']:>6}/{counts['loss']:>6}  "
            f"{rate(overall):>20}  {len(seen):>5} {rate(seen):>24}  {rate(safety):>20}"
        )
    biased = sum(1 for rs in by_type.values() for r in rs if r[0] == "overall" and r[3])
    total = sum(1 for rs in by_type.values() for r in rs if r[0] == "overall")
    print(f"position bias (a verdict that followed the position): {biased} of {total} pairs")


NOTE_NAMED = re.compile(r"\bnote ([12])\b", re.IGNORECASE)


def model_report(rows: list[dict]) -> None:
    """Per criterion, on a model's pairs: verdicts that followed the position, and replies whose
    reason names exactly one note while the winner given is the other (a reason that does not
    support its verdict)."""
    rows = [r for r in rows if r.get("outcomes")]
    criteria = list(rows[0]["outcomes"]) if rows else []
    print(
        f"\n{'criterion':13} {'followed position':>18} {'first':>6} {'second':>7}"
        f" {'reason names the other note':>28}"
    )
    for c in criteria:
        follows = sum(1 for r in rows if r["follows_position"][c])
        first = sum(1 for r in rows if r["follows_position"][c] and r["orders"]["ab"][c] == "first")
        against = named = 0
        for r in rows:
            for order in ("ab", "ba"):
                verdict = r["orders"][order][c]
                reason = ((r.get("decided_by") or {}).get(order) or {}).get(c, {}).get("reason", "")
                notes = set(NOTE_NAMED.findall(reason))
                if verdict in ("first", "second") and len(notes) == 1:
                    named += 1
                    against += notes != {"1" if verdict == "first" else "2"}
        print(
            f"{c:13} {follows:>9} of {len(rows):<5} {first:>6} {follows - first:>7}"
            f" {against:>14} of {named:<5}"
        )


def rate(results: list[tuple[str, str, bool, bool]]) -> str:
    n = len(results)
    if not n:
        return "n/a"
    k = sum(1 for r in results if r[1] == "win")
    lo, hi = wilson_interval(k, n)
    return f"{k / n:.0%} [{lo:.0%}, {hi:.0%}]"


if __name__ == "__main__":
    main()
