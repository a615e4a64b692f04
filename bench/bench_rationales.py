"""Are the offline judge's reasons right? Scores flags against reviewer labels of their
rationale, evidence, tier and harm category (issue 24, item 1; labels by
``rationale_labels/GUIDE.md``).

    .venv/bin/python bench/bench_rationales.py [--rejudge] [--data DIR_OF_CLAIM_LABELS]

Without ``--rejudge`` it scores the labelled sample (``rationale_labels/flags/``: the flags the
judge raised when the labels were made). With ``--rejudge`` it judges the same notes again and
scores the flags it raises now: a flag whose key (note, claim, tier, rationale) is unchanged
keeps its label; a flag that is new or whose rationale changed is *unlabelled* and counted apart
(label it by the guide to score it); a labelled flag the judge no longer raises is listed as
dropped, with its label (a dropped false flag is a gain, a dropped real error a loss).

Printed, with Wilson 95% intervals:
- flags that are real errors (labeller's ``claim_label`` ≠ supported);
- rationales right on the real errors (target ≥ 90%), and the kinds of wrong ones;
- evidence citing another entity's value (target: none) and evidence that is the very sentence
  supporting the claim (target: none);
- tier-5 precision: tier-5 flags where the visit says otherwise (target ≥ 0.7);
- harm categories right;
- agreement of the second labelling (``rationale_labels/second/``) on each field.
Exit 2 on a label file that is malformed or does not cover its encounter's flags.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path

from sklearn.metrics import cohen_kappa_score

HERE = Path(__file__).resolve().parent
LABELS = HERE / "rationale_labels"
sys.path.insert(0, str(LABELS))

from sample_flags import DEFAULT_DATA, collect, load_notes  # noqa: E402

from clinjudge.metrics.intervals import wilson_interval  # noqa: E402

ALLOWED = {
    "claim_label": {"supported", "unsupported", "contradicted"},
    "rationale": {"right", "wrong"},
    "rationale_error": {
        None,
        "said_in_visit",
        "other_entity",
        "negation",
        "time",
        "wrong_part",
        "not_an_error",
        "other",
    },  # fmt: skip
    "evidence": {"right", "other_entity", "supports_claim", "irrelevant", "none"},
    "tier5": {True, False, None},
    "harm_category": {"right", "wrong", None},
}


class LabelError(Exception):
    """A label file that does not fit its flags: one line, exit 2."""


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open() if line.strip()]


def read_labels(folder: Path, flags: dict[str, list[dict]], *, whole: bool) -> dict[str, dict]:
    """``{key: label}`` of every label file in ``folder``, each checked against its flags: no
    unknown key, a key labelled as many times as it is flagged (a sentence repeated in two
    sections is two flags with one key), allowed values only; ``whole`` also asks every flag of
    the first round (the sample as drawn) to be labelled."""
    out: dict[str, dict] = {}
    for path in sorted(folder.glob("*.jsonl")):
        keys = Counter(f["key"] for f in flags.get(path.stem, []))
        first = {f["key"] for f in flags.get(path.stem, []) if f.get("round", 1) == 1}
        rows = read_jsonl(path)
        seen = Counter(r.get("key") for r in rows)
        unknown = set(seen) - set(keys)
        miscounted = [k for k in seen if k in keys and seen[k] != keys[k]]
        missing = first - set(seen) if whole else set()
        if unknown or miscounted or missing:
            raise LabelError(
                f"{path}: {len(unknown)} unknown keys, {len(miscounted)} labelled a wrong "
                f"number of times, {len(missing)} first-round flags unlabelled"
            )
        for r in rows:
            for field, allowed in ALLOWED.items():
                if r.get(field) not in allowed:
                    raise LabelError(f"{path}: {r['key']}: {field} = {r.get(field)!r}")
            out[r["key"]] = r
    return out


def add_unlabelled(flags: list[dict], sampled: dict[str, list[dict]]) -> int:
    """Append the flags raised now that no sample row holds to ``flags/ENCOUNTER.jsonl`` as
    round 2, for labelling (``sample_flags.py --render ENCOUNTER --round 2``)."""
    known = {f["key"] for fs in sampled.values() for f in fs}
    added = 0
    for f in flags:
        if f["key"] in known:
            continue
        known.add(f["key"])
        encounter = f["note_id"].split("/")[0]
        with (LABELS / "flags" / f"{encounter}.jsonl").open("a") as fh:
            fh.write(json.dumps({**f, "round": 2}) + "\n")
        added += 1
    return added


def share(k: int, n: int) -> str:
    if not n:
        return "n/a (n = 0)"
    lo, hi = wilson_interval(k, n)
    return f"{k / n:.1%} ({k} of {n}) [{lo:.1%}, {hi:.1%}]"


def current_labels(flags: list[dict], labels: dict[str, dict], sampled: dict[str, dict]) -> dict:
    """Labels that still describe the flags as raised now: a flag keeps its label when its key
    (note, claim, tier, rationale) is unchanged, but its ``evidence`` label only when the
    evidence shown is the same, and its ``harm_category`` label only when the category is."""
    out = {}
    for f in flags:
        lab, was = labels.get(f["key"]), sampled.get(f["key"])
        if lab is None or was is None:
            continue
        lab = dict(lab)
        if [e["text"] for e in f["evidence"]] != [e["text"] for e in was["evidence"]]:
            lab["evidence"] = "changed"
        if f["harm_category"] != was["harm_category"]:
            lab["harm_category"] = "changed"
        out[f["key"]] = lab
    return out


def score(flags: list[dict], labels: dict[str, dict]) -> dict:
    labelled = [(f, labels[f["key"]]) for f in flags if f["key"] in labels]
    real = [(f, lab) for f, lab in labelled if lab["claim_label"] != "supported"]
    right = [(f, lab) for f, lab in real if lab["rationale"] == "right"]
    tier5 = [(f, lab) for f, lab in labelled if f["tier"] == 5]
    harm = [(f, lab) for f, lab in labelled if lab["harm_category"] in ("right", "wrong")]
    relabel = sum(lab["harm_category"] == "changed" for _, lab in labelled)
    evidence = Counter(lab["evidence"] for _, lab in labelled)
    n_evidence = len(labelled) - evidence["changed"]
    errors = Counter(lab["rationale_error"] for _, lab in real if lab["rationale"] == "wrong")
    unlabelled = len(flags) - len(labelled)
    print(f"  flags {len(flags)}; labelled {len(labelled)}; unlabelled {unlabelled}")
    print(f"  real errors among the labelled flags  {share(len(real), len(labelled))}")
    print(f"  rationale right on real errors        {share(len(right), len(real))}  (≥ 90%)")
    for kind, n in errors.most_common():
        print(f"      wrong: {kind:14} {n}")
    print(
        f"  evidence citing another entity        {share(evidence['other_entity'], n_evidence)}"
        "  (target 0)"
    )
    print(
        f"  evidence = the supporting sentence    "
        f"{share(evidence['supports_claim'], n_evidence)}  (target 0)"
    )
    print(
        f"  evidence, all kinds: {dict(evidence.most_common())} ('changed': shown otherwise "
        "since labelled, not scored)"
    )
    hits = sum(1 for _, lab in tier5 if lab["tier5"])
    print(f"  tier-5 precision (visit says otherwise) {share(hits, len(tier5))}  (≥ 0.7)")
    harm_right = sum(1 for _, lab in harm if lab["harm_category"] == "right")
    print(
        f"  harm category right                   {share(harm_right, len(harm))}"
        f"  ({relabel} changed since labelled: not scored)"
    )
    by_system = Counter(f["system"] for f, _ in real)
    print(f"  real errors by system: {dict(by_system)}")
    return {
        "flags": len(flags),
        "labelled": len(labelled),
        "real": len(real),
        "rationale_right_on_real": len(right),
        "evidence": dict(evidence),
        "tier5": len(tier5),
        "tier5_right": hits,
        "harm": len(harm),
        "harm_right": harm_right,
    }


def second_agreement(first: dict[str, dict], second: dict[str, dict]) -> None:
    keys = sorted(set(first) & set(second))
    if not keys:
        return
    print(f"\nsecond labelling: {len(keys)} flags labelled twice")
    for field in ("claim_label", "rationale", "evidence", "tier5", "harm_category"):
        pairs = [(first[k][field], second[k][field]) for k in keys]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
        if not pairs:
            continue
        a, b = zip(*pairs, strict=True)
        agree = sum(x == y for x, y in pairs) / len(pairs)
        kappa = cohen_kappa_score([str(x) for x in a], [str(y) for y in b])
        print(f"  {field:14} agreement {agree:.1%} over {len(pairs)}, κ {kappa:.2f}")
    binary = [
        (first[k]["claim_label"] != "supported", second[k]["claim_label"] != "supported")
        for k in keys
    ]
    a, b = zip(*binary, strict=True)
    print(
        f"  real error yes/no agreement {sum(x == y for x, y in binary) / len(binary):.1%}, "
        f"κ {cohen_kappa_score(a, b):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rejudge", action="store_true", help="judge the notes again")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--add-unlabelled",
        action="store_true",
        help="with --rejudge: append the flags no label covers to flags/ as round 2",
    )
    args = parser.parse_args()
    sampled = {p.stem: read_jsonl(p) for p in sorted((LABELS / "flags").glob("*.jsonl"))}
    try:
        labels = read_labels(LABELS / "labels", sampled, whole=True)
        second = read_labels(LABELS / "second", sampled, whole=False)
    except LabelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    covered = sorted({f["note_id"].split("/")[0] for fs in sampled.values() for f in fs
                      if f["key"] in labels})  # fmt: skip
    print(f"{len(labels)} labelled flags of {len(covered)} encounters: {', '.join(covered)}")
    print("\n== the labelled sample (the judge as it was when labelled) ==")
    score([f for fs in sampled.values() for f in fs if f.get("round", 1) == 1], labels)
    if args.rejudge:
        notes = load_notes(args.data, covered)
        now = asyncio.run(collect(notes))
        flags = [f for e in covered for f in now.get(e, [])]
        print("\n== the judge now, on the same notes ==")
        was = {f["key"]: f for fs in sampled.values() for f in fs}
        score(flags, current_labels(flags, labels, was))
        keys = {f["key"] for f in flags}
        dropped = [
            f for e in covered for f in sampled[e] if f["key"] not in keys and f["key"] in labels
        ]
        kinds = Counter(
            "real error" if labels[f["key"]]["claim_label"] != "supported" else "false flag"
            for f in dropped
        )
        print(f"  labelled flags no longer raised (or reworded): {dict(kinds)}")
        for f in dropped:
            lab = labels[f["key"]]
            print(
                f"      - {f['note_id']} [{lab['claim_label']}] tier {f['tier']}: "
                f"{f['claim'][:70]!r} — was: {f['rationale'][:70]}"
            )
        if args.add_unlabelled:
            print(f"  {add_unlabelled(flags, sampled)} flags added to flags/ as round 2")
        print("  unlabelled flags (label them by the guide to score them):")
        for f in flags:
            if f["key"] not in labels:
                print(
                    f"      - {f['note_id']} {f['key']} tier {f['tier']}: {f['claim'][:70]!r}"
                    f" — {f['rationale'][:80]}"
                )
    second_agreement(labels, second)


if __name__ == "__main__":
    main()
