"""The claim combiner: a logistic regression over the offline verifier's measurements.

For a claim that no contradiction or safety-floor rule decided, the combiner weighs what the
rules measured (:data:`clinjudge.judges.claim_features.FEATURES`) and gives the probability that
a careful reviewer would call the claim unsupported:

    p = σ(b + Σ_i w_i · (x_i − μ_i) / s_i),     flagged (tier 4) when p ≥ threshold

Weights, scaling and threshold are package data (``data/combiner.json``), fitted by
``bench/train_combiner.py`` on the ACI-Bench sentence labels and scored there by
leave-one-encounter-out cross-validation (SPEC §9); the file records what it was fitted on.
Nothing is downloaded or trained at run time, and the score is deterministic.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from clinjudge.judges.claim_features import FEATURES, Assessment, NovelWords, feature_vector

COMBINER_PATH = Path(__file__).with_name("data") / "combiner.json"


@dataclass(frozen=True)
class Combiner:
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    digest: str = ""  # sha256 of the file it was read from (first 16 hex digits)

    @classmethod
    def from_file(cls, path: Path = COMBINER_PATH) -> Combiner:
        raw = path.read_bytes()
        data = json.loads(raw)
        if tuple(data["features"]) != FEATURES:
            raise ValueError(
                f"{path}: fitted on other features than clinjudge.judges.claim_features "
                "defines; refit it with bench/train_combiner.py --write"
            )
        return cls(
            features=tuple(data["features"]),
            mean=tuple(data["mean"]),
            scale=tuple(data["scale"]),
            coef=tuple(data["coef"]),
            intercept=float(data["intercept"]),
            threshold=float(data["threshold"]),
            digest=hashlib.sha256(raw).hexdigest()[:16],
        )

    def probability(self, values: dict[str, float]) -> float:
        """p(unsupported) of a claim with these feature values (module docstring)."""
        x = feature_vector(values)
        z = self.intercept + sum(
            w * (v - m) / s for w, v, m, s in zip(self.coef, x, self.mean, self.scale, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-z))

    def flags(self, values: dict[str, float]) -> bool:
        return self.probability(values) >= self.threshold

    def undecided_by(self, values: dict[str, float], feature: str) -> float | None:
        """``None`` when the decision depends on ``feature`` within [0, 1]; else the end of
        that range that gives the score nearest the threshold (flagged: the lowest score,
        kept: the highest), so the score printed is a true bound."""
        low = self.probability({**values, feature: 0.0})
        high = self.probability({**values, feature: 1.0})
        if (low >= self.threshold) != (high >= self.threshold):
            return None
        flagged = low >= self.threshold
        return 0.0 if (low <= high) == flagged else 1.0


@lru_cache(maxsize=1)
def default_combiner() -> Combiner | None:
    """The packaged combiner, or ``None`` when the package carries none."""
    return Combiner.from_file() if COMBINER_PATH.exists() else None


def unsupported_reason(a: Assessment, p: float, threshold: float) -> str:
    """Why the combiner calls a claim unsupported, in a reviewer's words: the words the visit
    never says, else those missing from the passages that match the claim, and the score."""
    novel = a.novel or NovelWords()
    specifics = novel.specifics()
    unsaid = [w for w in specifics if w in novel.unsaid]
    if (a.features or {}).get("exam_unvoiced"):
        what = "an examination finding the visit never voices"
    elif unsaid:
        what = "never said in the visit: " + ", ".join(f"'{w}'" for w in unsaid[:4])
    elif specifics:
        listed = ", ".join(f"'{w}'" for w in specifics[:4])
        what = f"the passages that match it do not say {listed} (said elsewhere in the visit)"
    else:
        what = "the visit does not say this: its words appear, not the statement"
    return f"{what} (learned check: score {_score(a, p, threshold)}, flagged from {threshold:.2f})"


def supported_reason(a: Assessment, p: float, threshold: float) -> str:
    """Why the combiner keeps a claim the threshold rules could not place."""
    return (
        "not stated word for word, but a reasonable summary of the visit "
        f"(learned check: score {_score(a, p, threshold)}, flagged only from {threshold:.2f}; "
        f"the rules alone: {a.verdict.rationale})"
    )


def _score(a: Assessment, p: float, threshold: float) -> str:
    """The score to two decimals, or three when two would print it equal to the threshold;
    a bound ("at least", "at most") when the pair scorer was not run (:meth:`undecided_by`)."""
    shown = f"{p:.3f}" if f"{p:.2f}" == f"{threshold:.2f}" else f"{p:.2f}"
    if not a.pair_unread:
        return shown
    return f"{'at least' if p >= threshold else 'at most'} {shown} whatever the pair scorer reads"
