"""Does a local model, reading the claims the offline rules cannot settle, make the offline
judge agree better with reviewers? (issue 23, item 4; SPEC §9)

1. The offline inference-aware verifier runs over every labelled ACI-Bench test3 note (rules
   only) and its combiner is scored by leave-one-encounter-out CV (``train_combiner.py``): each
   claim no hard rule decided (a *soft* claim) gets its out-of-fold probability ``p`` and fold
   threshold.
2. The model reads the soft claims of the model encounters (default: the 8 of the shared
   labels, which ``bench_agreement.py --backend llm --protocol claim`` already asked: its
   replies come from the response cache) with the per-claim protocol: the exchanges around the
   claim's best-matching sentences (each hit's turn, the question before it, the answer after
   it) and one label — stated, inferred, unsupported, contradicted — read as a score
   m = 0, 1/3, 2/3, 1.
3. Hybrid, fitted and judged by leave-one-encounter-out CV over the model encounters: on the
   soft claims of the training encounters whose p lies in the uncertain band (|p − t| ≤ band),
   a logistic regression on [logit p, m] gives the hybrid probability, its threshold the
   lowest reaching the combiner's precision target on the training band; held-out band claims
   are flagged by it, every other claim as the combiner flags it.
4. Printed: claim-level AUROC over the soft claims (combiner p; the model's m alone; hybrid),
   unit-level P / R / F1 / κ / major recall (rules + combiner vs rules + hybrid), model seconds
   per note, parse failures, and the decision rule: ship a ``hybrid`` backend only if it lifts
   AUROC by ≥ 0.03 and κ by ≥ 0.03 at ≤ 60 s per note.

    .venv/bin/python bench/bench_hybrid.py [--band 1.0] [--encounters D2N170,...]

Needs the model endpoint of the agreement run (``CLINJUDGE_MODEL``, ``OPENAI_BASE_URL``,
``CLINJUDGE_CACHE_DIR``); a claim whose reply cannot be read keeps the combiner's call and is
counted.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
from bench_agreement import SHARED, InputError, default_labels  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from train_combiner import (  # noqa: E402
    PAIR_OOF,
    TARGET_PRECISION,
    add_pair_scores,
    collect_labelled,
    cross_validate,
    unit_agreement,
)

from clinjudge.grounding.note_input import NoteInput  # noqa: E402
from clinjudge.judges.factory import build_judge  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402
from clinjudge.llm import LLMSettings, ResponseCache  # noqa: E402
from clinjudge.types import Claim, Verdict  # noqa: E402

MODEL_ENCOUNTERS = (
    "D2N170", "D2N174", "D2N176", "D2N179", "D2N182", "D2N187", "D2N188", "D2N197",
)  # fmt: skip
SCORE_OF_TIER = {1: 0.0, 2: 0.0, 3: 1 / 3, 4: 2 / 3, 5: 1.0}


async def model_scores(rows: list[dict], notes: dict[str, dict]) -> tuple[dict, list[float]]:
    """The model's score of every soft row of the model encounters (index → m, or None for a
    reply that could not be read), and the seconds spent per note."""
    kb = KnowledgeBase.default()
    setup = build_judge(
        "inference-aware", "llm", settings=LLMSettings(), knowledge=kb, cache=ResponseCache(),
        protocol="claim",
    )  # fmt: skip
    verifier = setup.verifier
    scores: dict[int, float | None] = {}
    seconds: list[float] = []
    by_note: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        if r["model"] and not r["hard"]:
            by_note[r["note_id"]].append(i)
    for n, (note_id, indexes) in enumerate(by_note.items(), 1):
        started = time.perf_counter()
        note = notes[note_id]
        material = NoteInput(note["dialogue"], note["note"])
        claims = [
            Claim(
                id=f"c{i}",
                text=rows[i]["text"],
                section=rows[i]["section"],
                start=rows[i]["start"],
                end=rows[i]["end"],
            )  # fmt: skip
            for i in indexes
        ]
        for i, outcome in zip(indexes, await verifier.verify(claims, material), strict=True):
            scores[i] = SCORE_OF_TIER[outcome.tier] if isinstance(outcome, Verdict) else None
        seconds.append(time.perf_counter() - started)
        print(f"\rmodel: {n}/{len(by_note)} notes", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    u = setup.caller.usage
    print(
        f"model {setup.caller.model_id}: {u.calls} calls, {u.cache_hits} from the cache, "
        f"{u.parse_failures} parse failures, {u.errors} errors"
    )
    return scores, seconds


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def lowest_threshold(p: np.ndarray, y: np.ndarray, target: float) -> float:
    for t in np.linspace(0.05, 0.95, 91):
        flag = p >= t
        if flag.sum() and (flag & y).sum() / flag.sum() >= target:
            return float(t)
    return 0.95


def hybrid_flags(rows: list[dict], band: float) -> tuple[dict[int, bool], dict[int, float]]:
    """Leave-one-encounter-out over the model encounters: flags of every row (the combiner's
    where the hybrid does not apply) and the hybrid probability of the band rows."""
    flags = {i: r["flag"] for i, r in enumerate(rows)}
    probability: dict[int, float] = {}

    def in_band(r: dict) -> bool:
        return (
            r["model"] and not r["hard"] and r["label"] is not None
            and r.get("m") is not None and abs(r["p"] - r["threshold"]) <= band
        )  # fmt: skip

    for held in sorted({r["encounter"] for r in rows if r["model"]}):
        train = [r for r in rows if in_band(r) and r["encounter"] != held]
        if len({r["label"] for r in train}) < 2:
            continue
        x = np.array([[logit(r["p"]), r["m"]] for r in train])
        y = np.array([r["label"] for r in train], dtype=bool)
        model = LogisticRegression(solver="liblinear", class_weight="balanced").fit(x, y)
        t = lowest_threshold(model.predict_proba(x)[:, 1], y, TARGET_PRECISION)
        for i, r in enumerate(rows):
            if r["encounter"] == held and in_band(r):
                probability[i] = float(model.predict_proba([[logit(r["p"]), r["m"]]])[0, 1])
                flags[i] = probability[i] >= t
    return flags, probability


def auroc(rows: list[dict], score) -> tuple[float | None, int]:
    pairs = [(r["label"], s) for r in rows if (s := score(r)) is not None]
    labels = {y for y, _ in pairs}
    if len(labels) < 2:
        return None, len(pairs)
    return float(roc_auc_score([y for y, _ in pairs], [s for _, s in pairs])), len(pairs)


def show(name: str, s: dict) -> None:
    print(
        f"  {name:24} P {s['precision']:.2f}  R {s['recall']:.2f}  F1 {s['f1']:.2f}  "
        f"κ {s['kappa']:.2f}  major {s['major_recall']:.2f}  ρ {s['note_spearman']:.2f}"
    )


async def main_async(args) -> None:
    from bench_agreement import load_labelled, part_encounters

    rows, units = await collect_labelled(args.data, args.labels)
    notes, _ = load_labelled(args.data, args.labels, part_encounters("open", None))
    add_pair_scores(rows, args.pair_oof)
    combiner = cross_validate(rows, 0.5)
    for i, r in enumerate(rows):
        r["flag"] = combiner[i] if i in combiner else r["rule_flag"]
        r["model"] = r["encounter"] in args.encounters
    scores, seconds = await model_scores(rows, notes)
    for i, m in scores.items():
        rows[i]["m"] = m
    model_rows = [r for r in rows if r["model"]]
    soft = [r for r in model_rows if not r["hard"] and r["label"] is not None]
    unread = sum(1 for r in soft if r.get("m") is None)
    print(
        f"{len(model_rows)} claims of {len(args.encounters)} encounters, {len(soft)} soft and "
        f"labelled ({sum(r['label'] for r in soft)} on wrong sentences); the model could not "
        f"be read on {unread}; {np.median(seconds):.1f} s per note (median; cached replies "
        "are free)"
    )
    flags, hybrid = hybrid_flags(rows, args.band)
    band = [r for i, r in enumerate(rows) if i in hybrid]
    print(f"uncertain band |p − t| ≤ {args.band}: {len(band)} soft claims")
    index = {id(r): i for i, r in enumerate(rows)}
    for name, score in (
        ("combiner p (out of fold)", lambda r: r["p"]),
        ("model alone (m)", lambda r: r.get("m")),
        ("hybrid (band) / combiner", lambda r: hybrid.get(index[id(r)], r["p"])),
    ):
        value, n = auroc(soft, score)
        shown = "n/a" if value is None else f"{value:.3f}"
        print(f"  claim AUROC {name:26} {shown} over {n} soft claims")
    model_units = {k: v for k, v in units.items() if k.split("/")[0] in args.encounters}
    sub = [r for r in rows if r["model"]]
    pos = {id(r): i for i, r in enumerate(rows)}
    before = unit_agreement(sub, {j: r["flag"] for j, r in enumerate(sub)}, model_units)
    after = unit_agreement(sub, {j: flags[pos[id(r)]] for j, r in enumerate(sub)}, model_units)
    show("rules + combiner", before)
    show("rules + hybrid", after)
    base, _ = auroc(soft, lambda r: r["p"])
    lifted, _ = auroc(soft, lambda r: hybrid.get(index[id(r)], r["p"]))
    per_note = len(band) / max(1, len({r["note_id"] for r in model_rows}))
    cost = per_note * args.seconds_per_claim
    gain_auroc = (lifted or 0) - (base or 0)
    gain_kappa = after["kappa"] - before["kappa"]
    ship = gain_auroc >= 0.03 and gain_kappa >= 0.03 and cost <= 60
    print(
        f"decision: ΔAUROC {gain_auroc:+.3f} (≥ +0.03), Δκ {gain_kappa:+.3f} (≥ +0.03), "
        f"{per_note:.0f} band claims a note × {args.seconds_per_claim:g} s = {cost:.0f} s a note "
        f"(≤ 60 s) → {'ship a hybrid backend' if ship else 'not shipped'}"
    )
    per_label = defaultdict(lambda: [0, 0])
    for r in soft:
        if r.get("m") is not None:
            per_label[r["m"]][0] += 1
            per_label[r["m"]][1] += r["label"]
    print("  the model's labels on soft claims: share on wrong sentences")
    for m, (n, wrong) in sorted(per_label.items()):
        print(f"    m = {m:.2f}: {n:4} claims, {wrong / n:.0%} wrong")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED)
    parser.add_argument("--labels", type=Path, nargs="+", default=None)
    parser.add_argument("--pair-oof", type=Path, default=PAIR_OOF)
    parser.add_argument(
        "--encounters",
        type=lambda s: set(s.split(",")),
        default=set(MODEL_ENCOUNTERS),
        help="encounters the model reads (default: the 8 of the shared labels)",
    )
    parser.add_argument(
        "--seconds-per-claim",
        type=float,
        default=16.0,
        help="the model's time per claim read alone (measured: 16 s with the 1.5B model here)",
    )
    parser.add_argument(
        "--band",
        type=float,
        default=1.0,
        help="the uncertain band: soft claims with |p − threshold| ≤ band (1.0: every one)",
    )
    try:
        args = parser.parse_args()
        args.labels = args.labels or default_labels(args.data)
        asyncio.run(main_async(args))
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
