"""Fit the offline verifier's claim combiner on the sentence labels; score it by encounter CV.

The inference-aware offline verifier decides contradictions and the safety floor by rule; for
every other claim it measures features (`clinjudge.judges.claim_features`). This script

1. runs the verifier (without a combiner) over every labelled ACI-Bench test3 note and keeps, per
   claim, its features, the rules' verdict and the label of the sentence it overlaps
   (positive = unsupported or contradicted);
2. scores, with leave-one-encounter-out cross-validation (all notes of one visit held out
   together), a logistic regression over the features of the claims no hard rule decided —
   the threshold is chosen inside each training fold (best F1 there) — against the rules alone,
   with the SPEC §9 unit-level agreement (precision, recall, F1, κ, major recall, Spearman);
3. with ``--write``, fits the combiner on every labelled encounter and writes it to
   ``clinjudge/judges/data/combiner.json`` (weights, scaling, threshold, the encounters it was
   fitted on and the CV numbers).

    .venv/bin/python bench/train_combiner.py [--C 0.5] [--write] [--labels DIR ...]

Deterministic: liblinear solver, fixed data order.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
from bench_agreement import (  # noqa: E402
    SHARED,
    InputError,
    default_labels,
    load_labelled,
    part_encounters,
)
from sklearn.linear_model import LogisticRegression  # noqa: E402

from clinjudge.grounding.note_input import NoteInput  # noqa: E402
from clinjudge.judges.claim_features import FEATURES, feature_vector  # noqa: E402
from clinjudge.judges.combiner import COMBINER_PATH  # noqa: E402
from clinjudge.judges.offline import OfflineConfig, OfflineVerifier  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402
from clinjudge.metrics.unit_labels import (  # noqa: E402
    ClaimCall,
    UnitResult,
    agreement_summary,
    overlaps,
    unit_call,
)
from clinjudge.text.claims import split_claims  # noqa: E402


async def collect(notes: dict, units: dict, verifier: OfflineVerifier) -> list[dict]:
    """One row per claim: note, encounter, span, rules' verdict, features, label."""
    rows = []
    for i, (note_id, note) in enumerate(notes.items(), 1):
        material = NoteInput(note["dialogue"], note["note"])
        claims = split_claims(material.note)
        for a in await verifier.assess_claims(claims, material):
            c = a.claim
            touching = [u for u in units[note_id] if overlaps(u.start, u.end, c.start, c.end)]
            rows.append(
                {
                    "note_id": note_id,
                    "encounter": note["encounter"],
                    "start": c.start,
                    "end": c.end,
                    "rule_flag": not a.verdict.supported,
                    "hard": a.decided_by_rule,
                    "x": feature_vector(a.features or {}),
                    "label": any(u.positive for u in touching) if touching else None,
                    "major": any(u.major for u in touching),
                    "text": c.text,
                    "section": c.section,
                    "why": a.verdict.rationale,
                    "tier": a.verdict.tier,
                    "novel": a.novel.specifics() if a.novel else [],
                    "gold": "; ".join(u.reason for u in touching if u.positive),
                    "evidence": [e.text for e in a.verdict.evidence],
                }
            )
        if i % 10 == 0 or i == len(notes):
            print(f"features: {i}/{len(notes)} notes", file=sys.stderr, flush=True)
    return rows


async def collect_labelled(data: Path, labels: list[Path]) -> tuple[list[dict], dict]:
    """:func:`collect` over every labelled note of the open encounters (the sealed ones of
    ``claim_labels/sealed.json`` are never fitted on: their numbers are the ones that count),
    by the rules alone (no combiner, no pair scorer), and the labelled units per note."""
    notes, units = load_labelled(data, labels, part_encounters("open", None))
    if not notes:
        raise InputError(f"no labelled notes under {', '.join(map(str, labels))}")
    kb = KnowledgeBase.default()
    verifier = OfflineVerifier("inference-aware", kb, OfflineConfig(combiner=False))
    return await collect(notes, units, verifier), units


