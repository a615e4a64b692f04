"""The rubric judge against reviewers' fact labels (issue 39, "How it is measured").

The omission labels of ``bench/omission_labels/`` (ACI-Bench test3 encounters, each note
labelled twice, independently: every listed visit fact covered / omitted / contradicted by the
note) are read as a rubric dataset: one criterion per labelled fact, ``fact: <its wording>``
("the note documents <fact>"), and the label *met* ⇔ the labeller says ``covered``. Facts a
labeller calls invalid are left out of that labeller's labels (as ``bench_omission_labels.py``
does). The bench writes, under ``--out``, the dataset (``data.jsonl``, the facts of each
encounter in a ``criteria`` column), the rubric files and each labeller's criterion labels
(``labels/A.jsonl``, ``labels/B.jsonl``), then runs the product's commands on them:

    clinjudge compare OUT/data.jsonl --judges rubric:OUT/omission_labels.rubric.md,…
        --out OUT/run
    clinjudge agreement OUT/run --labels OUT/labels/A.jsonl --labels OUT/labels/B.jsonl
        --out OUT/agreement

and prints, from ``agreement.json``, per labeller:

- macro F1 (the mean of the F1 of "covered" and of "not covered", as HealthBench scores its
  grader against physicians) and Cohen's κ of the rubric judge;
- the labellers' agreement with each other on the facts both call valid (the ceiling);
- the rubric judge reading the note only (no transcript): each fact read from its wording
  alone, as a researcher's criterion without the visit would be;
- offline only: the omission judge, run on the same notes with its facts matched to the
  labelled ones by wording and transcript sentence, and the rubric judge on the facts both
  judges read (the target: the rubric's macro F1 within 0.05 of the omission judge's — they
  read the same way); scored with the same function as ``agreement``
  (:func:`clinjudge.metrics.criterion_agreement.met_agreement`).

``--backend local --gguf FILE --encounters D2N171`` grades with a local model (slow on a CPU:
give one or two encounters) and prints the run's wall time, calls, tokens and parse failures;
``--option rubric.batch_size=1`` (passed to compare) asks one criterion per call.
Sealed encounters (none of their files is opened) are skipped and named. The transcripts and
notes come from ``../shared/data/aci-bench``: only the rows of the encounters used are kept.

    .venv/bin/python bench/bench_rubric.py
    .venv/bin/python bench/bench_rubric.py --backend local --gguf model.gguf --encounters D2N171
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from clinjudge.datasets.items import Item  # noqa: E402
from clinjudge.evaluators import BuildOptions, build_evaluator  # noqa: E402
from clinjudge.metrics.criterion_agreement import met_agreement  # noqa: E402

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
LABELLERS = ("A", "B")


def rows_of(path: Path, wanted: set[str], column: str) -> dict[str, str]:
    """``column`` of the rows of ``path`` whose ``encounter_id`` is wanted; others are skipped
    unread beyond the parser."""
    found = {}
    with path.open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["encounter_id"] in wanted:
                found[row["encounter_id"]] = row[column]
    return found


def encounters(only: list[str] | None) -> tuple[list[Path], list[str]]:
    """The labelled encounters to use (``only`` those, when given), and the sealed ones skipped
    (by directory name only)."""
    dirs = sorted(p for p in HERE.iterdir() if p.is_dir())
    if only:
        if SEALED & set(only):
            sys.exit(f"sealed, never used: {', '.join(sorted(SEALED & set(only)))}")
        dirs = [p for p in dirs if p.name in only]
    return [p for p in dirs if p.name not in SEALED], [p.name for p in dirs if p.name in SEALED]


def write_inputs(used: list[Path], out: Path) -> dict[str, Item]:
    """``data.jsonl``, the two rubric files and ``labels/<labeller>.jsonl`` under ``out``; the
    items, for the omission judge."""
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
    (out / "omission_labels.rubric.md").write_text(RUBRIC, encoding="utf-8")
    alone = RUBRIC.replace("[transcript, note]", "[note]").replace("labels\n", "alone\n")
    (out / "wording_alone.rubric.md").write_text(alone, encoding="utf-8")
    (out / "labels").mkdir(exist_ok=True)
    items, rows = {}, []
    labels: dict[str, list[dict]] = {lab: [] for lab in LABELLERS}
    for d in used:
        enc = d.name
        listed = [json.loads(x) for x in (d / "facts.jsonl").read_text().splitlines() if x]
        criteria = [{"id": f["id"], "fact": f["fact"], "points": 1} for f in listed]
        row = {"id": enc, "transcript": transcripts[enc], "note": notes[enc]}
        rows.append(row | {"criteria": json.dumps(criteria)})
        items[enc] = Item(id=enc, **{k: row[k] for k in ("transcript", "note")}, meta={})
        items[enc].meta["criteria"] = rows[-1]["criteria"]
        items[enc].meta["facts"] = listed
        for lab in LABELLERS:
            given = json.loads((d / f"{enc}.{lab}.json").read_text())["facts"]
            labels[lab] += [
                {
                    "item": enc,
                    "criterion": f["id"],
                    "label": "met" if f["status"] == "covered" else "not met",
                    "comment": f.get("comment", ""),
                }
                for f in given
                if f["valid"]
            ]
    (out / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for lab, given in labels.items():
        text = "".join(json.dumps(x) + "\n" for x in given)
        (out / "labels" / f"{lab}.jsonl").write_text(text, encoding="utf-8")
    return items


def clinjudge(log: Path, *args: str) -> float:
    """Run a clinjudge command (output appended to ``log``); its wall time in seconds."""
    started = time.monotonic()
    with log.open("a", encoding="utf-8") as f:
        done = subprocess.run([sys.executable, "-m", "clinjudge", *args], stdout=f, stderr=f)
    if done.returncode:
        sys.exit(f"clinjudge {args[0]} exited {done.returncode}: see {log}")
    return time.monotonic() - started


def omission_lines(items: dict[str, Item], run: Path, out: Path) -> list[str]:
    """The omission judge offline and the rubric judge on the facts both read (offline only)."""
    from clinjudge.agreement.rubric_runs import read_rubric_run
    from clinjudge.knowledge.base import KnowledgeBase

    omission = build_evaluator(
        "omission", BuildOptions(backend="offline", knowledge=KnowledgeBase.default())
    )
    rubric = next(
        j for j in read_rubric_run(run).judges if j.name.endswith("omission_labels.rubric.md")
    )
    kinds = ("shared", "omission")
    pairs = {lab: {k: ([], [], []) for k in kinds} for lab in LABELLERS}
    for enc, item in items.items():
        listed = item.meta["facts"]
        by_key = {(f["fact"].lower().strip(), f["transcript_quote"]): f["id"] for f in listed}
        facts = asyncio.run(omission.evaluate(item))["facts"]
        covered = {
            by_key[key]: f["status"] == "covered"
            for f in facts
            if (key := (f["text"].lower().strip(), f["quote"])) in by_key
        }
        grades = rubric.grades.get(enc, {})
        for lab in LABELLERS:
            for x in map(json.loads, (out / "labels" / f"{lab}.jsonl").read_text().splitlines()):
                fid, truth = x["criterion"], x["label"] == "met"
                grade = grades.get(fid, {})
                if x["item"] != enc or fid not in covered or grade.get("status") != "graded":
                    continue
                for kind, call in (("omission", covered[fid]), ("shared", bool(grade["met"]))):
                    pairs[lab][kind][0].append(truth)
                    pairs[lab][kind][1].append(call)
                    pairs[lab][kind][2].append(enc)
    lines = []
    for lab in LABELLERS:
        lines.append(
            line(
                f"rubric offline vs labeller {lab}, facts both judges read",
                met_agreement(*pairs[lab]["shared"]),
            )
        )
        lines.append(
            line(
                f"omission judge vs labeller {lab}, the same facts",
                met_agreement(*pairs[lab]["omission"]),
            )
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=("offline", "local"), default="offline")
    parser.add_argument("--gguf", help="the GGUF model file (--backend local)")
    parser.add_argument("--encounters", help="comma-separated encounters (default: every one)")
    parser.add_argument("--out", type=Path, help="working directory (default: a temporary one)")
    parser.add_argument(
        "--option", action="append", default=[], help="passed to compare, e.g. rubric.batch_size=1"
    )
    args = parser.parse_args()
    if args.backend == "local" and not args.gguf:
        parser.error("--backend local needs --gguf FILE")
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-rubric-"))
    out.mkdir(parents=True, exist_ok=True)
    used, skipped = encounters(args.encounters.split(",") if args.encounters else None)
    if skipped:
        print(f"skipped, sealed: {', '.join(skipped)} (none of their files opened)")
    items = write_inputs(used, out)
    run, agree, log = out / "run", out / "agreement", out / "commands.log"
    rubrics = [out / "omission_labels.rubric.md", out / "wording_alone.rubric.md"]
    if args.backend == "local":
        rubrics = rubrics[:1]  # the model's time goes to the visit-grounded rubric
    backend = ["--backend", args.backend] + (["--gguf", args.gguf] if args.gguf else [])
    backend += [a for option in args.option for a in ("--option", option)]
    judges = ",".join(f"rubric:{r}" for r in rubrics)
    seconds = clinjudge(
        log, "compare", str(out / "data.jsonl"), "--judges", judges, *backend, "--out", str(run)
    )
    labels = [a for lab in LABELLERS for a in ("--labels", str(out / "labels" / f"{lab}.jsonl"))]
    clinjudge(log, "agreement", str(run), *labels, "--out", str(agree))
    report = json.loads((agree / "agreement.json").read_text())
    summary = json.loads((run / "report.json").read_text())
    graded = summary["judges"][f"rubric:{rubrics[0]}"]["criteria"]
    n_graded = sum(graded["graded_by"].values())
    what = f"{len(used)} encounter{'' if len(used) == 1 else 's'} ({', '.join(items)})"
    print(f"== {what}; rubric criteria graded {args.backend}: {n_graded}/{graded['n']} ==")
    for pair in report["labellers"]:
        print(line(f"labeller {pair['first']} vs labeller {pair['second']} (ceiling)", pair))
    by_file = {g["judge"].rsplit("/", 1)[-1]: g for g in report["graders"]}
    extra = omission_lines(items, run, out) if args.backend == "offline" else []
    for i, lab in enumerate(LABELLERS):
        rubric = next(
            a for a in by_file["omission_labels.rubric.md"]["against"] if a["labeller"] == lab
        )
        print(line(f"rubric {args.backend} vs labeller {lab}, every valid fact", rubric))
        print(" ", excluded_line(rubric))
        for shown in extra[2 * i : 2 * i + 2]:
            print(shown)
        if "wording_alone.rubric.md" in by_file:
            alone = next(
                a for a in by_file["wording_alone.rubric.md"]["against"] if a["labeller"] == lab
            )
            print(
                line(f"rubric {args.backend}, wording alone (reads the note only) vs {lab}", alone)
            )
        bias = rubric["length_bias"]["slope_per_100_words"]
        n = rubric["length_bias"]["n"]
        print(f"  length bias vs {lab}: β {fmt(bias)} per 100 words (n = {n} notes)")
    usage = summary.get("usage") or {}
    failures = len(summary.get("failures") or [])
    print(f"compare wall time {seconds:.0f} s; usage {json.dumps(usage)}; failures {failures}")
    print(f"inputs, run and agreement report under {out}")


def fmt(entry: dict) -> str:
    value, ci = entry.get("value"), entry.get("ci95")
    if value is None:
        return "n/a"
    return f"{value:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else " (n too small)")


def line(what: str, entry: dict) -> str:
    if not entry["n"]:
        return f"{what}: no facts"
    scores = f"macro F1 {fmt(entry['macro_f1'])}, κ {fmt(entry['kappa'])}"
    return f"{what}: {scores} (n = {entry['n']} facts)"


def excluded_line(entry: dict) -> str:
    left = {k: v for k, v in entry["excluded"].items() if v}
    return "left out: " + (", ".join(f"{v} {k}" for k, v in left.items()) or "none")


if __name__ == "__main__":
    sys.exit(main())
