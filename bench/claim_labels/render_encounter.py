"""Print one ACI-Bench test3 encounter for sentence labelling by GUIDE.md.

    python bench/claim_labels/render_encounter.py D2N181 [--data DIR_OF_CLAIM_LABELS]

Shows the transcript with its turn numbers (the dialogue's non-empty lines, counted from 1, as
GUIDE.md's ``evidence`` field uses them), then each note of the encounter whole and its text
units with their numbers: every one of those units gets exactly one label.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared/data/aci-bench/claim-labels"


def load(data: Path, encounter: str) -> tuple[list[dict], list[dict]]:
    notes = [
        n for n in map(json.loads, (data / "notes.jsonl").open()) if n["encounter"] == encounter
    ]
    units = [
        u for u in map(json.loads, (data / "units.jsonl").open()) if u["encounter"] == encounter
    ]
    if not notes:
        raise SystemExit(f"error: no notes for encounter {encounter!r}")
    return notes, units


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("encounter")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    notes, units = load(args.data, args.encounter)
    turns = [line for line in notes[0]["dialogue"].splitlines() if line.strip()]
    print(f"# Encounter {args.encounter}: transcript ({len(turns)} turns)\n")
    for i, turn in enumerate(turns, 1):
        print(f"T{i}: {turn}")
    for note in notes:
        system = note["system"]
        mine = [u for u in units if u["system"] == system]
        text_units = [u for u in mine if u["kind"] == "text"]
        print(f"\n\n# Note by system '{system}' ({len(text_units)} text units to label)\n")
        print(note["note"])
        print(f"\n## Units of '{system}' (label every 'text' unit; headers are context only)\n")
        for u in mine:
            tag = "HEADER" if u["kind"] == "header" else f"unit {u['unit']}"
            print(f"[{tag}] {u['text']}")


if __name__ == "__main__":
    main()
