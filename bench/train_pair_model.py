"""Fine-tune the claim–evidence pair scorer on the sentence labels (issue 12).

The scorer (``clinjudge.judges.pair_model``) reads a claim together with the transcript
passages the offline verifier retrieved for it (its top three evidence sentences) and gives the
probability that a careful reviewer would call the claim unsupported. It is the packaged
all-MiniLM-L6-v2 encoder with a LoRA adapter (peft) on its attention and feed-forward layers,
mean pooling and one logistic unit, trained here with class-balanced binary cross-entropy on
every labelled claim (positive = the claim overlaps a unit labelled unsupported or
contradicted).

1. ``--cv``: K-fold cross-validation by encounter (all notes of a visit in one fold, folds
   fixed by sorted encounter id). Writes every claim's out-of-fold probability to
   ``bench/pair_oof.jsonl``, which ``train_combiner.py`` reads as the combiner's ``pair``
   feature, and prints the per-fold AUROC.
2. ``--write``: fits on every labelled encounter and writes the adapter and head to
   ``clinjudge/judges/data/pair_model/`` (with what it was fitted on).

    .venv/bin/python bench/train_pair_model.py --cv --write [--folds 5] [--epochs 2]

Deterministic on one machine (fixed seeds and data order); ~9 min per fold on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_agreement import SHARED, InputError, default_labels  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from train_combiner import collect_labelled  # noqa: E402

from clinjudge.judges.pair_model import (  # noqa: E402
    LORA,
    PAIR_MODEL_DIR,
    PairScorer,
    pair_text,
)

HERE = Path(__file__).resolve().parent
OOF_PATH = HERE / "pair_oof.jsonl"
SEED = 0


def key(row: dict) -> str:
    return f"{row['note_id']}:{row['start']}"


def train(rows: list[dict], epochs: int, lr: float, batch: int = 16) -> PairScorer:
    """A fresh scorer (base encoder + new adapter and head) fitted on ``rows``."""
    torch.manual_seed(SEED)
    scorer = PairScorer.untrained()
    model = scorer.trainable()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    positives = sum(r["label"] for r in rows)
    weight = torch.tensor((len(rows) - positives) / max(positives, 1))
    order = list(range(len(rows)))
    shuffle = random.Random(SEED)
    t0 = time.time()
    for epoch in range(epochs):
        model.train()
        shuffle.shuffle(order)
        for i in range(0, len(order), batch):
            chunk = [rows[j] for j in order[i : i + batch]]
            logits = scorer.logits([(r["text"], r["evidence"]) for r in chunk], train=True)
            y = torch.tensor([float(r["label"]) for r in chunk])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits, y, pos_weight=weight
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"  epoch {epoch + 1}/{epochs}: {time.time() - t0:.0f} s", file=sys.stderr)
    model.eval()
    return scorer


def predict(scorer: PairScorer, rows: list[dict]) -> list[float]:
    return scorer.scores([(r["text"], r["evidence"]) for r in rows])


def cross_validate(rows: list[dict], folds: int, epochs: int, lr: float) -> dict[str, float]:
    encounters = sorted({r["encounter"] for r in rows})
    out: dict[str, float] = {}
    for k in range(folds):
        held = set(encounters[k::folds])
        fit_rows = [r for r in rows if r["encounter"] not in held]
        test = [r for r in rows if r["encounter"] in held]
        print(f"fold {k + 1}/{folds}: {len(fit_rows)} claims to fit, {len(test)} held out")
        scorer = train(fit_rows, epochs, lr)
        probs = predict(scorer, test)
        out.update({key(r): p for r, p in zip(test, probs, strict=True)})
        y = [r["label"] for r in test]
        print(f"  AUROC held out {roc_auc_score(y, probs):.3f}", flush=True)
    return out


async def labelled_rows(args) -> list[dict]:
    rows, _ = await collect_labelled(args.data, args.labels)
    return [{**r, "evidence": pair_text(r["evidence"])} for r in rows if r["label"] is not None]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=SHARED, help="claim-labels directory")
    parser.add_argument("--labels", type=Path, nargs="+", default=None)
    parser.add_argument("--folds", type=int, default=5, help="CV folds by encounter")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-4, help="AdamW learning rate (adapter)")
    parser.add_argument("--cv", action="store_true", help=f"write out-of-fold scores to {OOF_PATH}")
    parser.add_argument("--write", action="store_true", help=f"fit on all, write {PAIR_MODEL_DIR}")
    args = parser.parse_args()
    args.labels = args.labels or default_labels(args.data)
    if not (args.cv or args.write):
        parser.error("nothing to do: give --cv, --write or both")
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    try:
        rows = asyncio.run(labelled_rows(args))
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    positives = sum(r["label"] for r in rows)
    print(
        f"{len(rows)} labelled claims, {positives} positive, "
        f"{len({r['encounter'] for r in rows})} encounters"
    )
    if args.cv:
        oof = cross_validate(rows, args.folds, args.epochs, args.lr)
        y = [r["label"] for r in rows]
        p = [oof[key(r)] for r in rows]
        print(f"out-of-fold AUROC, all claims: {roc_auc_score(y, p):.3f}")
        with OOF_PATH.open("w") as f:
            for r in rows:
                f.write(json.dumps({"key": key(r), "p": round(oof[key(r)], 6)}) + "\n")
        print(f"wrote {OOF_PATH}")
    if args.write:
        print("fitting on every labelled encounter")
        scorer = train(rows, args.epochs, args.lr)
        scorer.save(
            PAIR_MODEL_DIR,
            {
                "fitted": dt.date.today().isoformat(),
                "encounters": sorted({r["encounter"] for r in rows}),
                "claims": len(rows),
                "positives": positives,
                "epochs": args.epochs,
                "lr": args.lr,
                "lora": LORA,
                "seed": SEED,
                "numpy": np.__version__,
                "torch": torch.__version__,
            },
        )
        print(f"wrote {PAIR_MODEL_DIR}")


if __name__ == "__main__":
    main()
