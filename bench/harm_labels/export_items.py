"""Write the items to label for harm category: every sentence a reviewer labelled unsupported
or contradicted, one file per encounter (``items/ENCOUNTER.jsonl``), by ``GUIDE.md``.

    .venv/bin/python bench/harm_labels/export_items.py [--data DIR] [--part open|sealed]

Each item: ``key`` (``ENCOUNTER/system/uN``), ``note_id``, ``section`` (the note's header above
the sentence, as written), ``sentence``, ``span`` (the wrong part, as the reviewer marked it),
``label``, ``severity`` and the reviewer's ``reason``. Sealed encounters
(``claim_labels/sealed.json``) are written only with ``--part sealed``, for a labeller whose
files are scored in aggregate and not read while the judge is developed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent
DEFAULT_DATA = BENCH.parents[1] / "shared" / "data" / "aci-bench" / "claim-labels"


def label_rows(data: Path) -> list[dict]:
    """Every sentence label, the shared set's first (as ``bench_agreement`` reads them)."""
    seen: dict[tuple, dict] = {}
    for folder in (data / "labels", BENCH / "claim_labels" / "labels"):
        for path in sorted(folder.glob("*.jsonl")):
            for line in path.open():
                row = json.loads(line)
                seen.setdefault((row["encounter"], row["system"], row["unit"]), row)
    return list(seen.values())


def sections(data: Path) -> dict[tuple, str]:
    """The header above every text unit."""
    out, header = {}, ""
    for line in (data / "units.jsonl").open():
        unit = json.loads(line)
        if unit["unit"] == 0:
            header = ""
        if unit["kind"] == "header":
            header = unit["text"]
        out[(unit["encounter"], unit["system"], unit["unit"])] = (header, unit["text"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--part", choices=("open", "sealed"), default="open")
    args = ap.parse_args()
    sealed = set(json.loads((BENCH / "claim_labels" / "sealed.json").read_text())["sealed"])
    text = sections(args.data)
    by_encounter: dict[str, list[dict]] = {}
    for row in label_rows(args.data):
        if row["label"] == "supported" or (row["encounter"] in sealed) != (args.part == "sealed"):
            continue
        key = (row["encounter"], row["system"], row["unit"])
        header, sentence = text[key]
        by_encounter.setdefault(row["encounter"], []).append(
            {
                "key": f"{row['encounter']}/{row['system']}/u{row['unit']}",
                "note_id": f"{row['encounter']}/{row['system']}",
                "section": header,
                "sentence": sentence,
                "span": row.get("span"),
                "label": row["label"],
                "severity": row["severity"],
                "reason": row.get("reason"),
            }
        )
    out = HERE / ("items" if args.part == "open" else "items-sealed")
    out.mkdir(exist_ok=True)
    for encounter, items in sorted(by_encounter.items()):
        items.sort(key=lambda i: (i["note_id"], int(i["key"].rsplit("u", 1)[1])))
        with (out / f"{encounter}.jsonl").open("w") as f:
            f.writelines(json.dumps(i, ensure_ascii=False) + "\n" for i in items)
    print(f"{sum(map(len, by_encounter.values()))} items of {len(by_encounter)} encounters → {out}")


if __name__ == "__main__":
    main()
