"""The safety case on ACI-Bench test3 (issue 14): the 40 encounters × 4 systems (reference,
GPT-4, ChatGPT, BART) judged offline by ``compare --judges inference-aware,omission``, then
``clinjudge safety-case`` with ``bench/safety_gates.toml`` and the patient's gender and age as
subgroups. Prints the case table; the files land in ``--out`` (default runs/bench-safety-case).

    .venv/bin/python bench/bench_safety_case.py [--out DIR] [--subgroup-column patient_gender]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
from pathlib import Path

from clinjudge.datasets import load_aci_bench

ACI = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench"
SYSTEMS = {
    "GPT-4": "GPT-4_test3",
    "ChatGPT": "ChatGPT_test3",
    "BART": "BART_large_clef_taskC_test3",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/bench-safety-case"))
    parser.add_argument("--subgroup-column", default="patient_gender")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    reference = load_aci_bench(ACI / "challenge_data" / "clef_taskC_test3.csv").items
    notes = {"reference": {i.id: i.note for i in reference}}
    for name, file in SYSTEMS.items():
        with (ACI / "model_notes" / f"{file}.csv").open(newline="", encoding="utf-8") as f:
            notes[name] = {r["encounter_id"]: r["note"] for r in csv.DictReader(f)}
    runs = []
    for name, by_id in notes.items():
        data = args.out / f"{name}.jsonl"
        empty = [i.id for i in reference if not by_id.get(i.id, "").strip()]
        if empty:
            print(f"{name}: {len(empty)} encounter(s) without a note, left out: {', '.join(empty)}")
        with data.open("w", encoding="utf-8") as f:
            for item in reference:
                if item.id in empty:
                    continue
                row = {"id": item.id, "transcript": item.transcript, "note": by_id[item.id]}
                f.write(json.dumps({**row, **item.meta}) + "\n")
        run = args.out / name
        subprocess.run(
            [
                "clinjudge",
                "compare",
                str(data),
                "--judges",
                "inference-aware,omission",
                "--out",
                str(run),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        runs.append(str(run))
    gates = Path(__file__).with_name("safety_gates.toml")
    result = subprocess.run(
        [
            "clinjudge",
            "safety-case",
            *runs,
            "--gates",
            str(gates),
            "--out",
            str(args.out / "case"),
            "--metadata",
            str(args.out / "reference.jsonl"),
            "--subgroup-column",
            args.subgroup_column,
            "--min-n",
            "15",
        ],
    )
    print(f"exit code {result.returncode}; see {args.out / 'case' / 'safety-case.md'}")


if __name__ == "__main__":
    main()
