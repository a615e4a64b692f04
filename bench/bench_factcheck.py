"""Fact-checker on MedHallu (SPEC §3, §4): ground-truth vs hallucinated answers, offline.

For each row of ``medhallu_pqa_labeled.jsonl`` the row's ``Knowledge`` passages are the corpus;
the ground-truth and the hallucinated answer are both fact-checked. Printed: paired AUROC of
score = 1 − unsupported rate (ties 0.5) with win/tie/loss, overall and per difficulty, with
bootstrap 95% intervals (pairs where either answer has no rated claim are dropped and counted);
the false-positive rate on ground-truth answers (answers with ≥ 1 not-supported claim, and
claim-level); flag rate on hallucinated answers; checkable rates; seconds per answer. When the
answers carry a continuous ``support_score`` (offline rater, :mod:`clinjudge.factcheck.support`),
its paired AUROC is printed too (the headline stays the unsupported rate).

Splits (``--split``): ``dev`` = rows with an even index (0, 2, …) of the readable rows, the half
the offline rules were tuned on; ``heldout`` = odd index, never looked at while tuning; ``all``
reports dev, held-out and all rows. ``--save FILE`` writes one JSON line per answer (row index,
difficulty, role, score, support score, counts) for later analysis.

    .venv/bin/python bench/bench_factcheck.py [--split dev|heldout|all] [--limit N] [--data DIR]

``--evidence pooled`` rates each claim against every passage retrieved for its answer
(``--option factcheck.evidence=pooled``, :mod:`clinjudge.factcheck.evidence`) instead of its
own passages (``per_claim``, the default).

``--count-calls`` instead runs the LLM backend against a local counting OpenAI-compatible stub
(tests/openai_stub.py; it answers the schema with fixed JSON) to measure model calls per relevant
claim — a count, not a quality number.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.metrics.auroc import paired_auroc
from clinjudge.metrics.intervals import wilson_interval

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "medhallu"


def read_rows(path: Path) -> tuple[list[dict], int]:
    rows, bad = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line, strict=False))
        except json.JSONDecodeError:
            bad += 1
    return rows, bad


def items_of(index: int, row: dict) -> tuple[Item, Item]:
    meta = {"question": row["Question"], "evidence": row["Knowledge"]}
    return (
        Item(id=f"{index}:truth", transcript="", note=row["Ground Truth"], meta=meta),
        Item(id=f"{index}:halluc", transcript="", note=row["Hallucinated Answer"], meta=meta),
    )


def fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def report_auroc(label: str, truth: list, halluc: list) -> None:
    res = paired_auroc(truth, halluc)
    dropped = sum(1 for t, h in zip(truth, halluc, strict=True) if t is None or h is None)
    ci = "n/a" if res.ci95 is None else f"[{res.ci95[0]:.3f}, {res.ci95[1]:.3f}]"
    print(
        f"{label:>8}: paired AUROC {fmt(res.auroc)} {ci}  win/tie/loss "
        f"{fmt(res.win)}/{fmt(res.tie)}/{fmt(res.loss)}  pairs {res.n} (dropped {dropped})"
    )


def split_indices(n: int, split: str) -> list[int]:
    """Row indices of ``split``: dev = even, heldout = odd, all = every row."""
    if split == "dev":
        return list(range(0, n, 2))
    if split == "heldout":
        return list(range(1, n, 2))
    return list(range(n))


def support_score(row: dict) -> float | None:
    """Mean ``support_score`` of the answer's rated claims that carry one (``None`` if none)."""
    values = [
        c["support_score"]
        for c in row["claims"]
        if c.get("verdict") is not None and c.get("support_score") is not None
    ]
    return statistics.fmean(values) if values else None


