"""How one judge's rows score a matched pair, and how pairs add up (SPEC §4 paired AUROC, §5
error injection; the run itself is :mod:`clinjudge.meta_eval`).

A side is *judged* when its judge call returned a row and ``score(row)`` is not ``None`` (the
Evaluator's sign that every unit of it was excluded); items whose call raised are listed in
``failed_items``. Per pair (``f`` = flagged spans of a text, overlap = ``spans_touch``):

- ``flagged``: some span of ``f(edited)`` overlaps ``edited_span``; ``None`` when the edited side
  is not judged. For an error pair this is *detection*, for a rewrite a *false flag*.
- ``differential``: ``flagged`` and no span of ``f(original)`` overlaps ``original_span`` (the
  judge flags the change, not a place it flagged anyway); ``None`` unless both sides are judged.
- ``u`` (SPEC §4): 1 if score(original) > score(edited), 0.5 on a tie, 0 otherwise; ``None``
  when either score is missing. Scores are higher = better text.

Per type, and overall for errors and for rewrites separately (a block)::

    rate (detection_rate | false_flag_rate) = #flagged / n_judged        excluded = n − n_judged
    deletions = pairs whose edit only removes text (nothing left to flag: read their AUROC)
    differential_rate = #differential / #pairs with both sides judged
    auroc = mean(u) = P(orig > edited) + 0.5·P(tie); win/tie/loss     auroc_excluded = n − auroc_n

Intervals: ``ci95`` (and ``differential_ci95``, ``auroc_ci95``) are percentile bootstraps over
pairs clustered by ``source_id`` — pairs cut from one note are not independent — 2000 resamples,
seeded; ``wilson95`` is the Wilson interval of the rate (SPEC §8). A good judge has a high
detection rate, a low false-flag rate, AUROC near 1 on errors and near 0.5 on rewrites.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from clinjudge.evaluators.base import Evaluator
from clinjudge.inject.pairs import PairRecord
from clinjudge.inject.types import spans_touch
from clinjudge.metrics.auroc import pair_outcomes, paired_auroc
from clinjudge.metrics.intervals import (
    TOO_FEW,
    bootstrap_ci,
    enough_for_bootstrap,
    wilson_interval,
)

SIDES = ("original", "edited")
RATE_NAME = {"error": "detection_rate", "rewrite": "false_flag_rate"}
N_RESAMPLES = 2000


def item_id(pair_id: str, side: str) -> str:
    """``"p1", "edited"`` → ``"p1#edited"``."""
    return f"{pair_id}#{side}"


@dataclass
class PairScore:
    """What one judge made of one pair (one line of ``pairs_scored.jsonl``)."""

    pair_id: str
    source_id: str
    kind: str
    type: str
    judge: str
    before: str
    after: str
    score_original: float | None
    score_edited: float | None
    #: Flagged spans of the edited text overlapping ``edited_span``, with their text.
    flags_edited: list[dict[str, Any]] = field(default_factory=list)
    #: Flagged spans of the original text overlapping ``original_span``, with their text.
    flags_original: list[dict[str, Any]] = field(default_factory=list)
    flagged: bool | None = None
    differential: bool | None = None
    u: float | None = None
    #: Why a side counts as not judged: side → reason.
    missing: dict[str, str] = field(default_factory=dict)
    original_span: tuple[int, int] = (0, 0)
    edited_span: tuple[int, int] = (0, 0)
    #: The offline injector that made the pair (``meta["injector"]``), ``None`` otherwise.
    injector: str | None = None


def score_pair(
    pair: PairRecord,
    judge: str,
    evaluator: Evaluator,
    rows: dict[str, dict[str, Any]],
    failed: dict[str, str] | None = None,
) -> PairScore:
    """Score one pair from the judge's rows by item id (module docstring rules)."""
    failed = failed or {}
    texts = {"original": pair.original, "edited": pair.edited}
    spans = {"original": pair.original_span, "edited": pair.edited_span}
    scores: dict[str, float | None] = {}
    hits: dict[str, list[dict[str, Any]]] = {}
    missing: dict[str, str] = {}
    for side in SIDES:
        key = item_id(pair.pair_id, side)
        row = rows.get(key)
        scores[side] = None if row is None else evaluator.score(row)
        if row is None:
            missing[side] = failed.get(key, "no result (incomplete; re-run to retry)")
        elif scores[side] is None:
            missing[side] = "nothing scored (every unit excluded)"
        a, b = spans[side]
        flags = [] if row is None else evaluator.flagged_spans(row)
        hits[side] = [
            {"start": s, "end": e, "text": texts[side][s:e]}
            for s, e in flags
            if spans_touch(a, b, s, e)
        ]
    flagged = None if "edited" in missing else bool(hits["edited"])
    differential = None if missing else bool(hits["edited"]) and not hits["original"]
    (u,) = pair_outcomes([scores["original"]], [scores["edited"]])
    return PairScore(
        pair_id=pair.pair_id,
        source_id=pair.source_id,
        kind=pair.kind,
        type=pair.type,
        judge=judge,
        before=pair.before,
        after=pair.after,
        score_original=scores["original"],
        score_edited=scores["edited"],
        flags_edited=hits["edited"],
        flags_original=hits["original"],
        flagged=flagged,
        differential=differential,
        u=u,
        missing=missing,
        original_span=pair.original_span,
        edited_span=pair.edited_span,
        injector=injector if isinstance(injector := pair.meta.get("injector"), str) else None,
    )


