"""Check a labels file written by GUIDE.md against units.jsonl.

    python bench/claim_labels/check_labels.py bench/claim_labels/labels/D2N181.jsonl

Every text unit of every note of the encounter must be labelled exactly once, with a valid
label, a severity exactly when the label is not ``supported`` and a span then too. Prints the
counts per system and label, or the first problems and exits 1.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

from render_encounter import DEFAULT_DATA, load

LABELS = {"supported", "unsupported", "contradicted"}


def problems(rows: list[dict], units: list[dict]) -> list[str]:
    wanted = {(u["system"], u["unit"]) for u in units if u["kind"] == "text"}
    seen: collections.Counter = collections.Counter()
    out = []
    for i, r in enumerate(rows, 1):
        key = (r.get("system"), r.get("unit"))
        seen[key] += 1
        if key not in wanted:
            out.append(f"line {i}: {key} is not a text unit of this encounter")
        if r.get("label") not in LABELS:
            out.append(f"line {i}: label {r.get('label')!r}")
        bad = r.get("label") != "supported"
        if bad and r.get("severity") not in ("major", "minor"):
            out.append(f"line {i}: {r.get('label')} needs severity major/minor")
        if not bad and r.get("severity") is not None:
            out.append(f"line {i}: supported unit with a severity")
        if bad and not r.get("span"):
            out.append(f"line {i}: {r.get('label')} needs the offending span")
        for field in ("evidence", "reason"):
            if not isinstance(r.get(field), str):
                out.append(f"line {i}: {field} missing")
    out += [f"unit {k} labelled {n} times" for k, n in seen.items() if n > 1]
    out += [f"unit {k} not labelled" for k in sorted(wanted - set(seen))]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labels", type=Path)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.labels.open() if line.strip()]
    encounters = {r.get("encounter") for r in rows}
    if len(encounters) != 1:
        raise SystemExit(f"error: one encounter per file, found {sorted(map(str, encounters))}")
    _, units = load(args.data, encounters.pop())
    found = problems(rows, units)
    if found:
        print("\n".join(found[:30]))
        raise SystemExit(1)
    counts = collections.Counter((r["system"], r["label"]) for r in rows)
    for (system, label), n in sorted(counts.items()):
        print(f"{system:10} {label:13} {n}")
    print(f"ok: {len(rows)} units")


if __name__ == "__main__":
    main()
