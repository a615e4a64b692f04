"""How exactly :mod:`clinjudge.agreement.units` reproduces the shared unit file: every note of
``claim-labels/notes.jsonl`` cut again and compared with ``claim-labels/units.jsonl`` unit by
unit (number, kind, start, end, text).

Usage: ``python bench/bench_units.py [CLAIM_LABELS_DIR] [--show N]`` (default
``../shared/data/aci-bench/claim-labels`` next to the repository). Prints the share of notes
whose units are identical, the share of identical units, and the first differences (``--show``
notes, default 10).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from clinjudge.agreement.units import unit_rows

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "data" / "aci-bench" / "claim-labels"
FIELDS = ("encounter", "system", "unit", "kind", "start", "end", "text")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _keys(units: list[dict]) -> list[tuple]:
    return [tuple(u[k] for k in FIELDS) for u in units]


def differences(expected: list[dict], got: list[dict]) -> list[str]:
    """What differs between two notes' units, one line per unit that is not in both."""
    ours, theirs = set(_keys(got)), set(_keys(expected))
    lines = [f"  shared only: unit {t[2]} {t[3]} {t[6][:90]!r}" for t in sorted(theirs - ours)]
    lines += [f"  ours only:   unit {t[2]} {t[3]} {t[6][:90]!r}" for t in sorted(ours - theirs)]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=SHARED)
    parser.add_argument("--show", type=int, default=10, help="notes whose differences to print")
    args = parser.parse_args()
    notes = _lines(args.data / "notes.jsonl")
    shared: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in _lines(args.data / "units.jsonl"):
        shared[row["encounter"], row["system"]].append(row)
    same_notes = same_units = all_units = 0
    shown = 0
    for note in notes:
        expected = shared[note["encounter"], note["system"]]
        got = unit_rows(note["encounter"], note["system"], note["note"])
        ours = set(_keys(got))
        same_units += sum(key in ours for key in _keys(expected))
        all_units += len(expected)
        if _keys(expected) == _keys(got):
            same_notes += 1
        elif shown < args.show:
            shown += 1
            name = f"{note['encounter']}/{note['system']}"
            print(f"{name}: {len(expected)} shared units, {len(got)} ours")
            print("\n".join(differences(expected, got)))
    print(
        f"notes reproduced exactly: {same_notes}/{len(notes)} ({same_notes / len(notes):.1%}); "
        f"units identical: {same_units}/{all_units} ({same_units / all_units:.1%})"
    )


if __name__ == "__main__":
    main()