def fit(
    x: np.ndarray, y: np.ndarray, c: float
) -> tuple[LogisticRegression, np.ndarray, np.ndarray]:
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, solver="liblinear", class_weight="balanced", max_iter=1000)
    model.fit((x - mean) / scale, y)
    return model, mean, scale


OBJECTIVE = "precision"
#: For the ``precision`` objective: the lowest threshold whose training precision reaches this.
TARGET_PRECISION = 0.6


def best_threshold(
    p: np.ndarray, y: np.ndarray, hard_pos: int, hard_tp: int, pos: int, n_hard: int = 0
) -> float:
    """The threshold with the best claim-level :data:`OBJECTIVE` (Cohen's κ or F1), or the
    lowest one that reaches :data:`TARGET_PRECISION` (``precision``), counting the hard rules'
    flags too."""
    best, best_score = 0.5, -1.0
    n = len(y) + n_hard
    for t in np.linspace(0.2, 0.95, 76):
        flag = p >= t
        tp = hard_tp + int((flag & y).sum())
        fp = (hard_pos - hard_tp) + int((flag & ~y).sum())
        fn = pos - tp
        tn = n - tp - fp - fn
        if OBJECTIVE == "precision":
            if tp + fp and tp / (tp + fp) >= TARGET_PRECISION:
                return float(t)
            continue
        if OBJECTIVE == "f1":
            score = 2 * tp / (2 * tp + fp + fn) if pos else 0.0
        else:
            po = (tp + tn) / n
            pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
            score = (po - pe) / (1 - pe) if pe < 1 else 0.0
        if score > best_score:
            best, best_score = float(t), score
    return best


PAIR_OOF = Path(__file__).resolve().parent / "pair_oof.jsonl"
_PAIR = FEATURES.index("pair")


def add_pair_scores(rows: list[dict], path: Path) -> None:
    """Set every labelled claim's ``pair`` feature to its out-of-fold score from
    ``train_pair_model.py --cv`` (the scorer never saw the claim's encounter)."""
    if not path.is_file():
        raise InputError(f"{path} not found: run bench/train_pair_model.py --cv first")
    oof = {r["key"]: r["p"] for r in map(json.loads, path.open()) if r}
    missing = 0
    for r in rows:
        p = oof.get(f"{r['note_id']}:{r['start']}")
        missing += p is None and r["label"] is not None
        r["x"][_PAIR] = p if p is not None else 0.0
    if missing:
        raise InputError(
            f"{path}: {missing} labelled claims have no score (claims changed since it was "
            "written): re-run bench/train_pair_model.py --cv"
        )


def without_pair(x: list[float]) -> list[float]:
    return [0.0 if i == _PAIR else v for i, v in enumerate(x)]


def soft_rows(rows: list[dict]) -> list[dict]:
    return [r for r in rows if not r["hard"] and r["label"] is not None]


@dataclass
class Fitted:
    """A combiner fitted on some claim rows, with its threshold."""

    model: LogisticRegression
    mean: np.ndarray
    scale: np.ndarray
    threshold: float
    positives: int
    claims: int

    def probability(self, row: dict) -> float:
        z = (np.array(row["x"]) - self.mean) / self.scale
        return float(self.model.predict_proba(z[None, :])[0, 1])

    def flags(self, row: dict) -> bool:
        """The hard rule's call, or the combiner's."""
        return row["rule_flag"] if row["hard"] else self.probability(row) >= self.threshold


