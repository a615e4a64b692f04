"""Rebuild ``data.jsonl`` of the bundled ``aci-demo`` eval set from an ACI-Bench checkout.

Usage: ``.venv/bin/python eval_sets/aci-demo/build.py [ACI_BENCH_CHALLENGE_DATA_DIR]``
(default: ``/work/shared/data/aci-bench/challenge_data``, wyim/aci-bench @ b909b2bb).

The selection is fixed (``SELECTION`` below) so the file is reproducible byte for byte; see
``README.md`` for why these ten encounters were chosen. Text fields are copied verbatim.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from clinjudge.datasets import load_aci_bench

DEFAULT_SOURCE = Path("/work/shared/data/aci-bench/challenge_data")
OUT = Path(__file__).resolve().parent / "data.jsonl"

#: encounter_id -> specialty (curator's label; not part of ACI-Bench).
SELECTION: dict[str, str] = {
    "D2N005": "orthopedics (hand)",
    "D2N007": "primary care / psychiatry",
    "D2N011": "cardiology",
    "D2N021": "endocrinology",
    "D2N028": "gastroenterology",
    "D2N031": "breast surgery / oncology",
    "D2N038": "hepatology / infectious disease",
    "D2N047": "urology",
    "D2N053": "dermatology",
    "D2N059": "pulmonology",
}

#: A header line: upper-case words, optionally ending with ':' (e.g. "HPI:", "ASSESSMENT AND PLAN").
_HEADER = re.compile(r"^[A-Z][A-Z /&]+:?$")

#: Metadata fields kept (patient and doctor names are left out).
KEPT_METADATA = ("source_id", "patient_gender", "patient_age", "cc", "2nd_complaints")


def note_headers(note: str) -> list[str]:
    """Header lines of a note, in order (upper-case lines alone on their line)."""
    return [line.strip() for line in note.splitlines() if _HEADER.match(line.strip())]


def build(source: Path) -> list[dict]:
    """The selected encounters as JSON records (text verbatim, metadata normalised by
    :func:`clinjudge.datasets.load_aci_bench`)."""
    items = {item.id: item for item in load_aci_bench(source / "train.csv").items}
    return [
        {
            "encounter_id": encounter_id,
            "dataset": items[encounter_id].meta["dataset"],
            "dialogue": items[encounter_id].transcript,
            "note": items[encounter_id].note,
            "split": "train",
            **{key: items[encounter_id].meta.get(key) for key in KEPT_METADATA},
            "specialty": specialty,
            "note_headers": note_headers(items[encounter_id].note),
        }
        for encounter_id, specialty in SELECTION.items()
    ]


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SOURCE
    records = build(source)
    with OUT.open("w", encoding="utf-8", newline="\n") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} encounters to {OUT}")


if __name__ == "__main__":
    main()
