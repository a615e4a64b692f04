"""Attacks on every surface of the product, each reported as held or failed with the seconds it
took (issue 35): line separators inside text, repairs that could empty a file, regular
expressions that explode, two writers on one run or label file, the label server's trust, Ray
pointed at something that is not Ray, data that forges a prompt's structure, credentials in
recorded URLs, and the smaller faults (deep JSON, signals from scripts, huge notes).

Each attack lives in ``bench/faults/<surface>.py`` (``ATTACKS``); this script runs them in fresh
temporary directories and prints one table (and ``--json`` for the closing note).

    .venv/bin/python bench/bench_faults.py [--only WORD] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import faults  # noqa: E402
from faults import Attack, Outcome  # noqa: E402


def every_attack() -> list[Attack]:
    found: list[Attack] = []
    for module in pkgutil.iter_modules(faults.__path__):
        found += importlib.import_module(f"faults.{module.name}").ATTACKS
    return sorted(found, key=lambda a: (a.item, a.name))


def run_one(attack: Attack) -> tuple[Outcome, float]:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="faults-") as folder:
        try:
            outcome = attack.run(Path(folder))
        except Exception as exc:  # an attack that breaks is a failed row, not a crashed bench
            last = traceback.format_exception_only(exc)[-1].strip()
            outcome = Outcome(False, f"the attack raised {last[:140]}")
    return outcome, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=None, help="only attacks whose name holds this word")
    parser.add_argument("--json", type=Path, default=None, help="write the rows as JSON")
    args = parser.parse_args()
    attacks = [a for a in every_attack() if args.only is None or args.only in a.name]
    rows = []
    print(f"{'item':>4}  {'attack':<58} {'result':<6} {'s':>7}  detail")
    for attack in attacks:
        outcome, seconds = run_one(attack)
        verdict = "held" if outcome.held else "FAILED"
        print(f"{attack.item:>4}  {attack.name:<58} {verdict:<6} {seconds:7.1f}  {outcome.detail}")
        sys.stdout.flush()
        rows.append(
            {
                "item": attack.item,
                "attack": attack.name,
                "held": outcome.held,
                "seconds": round(seconds, 2),
                "detail": outcome.detail,
            }
        )
    held = sum(r["held"] for r in rows)
    print(f"\n{held} of {len(rows)} attacks held")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
