"""Are the harm categories right? Scores the judges' harm category of a flagged sentence against
reviewers' category labels of the sentences they found wrong (issue 37, item 5; SPEC §9;
labels by ``harm_labels/GUIDE.md``).

    .venv/bin/python bench/bench_agreement.py --part open --save runs/agree-open.jsonl
    .venv/bin/python bench/bench_harm.py runs/agree-open.jsonl [--labels harm_labels/labels]

The first command judges the labelled notes and saves every unit with the flags over it; this
one reads that file and the category labels (``{key, category, why}``, key
``ENCOUNTER/system/uN``) and prints, per judge and with Wilson 95% intervals:

- **on the judge's flags** — of the labelled wrong sentences the judge flags, the share whose
  flag shows the labelled category: the flag over the labelled span (the flagged claim holding
  most of the span's words), as a user reads it in the report;
- **today's rules on them** — the same flags re-rated by the rules as they are now (the
  category depends only on the claim, the rationale and the section, so a rule change is
  measured without judging again);
- **the rule on the span** — :func:`clinjudge.judges.harm.flagged_category` of the labelled
  span (quoted as a flag quotes words), in the sentence's section: the category rules alone,
  whatever the judge flags;
- the confusions (labelled → shown) that cost most, and the second labelling's agreement
  (``harm_labels/second/``, Cohen's κ) — the ceiling a rule can be held to.

Scoring the sealed encounters: ``bench_agreement.py --part sealed --save F`` and
``--labels harm_labels/labels-sealed``; print the totals only (``--quiet``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sklearn.metrics import cohen_kappa_score  # noqa: E402

from clinjudge.judges.harm import flagged_category  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402
from clinjudge.metrics.intervals import wilson_interval  # noqa: E402
from clinjudge.text.normalize import content_tokens  # noqa: E402

HERE = Path(__file__).resolve().parent
LABELS = HERE / "harm_labels"


def read_labels(folder: Path) -> dict[str, str]:
    """``{key: category}`` of every label file in ``folder``."""
    out: dict[str, str] = {}
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.open():
            row = json.loads(line)
            out[row["key"]] = row["category"]
    return out


def flag_over_span(row: dict) -> dict | None:
    """The flag a user reads for the labelled span: the flagged claim holding most of the
    span's words (the first flag when no span is marked)."""
    flags = [c for c in row["claims"] if c["tier"] >= 4]
    if not flags:
        return None
    span = set(content_tokens(row["span"] or ""))
    return max(flags, key=lambda c: len(span & set(content_tokens(c["text"]))))


def rerated(flag: dict, row: dict, kb: KnowledgeBase) -> str:
    """The category today's rules give the saved flag (its claim, rationale and section)."""
    return flagged_category(flag["text"], flag["rationale"], row["section"] or "", kb)


def rule_category(row: dict, kb: KnowledgeBase) -> str:
    """The category rules on the clause holding the labelled span."""
    quote = f"'{row['span']}'" if row["span"] else ""
    return flagged_category(row["text"], quote, row["section"] or "", kb)


def share(hits: int, n: int) -> str:
    if not n:
        return "n/a (0)"
    lo, hi = wilson_interval(hits, n)
    return f"{hits / n:.1%} ({hits} of {n}) [{lo:.1%}, {hi:.1%}]"


def score(name: str, rows: list[dict], labels: dict[str, str], kb, quiet: bool) -> dict:
    """Print and return one judge's category agreement."""
    shown, rule, now = [], [], []
    for row in rows:
        key = f"{row['note_id']}/u{row['unit']}"
        if key not in labels:
            continue
        rule.append((labels[key], rule_category(row, kb), row))
        flag = flag_over_span(row)
        if flag is not None:
            shown.append((labels[key], flag["harm_category"], row))
            now.append((labels[key], rerated(flag, row, kb), row))
    on_flags = sum(a == b for a, b, _ in shown)
    on_spans = sum(a == b for a, b, _ in rule)
    rerated_right = sum(a == b for a, b, _ in now)
    print(f"\n== {name}: {len(rule)} labelled wrong sentences, {len(shown)} of them flagged ==")
    print(f"  on the judge's flags   {share(on_flags, len(shown))}  (target ≥ 90%)")
    print(f"  today's rules on them  {share(rerated_right, len(now))}  (the saved flags re-rated)")
    print(f"  the rule on the span   {share(on_spans, len(rule))}")
    if not quiet:
        confusions = Counter((a, b) for a, b, _ in shown if a != b)
        print("  confusions on the flags (labelled → shown):")
        for (a, b), n in confusions.most_common(12):
            example = next(r for x, y, r in shown if (x, y) == (a, b))
            print(f"    {n:3}  {a} → {b}   e.g. [{example['note_id']}] {example['span']!r}")
    return {
        "flagged": len(shown),
        "right_on_flags": on_flags,
        "labelled": len(rule),
        "right_on_spans": on_spans,
        "right_rerated": rerated_right,
    }


def second_agreement(first: dict[str, str], folder: Path) -> None:
    second = read_labels(folder) if folder.is_dir() else {}
    keys = sorted(set(first) & set(second))
    if not keys:
        return
    a, b = [first[k] for k in keys], [second[k] for k in keys]
    same = sum(x == y for x, y in zip(a, b, strict=True))
    print(
        f"\nsecond labelling: {len(keys)} items labelled twice, agreement {share(same, len(keys))}"
        f", κ {cohen_kappa_score(a, b):.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("saved", type=Path, help="a bench_agreement.py --save file")
    ap.add_argument("--labels", type=Path, default=LABELS / "labels")
    ap.add_argument("--quiet", action="store_true", help="totals only (for the sealed part)")
    ap.add_argument("--json", type=Path, default=None, help="write the numbers as JSON")
    args = ap.parse_args()
    if not args.saved.is_file() or not args.labels.is_dir():
        print(f"error: {args.saved} or {args.labels} not found", file=sys.stderr)
        raise SystemExit(2)
    labels = read_labels(args.labels)
    rows: dict[str, list[dict]] = {}
    for line in args.saved.open():
        row = json.loads(line)
        rows.setdefault(row["judge"], []).append(row)
    kb = KnowledgeBase.default()
    print(f"{len(labels)} category labels from {args.labels}")
    out = {name: score(name, judged, labels, kb, args.quiet) for name, judged in rows.items()}
    if not args.quiet:
        second_agreement(labels, LABELS / "second")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