def fit_combiner(train: list[dict], c: float) -> Fitted:
    """Weights on the claims no hard rule decided; threshold on all of ``train`` (the hard
    rules' flags count towards the objective too)."""
    soft = soft_rows(train)
    x = np.array([r["x"] for r in soft])
    y = np.array([r["label"] for r in soft], dtype=bool)
    model, mean, scale = fit(x, y, c)
    hard = [r for r in train if r["hard"] and r["label"] is not None]
    threshold = best_threshold(
        model.predict_proba((x - mean) / scale)[:, 1],
        y,
        hard_pos=sum(r["rule_flag"] for r in hard),
        hard_tp=sum(r["rule_flag"] and r["label"] for r in hard),
        pos=int(y.sum()) + sum(r["label"] for r in hard),
        n_hard=len(hard),
    )
    return Fitted(model, mean, scale, threshold, int(y.sum()), len(soft))


#: Encounters whose errors were never read while the rules were written (development used
#: the other labelled encounters): ``--held-out`` scores them with a combiner fitted on the rest.
HELD_OUT = (
    "D2N184", "D2N185", "D2N186", "D2N189", "D2N190", "D2N191",  # labelled with the dev set
    "D2N192", "D2N193", "D2N194", "D2N195", "D2N196", "D2N198", "D2N199", "D2N200",  # later
    "D2N201", "D2N202", "D2N203", "D2N204", "D2N205", "D2N206", "D2N207",  # last
)  # fmt: skip


def held_out(rows: list[dict], units: dict, c: float) -> tuple[dict, dict]:
    """Rules alone and rules + a combiner fitted on the other encounters, on :data:`HELD_OUT`."""
    fitted = fit_combiner([r for r in rows if r["encounter"] not in HELD_OUT], c)
    sub_rows = [r for r in rows if r["encounter"] in HELD_OUT]
    sub_units = {k: v for k, v in units.items() if k.split("/")[0] in HELD_OUT}
    rules = unit_agreement(sub_rows, {j: r["rule_flag"] for j, r in enumerate(sub_rows)}, sub_units)
    combined = unit_agreement(
        sub_rows, {j: fitted.flags(r) for j, r in enumerate(sub_rows)}, sub_units
    )
    return rules, combined


def cross_validate(rows: list[dict], c: float) -> dict[int, bool]:
    """Leave-one-encounter-out flags of every claim (index into ``rows``); each row gets its
    held-out probability as ``p``."""
    flags: dict[int, bool] = {}
    for held in sorted({r["encounter"] for r in rows}):
        fitted = fit_combiner([r for r in rows if r["encounter"] != held], c)
        for i, r in enumerate(rows):
            if r["encounter"] != held:
                continue
            if not r["hard"]:
                r["p"], r["threshold"] = fitted.probability(r), fitted.threshold
            flags[i] = fitted.flags(r)
    return flags