def count_calls(rows: list[dict], k: int) -> None:
    """LLM backend against the loopback stub of tests/openai_stub.py: calls per relevant claim."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from openai_stub import OpenAIStub

    from clinjudge.llm import LLMSettings
    from clinjudge.text.sentences import split_sentences

    def reply(request: dict) -> str:
        text = "\n".join(str(m.get("content", "")) for m in request["messages"])
        if "## Answer" in text:
            answer = text.rsplit("## Answer", 1)[1].strip()
            claims = [
                {"text": s.text, "quote": s.text, "label": "relevant"}
                for s in split_sentences(answer)
            ]
            return json.dumps({"claims": claims})
        if "You write search queries" in text:
            claim = text.rsplit("## Claim", 1)[1].split()
            return json.dumps({"queries": [" ".join(claim[:8])]})
        return json.dumps({"addressed": True, "verdict": "supported", "evidence_ids": []})

    with OpenAIStub(reply) as stub:
        settings = LLMSettings(model="counting-stub", base_url=stub.base_url, api_key="x")
        evaluator = build_evaluator(
            "factcheck", BuildOptions(backend="llm", settings=settings, options={"k": k})
        )
        relevant = 0
        for i, row in enumerate(rows):
            for item in items_of(i, row):
                relevant += asyncio.run(evaluator.evaluate(item))["n_relevant"]
        calls = evaluator.usage()["calls"]
    print(
        f"LLM backend, counting stub: {calls} model calls for {relevant} relevant claims "
        f"({2 * len(rows)} answers) = {calls / max(relevant, 1):.2f} calls per relevant claim"
    )


def report(title: str, evaluator, truth_rows: list, halluc_rows: list, levels: list) -> None:
    """Paired AUROCs (overall, per difficulty), false-positive and flag rates of one split."""
    truth = [evaluator.score(r) for r in truth_rows]
    halluc = [evaluator.score(r) for r in halluc_rows]
    print(f"== {title}: {len(truth_rows)} rows ==")
    report_auroc("overall", truth, halluc)
    for level in sorted(set(levels)):
        keep = [i for i, lv in enumerate(levels) if lv == level]
        report_auroc(level, [truth[i] for i in keep], [halluc[i] for i in keep])
    truth_s = [support_score(r) for r in truth_rows]
    if any(x is not None for x in truth_s):
        report_auroc("support", truth_s, [support_score(r) for r in halluc_rows])
    for name, group in (("ground truth", truth_rows), ("hallucinated", halluc_rows)):
        s = evaluator.summarize(group)
        flagged = sum(1 for r in group if (r["n_not_supported"] or 0) > 0)
        rated = s["n_answers_rated"]
        lo, hi = wilson_interval(flagged, rated)
        print(
            f"{name}: answers flagged (≥1 not-supported claim) {flagged}/{rated} = "
            f"{fmt(flagged / rated if rated else None)} [{lo:.3f}, {hi:.3f}] "
            f"(excluded: {len(group) - rated} answers with no rated claim); "
            f"claim unsupported rate {fmt(s['unsupported_rate'])} "
            f"[{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}] of {s['n_rated']} rated claims; "
            f"checkable {fmt(s['checkable_rate'])}; claims {s['n_claims']}, relevant "
            f"{s['n_relevant']}, excluded {s['n_excluded']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="dev")
    parser.add_argument("--limit", type=int, default=None, help="first N rows of the split")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--save", type=Path, default=None, help="per-answer JSONL output")
    parser.add_argument("--evidence", choices=("per_claim", "pooled"), default="per_claim")
    parser.add_argument("--count-calls", action="store_true")
    args = parser.parse_args()
    rows, bad = read_rows(args.data / "medhallu_pqa_labeled.jsonl")
    indices = split_indices(len(rows), args.split)[: args.limit]
    print(
        f"{len(indices)} rows of split {args.split} ({bad} unreadable lines skipped)",
        file=sys.stderr,
    )
    if args.count_calls:
        count_calls([rows[i] for i in indices], args.k)
        return
    options = {"k": args.k, "evidence": args.evidence}
    evaluator = build_evaluator("factcheck", BuildOptions(backend="offline", options=options))
    asyncio.run(evaluator.evaluate(items_of(0, rows[0])[0]))  # warm-up: models and knowledge
    truth_rows, halluc_rows, seconds, levels = [], [], [], []
    save = args.save.open("w", encoding="utf-8") if args.save else None
    for n, i in enumerate(indices, 1):
        pair = []
        for role, item in zip(("truth", "halluc"), items_of(i, rows[i]), strict=True):
            started = time.perf_counter()
            out = asyncio.run(evaluator.evaluate(item))
            seconds.append(time.perf_counter() - started)
            pair.append(out)
            if save:
                record = {"index": i, "role": role, "level": rows[i].get("Difficulty Level")}
                record |= {"score": evaluator.score(out), "support": support_score(out)}
                save.write(json.dumps(record | {"result": out}) + "\n")
        truth_rows.append(pair[0])
        halluc_rows.append(pair[1])
        levels.append(rows[i].get("Difficulty Level", "?"))
        if n % 50 == 0:
            print(f"  {n}/{len(indices)}", file=sys.stderr)
    if save:
        save.close()

    print(f"MedHallu, offline backend, k={args.k}, evidence {args.evidence}, split {args.split}")
    groups = {"dev": 0, "heldout": 1} if args.split == "all" else {}
    for name, parity in groups.items():
        keep = [j for j, i in enumerate(indices) if i % 2 == parity]
        report(
            name,
            evaluator,
            [truth_rows[j] for j in keep],
            [halluc_rows[j] for j in keep],
            [levels[j] for j in keep],
        )
    report(args.split, evaluator, truth_rows, halluc_rows, levels)
    print(
        f"seconds per answer: median {statistics.median(seconds):.2f}, "
        f"mean {statistics.fmean(seconds):.2f} (after warm-up)"
    )


if __name__ == "__main__":
    main()
