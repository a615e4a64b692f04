"""The omission judge against reviewers' fact labels (issue 14): ``bench/omission_labels/``.

ACI-Bench test3 encounters, each with the note of one system (``system.txt``; GPT-4 when
absent: D2N171, D2N185, D2N197 were the first three), each labelled twice, independently, by
the written guide ``GUIDE.md``: every fact the judge listed at labelling time
(``facts.jsonl``: id, category, fact, transcript quote; the judge's statuses were hidden)
marked valid or not, and if valid covered / contradicted / omitted and critical / routine;
then up to 10 omitted facts the list missed (``missed``). ``omission_labels/prepare.py``
prepares an encounter.

The current judge is re-run on the same note; its facts are matched to the labelled ones by
wording and transcript sentence (unmatched new facts are counted, unlabelled). Printed:

- inter-labeller agreement (validity, status, importance);
- share of the judge's matched facts the labellers call valid;
- status agreement and Cohen's κ on valid facts; precision of the judge's ``omitted`` (facts the
  labellers call invalid count as wrong) and its recall of the labelled omissions;
- recall including the facts the list missed: a missed fact counts as caught when a current
  ``omitted`` (or ``contradicted``) fact's transcript span overlaps its quote;
- precision and recall of ``critical``.

The labels guided the rules written after them (history cues, teaching talk, allergies as
such, medication instructions, dose and value facts), so these are development numbers.

    .venv/bin/python bench/bench_omission_labels.py [--errors]

``--errors`` first prints every matched fact where the judge and a labeller differ.
"""

from __future__ import annotations

import asyncio
import collections
import csv
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from clinjudge.datasets import load_aci_bench  # noqa: E402
from clinjudge.datasets.items import Item  # noqa: E402
from clinjudge.evaluators import BuildOptions, build_evaluator  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402
from clinjudge.metrics.agreement import cohen_kappa  # noqa: E402

HERE = Path(__file__).resolve().parent / "omission_labels"
ACI = Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench"
#: ``system.txt`` of a labelled encounter names the system whose note was labelled.
SHOW_ERRORS = "--errors" in sys.argv[1:]
NOTE_FILES = {"GPT-4": "GPT-4_test3.csv", "BART": "BART_large_clef_taskC_test3.csv"}


def note_of(system: str, encounter: str) -> str:
    """The ACI-Bench test3 note of ``system`` (a key of ``NOTE_FILES``) for ``encounter``."""
    path = ACI / "model_notes" / NOTE_FILES[system]
    with path.open(newline="", encoding="utf-8") as f:
        return next(r["note"] for r in csv.DictReader(f) if r["encounter_id"] == encounter)


def system_of(enc_dir: Path) -> str:
    marker = enc_dir / "system.txt"
    return marker.read_text(encoding="utf-8").strip() if marker.exists() else "GPT-4"


def key(fact: str, quote: str) -> tuple[str, str]:
    """A fact's identity for matching: its wording with its polarity, and its sentence. A fact
    the judge now reads with the other polarity is another fact (new, unlabelled): matching
    it to the old label would score a polarity fix as an error and hide a polarity break."""
    return fact.lower().strip(), quote


