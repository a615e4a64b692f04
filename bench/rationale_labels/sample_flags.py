"""Collect the offline inference-aware judge's flags on ACI-Bench test3 notes, for labelling
whether each flag's rationale and evidence are right (issue 24, item 1; ``GUIDE.md`` here).

    .venv/bin/python bench/rationale_labels/sample_flags.py [--encounters D2N168,...]
        [--data DIR_OF_CLAIM_LABELS] [--out bench/rationale_labels/flags]

Judges the four notes of each encounter (reference, gpt4, chatgpt, bart) and writes
``flags/ENCOUNTER.jsonl``: one row per tier 4–5 verdict, with ``key`` (a hash of note id, claim
text, tier and rationale: a label stays attached to exactly this flag), the claim, its section,
tier, severity, harm category, rationale and evidence; each transcript span carries the turn
numbers it covers (the dialogue's non-empty lines counted from 1, as the sentence labels' GUIDE
counts them). ``--render ENCOUNTER`` prints an encounter's transcript and flags for a labeller.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from clinjudge.api import ajudge_note, make_setup  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[2] / "shared/data/aci-bench/claim-labels"
#: Twelve of the 32 encounters labelled in ``bench/claim_labels`` (none of the 8 shared ones).
DEFAULT_ENCOUNTERS = (
    "D2N168", "D2N169", "D2N171", "D2N172", "D2N173", "D2N175",
    "D2N177", "D2N178", "D2N180", "D2N181", "D2N183", "D2N184",
)  # fmt: skip
SYSTEMS = ("reference", "gpt4", "chatgpt", "bart")


def flag_key(note_id: str, claim: str, tier: int, rationale: str) -> str:
    text = "\x1f".join((note_id, claim, str(tier), rationale))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def turn_spans(dialogue: str) -> list[tuple[int, int]]:
    """Character span of every non-empty line (turn 1 first)."""
    spans, pos = [], 0
    for line in dialogue.splitlines(keepends=True):
        if line.strip():
            spans.append((pos, pos + len(line.rstrip("\r\n"))))
        pos += len(line)
    return spans


def turns_of(start: int, end: int, spans: list[tuple[int, int]]) -> list[int]:
    return [i for i, (s, e) in enumerate(spans, 1) if s < max(end, start + 1) and start < e]


def load_notes(data: Path, encounters: list[str]) -> list[dict]:
    path = data / "notes.jsonl"
    if not path.is_file():
        raise SystemExit(f"error: {path} not found: --data is the claim-labels directory")
    wanted = set(encounters)
    return [n for n in map(json.loads, path.open()) if n["encounter"] in wanted]


async def collect(notes: list[dict]) -> dict[str, list[dict]]:
    setup = make_setup("inference-aware", "offline", knowledge=KnowledgeBase.default())
    out: dict[str, list[dict]] = {}
    for i, note in enumerate(notes, 1):
        print(f"\r{i}/{len(notes)} notes", end="", file=sys.stderr, flush=True)
        rows = out.setdefault(note["encounter"], [])
        if not note["note"].strip():
            continue
        result = await ajudge_note(note["dialogue"], note["note"], setup=setup, note_id=note["id"])
        spans = turn_spans(note["dialogue"])
        claims = {c.id: c for c in result.report.claims}
        for v in result.report.verdicts:
            if v.tier < 4:
                continue
            c = claims[v.claim_id]
            rows.append(
                {
                    "key": flag_key(note["id"], c.text, v.tier, v.rationale),
                    "note_id": note["id"],
                    "system": note["system"],
                    "claim_id": c.id,
                    "section": c.section,
                    "claim": c.text,
                    "start": c.start,
                    "end": c.end,
                    "tier": v.tier,
                    "subtype": v.subtype,
                    "severity": v.severity,
                    "harm_category": v.harm_category,
                    "rationale": v.rationale,
                    "evidence": [
                        {
                            "source": e.source,
                            "text": e.text,
                            "turns": turns_of(e.start, e.end, spans)
                            if e.source == "transcript"
                            else [],
                        }
                        for e in v.evidence
                    ],
                }
            )
    print(file=sys.stderr)
    return out


def render(data: Path, flags_dir: Path, encounter: str, round_: int | None = None) -> None:
    notes = sorted(load_notes(data, [encounter]), key=lambda n: SYSTEMS.index(n["system"]))
    flags = [json.loads(x) for x in (flags_dir / f"{encounter}.jsonl").open() if x.strip()]
    if round_ is not None:
        flags = [f for f in flags if f.get("round", 1) == round_]
    turns = [line for line in notes[0]["dialogue"].splitlines() if line.strip()]
    print(f"# Encounter {encounter}: transcript ({len(turns)} turns)\n")
    for i, turn in enumerate(turns, 1):
        print(f"T{i}: {turn}")
    for note in notes:
        print(f"\n# Note {note['id']}\n\n{note['note'] or '(empty)'}\n")
        mine = [f for f in flags if f["note_id"] == note["id"]]
        print(f"## Flags on {note['id']} ({len(mine)})\n")
        for f in mine:
            print(
                f"- key {f['key']} · section {f['section']} · tier {f['tier']} "
                f"({f['subtype']}) · severity {f['severity']} · harm {f['harm_category']}"
            )
            print(f"  claim: {f['claim']}")
            print(f"  rationale: {f['rationale']}")
            for e in f["evidence"]:
                where = f"T{','.join(map(str, e['turns']))}" if e["turns"] else e["source"]
                print(f"  evidence [{where}]: {e['text']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encounters", default=",".join(DEFAULT_ENCOUNTERS))
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=HERE / "flags")
    parser.add_argument("--render", metavar="ENCOUNTER")
    parser.add_argument("--round", type=int, help="with --render: only the flags of this round")
    args = parser.parse_args()
    if args.render:
        render(args.data, args.out, args.render, args.round)
        return
    encounters = [e.strip() for e in args.encounters.split(",") if e.strip()]
    flags = asyncio.run(collect(load_notes(args.data, encounters)))
    args.out.mkdir(parents=True, exist_ok=True)
    for encounter, rows in sorted(flags.items()):
        with (args.out / f"{encounter}.jsonl").open("w") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)
        print(f"{encounter}: {len(rows)} flags")
    print(f"{sum(map(len, flags.values()))} flags in {len(flags)} encounters")


if __name__ == "__main__":
    main()