def unit_agreement(rows: list[dict], flags: dict[int, bool], units: dict) -> dict:
    by_note: dict[str, list[ClaimCall]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_note[r["note_id"]].append(ClaimCall(r["start"], r["end"], flags[i]))
    results = [
        UnitResult(u, unit_call(u.start, u.end, by_note[note_id]))
        for note_id, note_units in units.items()
        for u in note_units
    ]
    return agreement_summary(results)


def show(name: str, s: dict) -> None:
    print(
        f"{name:26} P {s['precision']:.2f}  R {s['recall']:.2f}  F1 {s['f1']:.2f}  "
        f"κ {s['kappa']:.2f}  major {s['major_recall']:.2f}  ρ {s['note_spearman']:.2f}  "
        + "  ".join(
            f"{k} {v['judged_share']:.0%}/{v['gold_share']:.0%}" for k, v in s["systems"].items()
        )
    )


async def main_async(args) -> None:
    global OBJECTIVE, TARGET_PRECISION
    OBJECTIVE = args.objective
    TARGET_PRECISION = args.target_precision[0]
    rows, units = await collect_labelled(args.data, args.labels)
    add_pair_scores(rows, args.pair_oof)
    labelled = [r for r in rows if r["label"] is not None]
    print(
        f"{len(rows)} claims, {len(labelled)} on labelled units, "
        f"{sum(r['hard'] for r in labelled)} decided by hard rules"
    )
    rules_only = unit_agreement(rows, {i: r["rule_flag"] for i, r in enumerate(rows)}, units)
    show("rules (threshold cascade)", rules_only)
    without = [{**r, "x": without_pair(r["x"])} for r in rows]
    show("… without the pair feature", unit_agreement(rows, cross_validate(without, args.C), units))
    for target in args.target_precision[1:]:  # the other training-precision targets, compared
        TARGET_PRECISION = target
        show(
            f"… precision target {target:.2f}",
            unit_agreement(rows, cross_validate(rows, args.C), units),
        )
    TARGET_PRECISION = args.target_precision[0]
    flags = cross_validate(rows, args.C)
    combined = unit_agreement(rows, flags, units)
    show(f"rules + combiner (LOEO CV, target {TARGET_PRECISION:.2f})", combined)
    if args.held_out:
        rules_h, combined_h = held_out(rows, units, args.C)
        show(f"held out: rules ({len(HELD_OUT)} enc.)", rules_h)
        show("held out: rules + combiner", combined_h)
    if args.dump:
        with args.dump.open("w") as out:
            for r in rows:
                out.write(json.dumps(r) + "\n")
    if not args.write:
        return
    fitted = fit_combiner(rows, args.C)
    model, mean, scale, threshold = fitted.model, fitted.mean, fitted.scale, fitted.threshold
    payload = {
        "model": "logistic regression over clinjudge.judges.claim_features.FEATURES",
        "features": list(FEATURES),
        "mean": mean.round(6).tolist(),
        "scale": scale.round(6).tolist(),
        "coef": model.coef_[0].round(6).tolist(),
        "intercept": round(float(model.intercept_[0]), 6),
        "threshold": round(threshold, 4),
        "C": args.C,
        "threshold_objective": OBJECTIVE,
        "target_precision": TARGET_PRECISION,
        "fitted_on": {
            "labels": "ACI-Bench test3 sentence labels (GUIDE.md), CC BY 4.0",
            "encounters": sorted({r["encounter"] for r in rows}),
            "claims": fitted.claims,
            "positives": fitted.positives,
        },
        "cross_validation": {
            "scheme": "leave one encounter out",
            "rules": {k: rules_only[k] for k in ("precision", "recall", "f1", "kappa")},
            "combined": {k: combined[k] for k in ("precision", "recall", "f1", "kappa")},
        },
        "created": dt.date.today().isoformat(),
    }
    COMBINER_PATH.write_text(json.dumps(payload, indent=1) + "\n")
    print(f"wrote {COMBINER_PATH} (threshold {threshold:.2f})")
    for name, w in sorted(zip(FEATURES, model.coef_[0], strict=True), key=lambda t: -abs(t[1])):
        print(f"  {w:+.2f}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=SHARED)
    parser.add_argument("--labels", type=Path, nargs="+", default=None)
    parser.add_argument("--C", type=float, default=0.5)
    parser.add_argument("--write", action="store_true")
    parser.add_argument(
        "--objective",
        choices=("precision", "kappa", "f1"),
        default="precision",
        help="how the threshold is chosen on the training folds: the lowest reaching precision "
        f"{TARGET_PRECISION} (default), or the best κ or F1",
    )
    parser.add_argument(
        "--target-precision",
        type=lambda v: [float(x) for x in v.split(",")],
        default=[TARGET_PRECISION],
        help="the training precision the threshold must reach (objective precision); several, "
        "comma-separated, are each scored by CV and the first is the one fitted (--write)",
    )
    parser.add_argument("--held-out", action="store_true", help="also score HELD_OUT alone")
    parser.add_argument(
        "--pair-oof",
        type=Path,
        default=PAIR_OOF,
        help="out-of-fold pair-scorer probabilities (bench/train_pair_model.py --cv)",
    )
    parser.add_argument("--dump", type=Path, default=None, help="claim rows with CV scores")
    try:
        args = parser.parse_args()
        args.labels = args.labels or default_labels(args.data)
        asyncio.run(main_async(args))
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