def main() -> None:
    reference = {
        i.id: i for i in load_aci_bench(ACI / "challenge_data" / "clef_taskC_test3.csv").items
    }
    judge = build_evaluator(
        "omission", BuildOptions(backend="offline", knowledge=KnowledgeBase.default())
    )
    t: collections.Counter[str] = collections.Counter()
    statuses: tuple[list[str], list[str]] = ([], [])
    ab: tuple[list[str], list[str]] = ([], [])
    for enc_dir in sorted(p for p in HERE.iterdir() if (p / f"{p.name}.B.json").exists()):
        enc = enc_dir.name
        listed = [json.loads(x) for x in (enc_dir / "facts.jsonl").read_text().splitlines() if x]
        by_key = {key(f["fact"], f["transcript_quote"]): f["id"] for f in listed}
        labels = {
            lab: json.loads((enc_dir / f"{enc}.{lab}.json").read_text()) for lab in ("A", "B")
        }
        note = note_of(system_of(enc_dir), enc)
        item = Item(id=enc, transcript=reference[enc].transcript, note=note)
        row = asyncio.run(judge.evaluate(item))
        current = row["facts"]
        matched = [(f, by_key.get(key(f["text"], f["quote"]))) for f in current]
        t["new_unlabelled"] += sum(1 for _, old in matched if old is None)
        a, b = ({f["id"]: f for f in labels[x]["facts"]} for x in ("A", "B"))
        for fid in a:
            if a[fid]["valid"] and b[fid]["valid"]:
                ab[0].append(a[fid]["status"])
                ab[1].append(b[fid]["status"])
            t["ab_valid_agree"] += a[fid]["valid"] == b[fid]["valid"]
            t["ab_facts"] += 1
        flagged = [f for f in current if f["status"] != "covered"]
        for data in labels.values():
            lab_facts = {f["id"]: f for f in data["facts"]}
            for fact, old in matched:
                if old is None:
                    continue
                label = lab_facts[old]
                t["facts"] += 1
                omitted = fact["status"] == "omitted"
                t["judge_omitted"] += omitted
                if SHOW_ERRORS:
                    show_error(enc, data["labeller"], fact, label)
                if not label["valid"]:
                    t["invalid"] += 1
                    continue
                statuses[0].append(fact["status"])
                statuses[1].append(label["status"])
                t["label_omitted"] += label["status"] == "omitted"
                t["both_omitted"] += omitted and label["status"] == "omitted"
                t["judge_critical"] += fact["importance"] == "critical"
                t["label_critical"] += label["importance"] == "critical"
                t["both_critical"] += (
                    fact["importance"] == "critical" and label["importance"] == "critical"
                )
            for m in data["missed"]:
                t["missed"] += 1
                start = item.transcript.find(m["transcript_quote"][:40])
                t["missed_caught"] += start >= 0 and any(
                    s <= start < e for f in flagged for s, e in f["spans"]
                )
    same_ab = sum(x == y for x, y in zip(*ab, strict=True))
    print(f"== {t['facts'] // 2} matched facts × 2 labellers ({t['new_unlabelled']} new) ==")
    print(
        f"inter-labeller: validity {ratio(t['ab_valid_agree'], t['ab_facts'])}; status on facts "
        f"both call valid {ratio(same_ab, len(ab[0]))}, κ {cohen_kappa(*ab):.2f}"
    )
    print(f"judge's facts labelled valid: {ratio(t['facts'] - t['invalid'], t['facts'])}")
    same = sum(x == y for x, y in zip(*statuses, strict=True))
    kappa = cohen_kappa(*statuses)
    print(f"status agreement on valid facts: {ratio(same, len(statuses[0]))}, κ {kappa:.2f}")
    print(f"omitted: precision {ratio(t['both_omitted'], t['judge_omitted'])}")
    print(f"omitted: recall of labelled omissions {ratio(t['both_omitted'], t['label_omitted'])}")
    caught = ratio(t["both_omitted"] + t["missed_caught"], t["label_omitted"] + t["missed"])
    print(
        f"omitted: recall with the facts the list missed {caught}"
        f" ({t['missed_caught']} of {t['missed']} missed facts now flagged)"
    )
    print(f"critical: precision {ratio(t['both_critical'], t['judge_critical'])}")
    print(f"critical: recall {ratio(t['both_critical'], t['label_critical'])}")


def show_error(enc: str, labeller: str, fact: dict, label: dict) -> None:
    """Print one matched fact where the judge and this labeller differ (``--errors``)."""
    if not label["valid"]:
        kinds = ["invalid"]
    else:
        kinds = [
            f"{what} {fact[what]}≠{label[what]}"
            for what in ("status", "importance")
            if fact[what] != label[what]
        ]
    if not kinds:
        return
    kind = ", ".join(kinds)
    print(f"{enc}.{labeller} {kind}: [{fact['category']}] {fact['text']!r} — {fact['quote'][:90]}")
    if label.get("comment"):
        print(f"    comment: {label['comment']}")


def ratio(k: int, n: int) -> str:
    return f"{k}/{n} = {k / n:.1%}" if n else f"{k}/0"


if __name__ == "__main__":
    main()