def _share(
    values: list[bool | None], clusters: list[str], n_resamples: int, seed: int
) -> tuple[int, int, float | None, tuple[float, float] | None]:
    """(events, n counted, rate, clustered bootstrap interval) of the non-``None`` values."""
    kept = [(float(v), c) for v, c in zip(values, clusters, strict=True) if v is not None]
    if not kept:
        return 0, 0, None, None
    k = int(sum(v for v, _ in kept))
    ci = bootstrap_ci(
        [v for v, _ in kept], n_resamples=n_resamples, seed=seed, clusters=[c for _, c in kept]
    )
    return k, len(kept), k / len(kept), ci


def block(
    scores: Sequence[PairScore], kind: str, *, n_resamples: int = N_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """The metrics of a group of pairs of one ``kind`` (module docstring formulas)."""
    clusters = [s.source_id for s in scores]
    k, n_judged, rate, ci = _share([s.flagged for s in scores], clusters, n_resamples, seed)
    dk, dn, drate, dci = _share([s.differential for s in scores], clusters, n_resamples, seed)
    auc = paired_auroc(
        [s.score_original for s in scores],
        [s.score_edited for s in scores],
        clusters=clusters,
        n_resamples=n_resamples,
        seed=seed,
    )
    small = not enough_for_bootstrap(clusters)
    if small:  # no bootstrap interval from one to four notes (metrics.intervals)
        ci = dci = None
    return {
        "kind": kind,
        "n": len(scores),
        "ci_note": TOO_FEW if small else None,
        "n_judged": n_judged,
        "excluded": len(scores) - n_judged,
        "flagged": k,
        "rate": rate,
        RATE_NAME[kind]: rate,
        "ci95": ci,
        "wilson95": wilson_interval(k, n_judged) if n_judged else None,
        "differential": dk,
        "differential_n": dn,
        "differential_rate": drate,
        "differential_ci95": dci,
        "auroc": auc.auroc,
        "auroc_ci95": None if small else auc.ci95,
        "win": auc.win,
        "tie": auc.tie,
        "loss": auc.loss,
        "auroc_n": auc.n,
        "auroc_excluded": len(scores) - auc.n,
        "deletions": sum(1 for s in scores if s.edited_span[0] == s.edited_span[1]),
    }


def summarize_scores(
    scores: Sequence[PairScore], *, n_resamples: int = N_RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """``{"overall": {"errors": block, "rewrites": block}, "by_type": {type: block},
    "by_injector": {injector: block}, "examples": {...}}``; types in order of first appearance,
    error types first; an empty kind has ``n`` 0 and ``None`` rates. ``by_injector`` groups the
    pairs made by an offline injector (empty when none was); ``examples`` are
    :func:`missed_examples`."""
    by_type: dict[str, list[PairScore]] = {}
    by_injector: dict[str, list[PairScore]] = {}
    for s in sorted(scores, key=lambda s: s.kind != "error"):
        by_type.setdefault(s.type, []).append(s)
        if s.injector:
            by_injector.setdefault(s.injector, []).append(s)
    kw = {"n_resamples": n_resamples, "seed": seed}
    return {
        "overall": {
            "errors": block([s for s in scores if s.kind == "error"], "error", **kw),
            "rewrites": block([s for s in scores if s.kind == "rewrite"], "rewrite", **kw),
        },
        "by_type": {t: block(group, group[0].kind, **kw) for t, group in by_type.items()},
        "by_injector": {
            name: {"type": group[0].type, **block(group, group[0].kind, **kw)}
            for name, group in by_injector.items()
        },
        "examples": missed_examples(scores),
    }


def missed_examples(scores: Sequence[PairScore], per_type: int = 3) -> dict[str, list[dict]]:
    """Up to ``per_type`` pairs per type where the judge was wrong, in pair order:
    ``{"missed_errors": [...], "false_flags": [...]}``, each ``{pair_id, type, before, after,
    score_original, score_edited}`` — an error not flagged at its span, a rewrite flagged at it."""
    out: dict[str, list[dict]] = {"missed_errors": [], "false_flags": []}
    counts: dict[tuple[str, str], int] = {}
    for s in scores:
        wrong = s.flagged is False if s.kind == "error" else s.flagged is True
        key = ("missed_errors" if s.kind == "error" else "false_flags", s.type)
        if not wrong or counts.get(key, 0) >= per_type:
            continue
        counts[key] = counts.get(key, 0) + 1
        out[key[0]].append(
            {
                "pair_id": s.pair_id,
                "type": s.type,
                "before": s.before,
                "after": s.after,
                "score_original": s.score_original,
                "score_edited": s.score_edited,
            }
        )
    return out
