"""Prepare one encounter for omission labelling by ``GUIDE.md``.

Runs the current offline omission judge on the encounter's note of one system (ACI-Bench test3,
``../shared/data``) and writes, into ``--out``, the three files a labeller reads —
``transcript.txt``, ``note.txt`` and ``facts.jsonl`` (id, category, fact, transcript quote; the
judge's statuses and importances are hidden, so labels are blind) — and into
``bench/omission_labels/ENC/`` the same ``facts.jsonl`` and ``system.txt`` (whose note was
labelled), which ``bench_omission_labels.py`` reads.

    .venv/bin/python bench/omission_labels/prepare.py D2N182 --system BART --out /tmp/olab/D2N182
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_omission_labels import ACI, HERE, note_of  # noqa: E402

from clinjudge.datasets import load_aci_bench  # noqa: E402
from clinjudge.datasets.items import Item  # noqa: E402
from clinjudge.evaluators import BuildOptions, build_evaluator  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("encounter")
    parser.add_argument("--system", default="GPT-4", help="GPT-4 or BART (model_notes file)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    reference = {
        i.id: i for i in load_aci_bench(ACI / "challenge_data" / "clef_taskC_test3.csv").items
    }
    transcript = reference[args.encounter].transcript
    note = note_of(args.system, args.encounter)
    judge = build_evaluator(
        "omission", BuildOptions(backend="offline", knowledge=KnowledgeBase.default())
    )
    row = asyncio.run(judge.evaluate(Item(id=args.encounter, transcript=transcript, note=note)))
    facts = [
        {
            "id": f"f{n}",
            "category": fact["category"],
            "fact": fact["text"],
            "transcript_quote": fact["quote"],
        }
        for n, fact in enumerate(row["facts"], start=1)
    ]
    lines = "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in facts)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "transcript.txt").write_text(transcript + "\n", encoding="utf-8")
    (args.out / "note.txt").write_text(note + "\n", encoding="utf-8")
    (args.out / "facts.jsonl").write_text(lines, encoding="utf-8")
    keep = HERE / args.encounter
    keep.mkdir(exist_ok=True)
    (keep / "facts.jsonl").write_text(lines, encoding="utf-8")
    (keep / "system.txt").write_text(args.system + "\n", encoding="utf-8")
    print(f"{args.encounter} ({args.system}): {len(facts)} facts → {args.out}")


if __name__ == "__main__":
    main()
