"""The rubric judge offline against reviewers' fact labels (issue 39, "How it is measured").

The omission labels of ``bench/omission_labels/`` (ACI-Bench test3 encounters, each note
labelled twice, independently: every listed visit fact covered / omitted / contradicted by the
note) are read as a rubric dataset: one criterion per labelled fact, ``fact: <its wording>``
("the note documents <fact>"), and the label *met* ⇔ the labeller says ``covered``. Facts a
labeller calls invalid are left out of that labeller's comparison (as
``bench_omission_labels.py`` does). The rubric judge grades them offline through
``--judges rubric:FILE`` (a per-item ``criteria_column``); the omission judge is run on the same
note and its facts matched to the labelled ones by wording and transcript sentence
(``covered`` or not). Printed, per labeller:

- macro F1 (the mean of the F1 of "covered" and of "not covered", as HealthBench scores its
  grader against physicians) and Cohen's κ of the rubric judge;
- the same for the omission judge on the facts both judges graded (the target: the rubric's
  macro F1 within 0.05 of it — they read the same way);
- the labellers' agreement with each other on the facts both call valid (the ceiling);
- the rubric judge reading the note only (no transcript): each fact read from its wording
  alone, as a researcher's criterion without the visit would be.

Sealed encounters (none of their files is opened) are skipped and named. The transcripts and
notes come from ``../shared/data/aci-bench``: only the rows of the encounters used are kept.

    .venv/bin/python bench/bench_rubric.py
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sklearn.metrics import f1_score  # noqa: E402

from clinjudge.datasets.items import Item  # noqa: E402
from clinjudge.evaluators import BuildOptions, build_evaluator  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402
from clinjudge.metrics.agreement import cohen_kappa  # noqa: E402

HERE = Path(__file__).resolve().parent / "omission_labels"
ACI = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench"
#: Never opened, printed or read (the sealed part of ACI-Bench test3).
SEALED = frozenset(
    {"D2N172", "D2N175", "D2N177", "D2N189", "D2N190", "D2N195", "D2N197", "D2N204", "D2N207"}
)
NOTE_FILES = {"GPT-4": "GPT-4_test3.csv", "BART": "BART_large_clef_taskC_test3.csv"}
RUBRIC = """---
name: omission-labels
version: 1
reads: [transcript, note]
criteria_column: criteria
---
"""


def rows_of(path: Path, wanted: set[str], column: str) -> dict[str, str]:
    """``column`` of the rows of ``path`` whose ``encounter_id`` is wanted; others are skipped
    unread beyond the parser."""
    found = {}
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["encounter_id"] in wanted:
                found[row["encounter_id"]] = row[column]
    return found


def encounters() -> tuple[list[Path], list[str]]:
    """The labelled encounters to use, and the sealed ones skipped (by directory name only)."""
    dirs = sorted(p for p in HERE.iterdir() if p.is_dir())
    return [p for p in dirs if p.name not in SEALED], [p.name for p in dirs if p.name in SEALED]


def main() -> None:
    used, skipped = encounters()
    if skipped:
        print(f"skipped, sealed: {', '.join(skipped)} (none of their files opened)")
    systems = {
        d.name: (d / "system.txt").read_text().strip() if (d / "system.txt").exists() else "GPT-4"
        for d in used
    }
    names = set(systems)
    transcripts = rows_of(ACI / "challenge_data" / "clef_taskC_test3.csv", names, "dialogue")
    notes: dict[str, str] = {}
    for system, file in NOTE_FILES.items():
        wanted = {e for e, s in systems.items() if s == system}
        if wanted:
            notes |= rows_of(ACI / "model_notes" / file, wanted, "note")
    kb = KnowledgeBase.default()
    with tempfile.TemporaryDirectory() as tmp:
        rubric_path = Path(tmp) / "omission_labels.rubric.md"
        rubric_path.write_text(RUBRIC, encoding="utf-8")
        options = BuildOptions(backend="offline", knowledge=kb)
        rubric = build_evaluator(f"rubric:{rubric_path}", options)
        alone_path = Path(tmp) / "wording_alone.rubric.md"
        alone_path.write_text(RUBRIC.replace("[transcript, note]", "[note]"), encoding="utf-8")
        alone = build_evaluator(f"rubric:{alone_path}", options)
        omission = build_evaluator("omission", BuildOptions(backend="offline", knowledge=kb))
        kinds = ("rubric", "shared", "omission", "alone")
        pairs = {lab: {k: ([], []) for k in kinds} for lab in "AB"}
        between: tuple[list[bool], list[bool]] = ([], [])
        n_graded = n_criteria = 0
        for d in used:
            enc = d.name
            listed = [json.loads(x) for x in (d / "facts.jsonl").read_text().splitlines() if x]
            criteria = [{"id": f["id"], "fact": f["fact"], "points": 1} for f in listed]
            item = Item(
                id=enc,
                transcript=transcripts[enc],
                note=notes[enc],
                meta={"criteria": json.dumps(criteria)},
            )
            row = asyncio.run(rubric.evaluate(item))
            n_graded += row["n_graded"]
            n_criteria += row["n_criteria"]
            met = {c["id"]: c.get("met") for c in row["criteria"]}
            bare = asyncio.run(alone.evaluate(item))
            met_alone = {c["id"]: c.get("met") for c in bare["criteria"]}
            by_key = {(f["fact"].lower().strip(), f["transcript_quote"]): f["id"] for f in listed}
            facts = asyncio.run(omission.evaluate(item))["facts"]
            covered = {
                by_key[key]: f["status"] == "covered"
                for f in facts
                if (key := (f["text"].lower().strip(), f["quote"])) in by_key
            }
            labels = {
                lab: {
                    f["id"]: f for f in json.loads((d / f"{enc}.{lab}.json").read_text())["facts"]
                }
                for lab in ("A", "B")
            }
            for lab, given in labels.items():
                for fid, label in given.items():
                    if not label["valid"]:
                        continue
                    truth = label["status"] == "covered"
                    if met_alone.get(fid) is not None:
                        pairs[lab]["alone"][0].append(truth)
                        pairs[lab]["alone"][1].append(bool(met_alone[fid]))
                    if met.get(fid) is not None:
                        pairs[lab]["rubric"][0].append(truth)
                        pairs[lab]["rubric"][1].append(bool(met[fid]))
                    if fid in covered and met.get(fid) is not None:
                        pairs[lab]["omission"][0].append(truth)
                        pairs[lab]["omission"][1].append(covered[fid])
                        pairs[lab]["shared"][0].append(truth)
                        pairs[lab]["shared"][1].append(bool(met[fid]))
            for fid, a in labels["A"].items():
                b = labels["B"][fid]
                if a["valid"] and b["valid"]:
                    between[0].append(a["status"] == "covered")
                    between[1].append(b["status"] == "covered")
    print(f"== {len(used)} encounters; rubric criteria graded offline: {n_graded}/{n_criteria} ==")
    print(line("labeller A vs labeller B (ceiling)", *between))
    for lab in ("A", "B"):
        print(line(f"rubric offline vs labeller {lab}, every valid fact", *pairs[lab]["rubric"]))
        print(
            line(f"rubric offline vs labeller {lab}, facts both judges read", *pairs[lab]["shared"])
        )
        print(line(f"omission judge vs labeller {lab}, the same facts", *pairs[lab]["omission"]))
        print(
            line(
                f"rubric offline, wording alone (reads the note only) vs {lab}",
                *pairs[lab]["alone"],
            )
        )


def line(what: str, truth: list[bool], predicted: list[bool]) -> str:
    if not truth:
        return f"{what}: no facts"
    macro = f1_score(truth, predicted, average="macro", zero_division=0)
    kappa = cohen_kappa(truth, predicted)
    return f"{what}: macro F1 {macro:.3f}, κ {kappa:.3f} (n = {len(truth)} facts)"


if __name__ == "__main__":
    sys.exit(main())
