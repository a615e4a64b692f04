"""Meta-evaluation of a judge on matched pairs (SPEC §4 paired AUROC, §5 error injection): does
it catch the injected error, and does it leave the legitimate rewrite alone?

A pair (:class:`~clinjudge.inject.pairs.PairRecord`) is an original text and the same text with
exactly one change at ``edited_span`` (``original_span`` in the original) — an injected error
(``kind="error"``) or a legitimate rewrite (``kind="rewrite"``). Each pair gives two items,
``<pair_id>#original`` and ``<pair_id>#edited`` (note = that text, transcript = ``pair.source``,
meta = ``pair.meta``), and each judge runs once over all items (resumable JSONL,
``DIR/runs/<judge>.jsonl``). Items with the same source and text (the original of every pair
cut from one note) are judged once per judge and the row is reused (``"same_as"``).

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

import asyncio
import datetime as dt
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from clinjudge import __version__
from clinjudge.datasets.items import Dataset, Item
from clinjudge.evaluators.base import Evaluator
from clinjudge.inject.pairs import PairRecord
from clinjudge.inject.types import spans_touch
from clinjudge.metrics.auroc import pair_outcomes, paired_auroc
from clinjudge.metrics.intervals import bootstrap_ci, wilson_interval
from clinjudge.runner import read_completed, run_evaluator

SIDES = ("original", "edited")
RATE_NAME = {"error": "detection_rate", "rewrite": "false_flag_rate"}
N_RESAMPLES = 2000


def item_id(pair_id: str, side: str) -> str:
    """``"p1", "edited"`` → ``"p1#edited"``."""
    return f"{pair_id}#{side}"


def pair_items(pairs: Iterable[PairRecord]) -> list[Item]:
    """Two items per pair, original first (module docstring)."""
    return [
        Item(id=item_id(p.pair_id, side), transcript=p.source, note=text, meta=p.meta)
        for p in pairs
        for side, text in zip(SIDES, (p.original, p.edited), strict=True)
    ]


def pairs_dataset(path: Path, pairs: Sequence[PairRecord]) -> Dataset:
    """The pair file's items as a :class:`Dataset` (SHA-256 of the file's bytes)."""
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    return Dataset(name=Path(path).name, path=Path(path), items=pair_items(pairs), sha256=digest)


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
    return {
        "kind": kind,
        "n": len(scores),
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
        "auroc_ci95": auc.ci95,
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


class _SameTextOnce:
    """``evaluate`` that judges each distinct (source, text) once and reuses the row for the
    other items with the same texts (id replaced, ``same_as`` naming the judged item). Seeded
    with the rows of a previous run so a resumed run reuses them too."""

    def __init__(self, evaluator: Evaluator, items: list[Item], previous: dict[str, dict]):
        self.evaluator = evaluator
        self._done: dict[str, asyncio.Future] = {}
        self._key_of = {item.id: self._key(item) for item in items}
        for row_id, row in previous.items():
            if row_id in self._key_of and not row.get("retry"):
                future = asyncio.get_running_loop().create_future()
                future.set_result(row)
                self._done.setdefault(self._key_of[row_id], future)

    @staticmethod
    def _key(item: Item) -> str:
        return hashlib.sha256(f"{item.transcript}\x00{item.note}".encode()).hexdigest()

    async def evaluate(self, item: Item) -> dict[str, Any]:
        key = self._key_of.get(item.id) or self._key(item)
        if key in self._done:
            row = await asyncio.shield(self._done[key])
            if row["id"] == item.id:
                return row
            return {**row, "id": item.id, "same_as": row.get("same_as", row["id"])}
        future = asyncio.get_running_loop().create_future()
        self._done[key] = future
        try:
            row = await self.evaluator.evaluate(item)
        except BaseException as exc:
            del self._done[key]  # the next item with this text tries again
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning
            raise
        if row.get("retry"):
            del self._done[key]
        future.set_result(row)
        return row


@dataclass
class MetaEvalResult:
    report: dict[str, Any]
    scores: dict[str, list[PairScore]]
    files: list[Path]


async def run_meta_eval(
    pairs_path: Path,
    pairs: Sequence[PairRecord],
    judges: dict[str, Evaluator],
    out_dir: Path,
    *,
    concurrency: int = 4,
    progress: Callable[[str, int], Callable[[], None]] = lambda name, total: lambda: None,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> MetaEvalResult:
    """Run every judge over both sides of every pair (resumably), score the pairs and write
    ``DIR/runs/<judge>.jsonl``, ``DIR/pairs_scored.jsonl``, ``report.json``, ``report.md`` and
    the plots. Top-level ``overall``/``by_type`` of the report are the *first* judge's.

    The first SOAP judge's claims are given to the other SOAP judges (as in ``compare``), so
    they rate the same claims. A directory holding a run with other settings is refused."""
    # compare's helpers (and the report layer) are imported here: they pull in the judges' graphs.
    from clinjudge.compare import check_dataset, check_resumable, fingerprint
    from clinjudge.report.meta_eval_report import write_meta_eval_report

    out_dir = Path(out_dir)
    dataset = pairs_dataset(pairs_path, pairs)
    check_dataset(dataset, judges)
    check_resumable(out_dir, fingerprint(dataset, judges))
    scores: dict[str, list[PairScore]] = {}
    failed: dict[str, dict[str, str]] = {}
    seconds: dict[str, float] = {}
    resumed: dict[str, int] = {}
    given: dict[str, list[dict]] | None = None
    for name, judge in judges.items():
        soap = hasattr(judge, "given_claims")
        if soap:
            judge.given_claims = given  # type: ignore[attr-defined]
        out_path = out_dir / "runs" / f"{name}.jsonl"
        once = _SameTextOnce(judge, dataset.items, read_completed(out_path, key="id"))
        started = time.perf_counter()
        result = await run_evaluator(
            once,
            dataset.items,
            out_path=out_path,
            concurrency=concurrency,
            on_done=progress(name, len(dataset.items)),
        )
        seconds[name] = time.perf_counter() - started
        resumed[name] = result.resumed
        failed[name] = result.failed
        rows = {row["id"]: row for row in result.rows}
        if soap and given is None:
            given = {row["id"]: row["claims"] for row in result.rows if "claims" in row}
        scores[name] = [score_pair(p, name, judge, rows, result.failed) for p in pairs]
    summaries = {
        name: summarize_scores(s, n_resamples=n_resamples, seed=seed) for name, s in scores.items()
    }
    first = summaries[next(iter(judges))]
    report = {
        "pairs": pairs_summary(dataset, pairs),
        "judges": summaries,
        "overall": first["overall"],
        "by_type": first["by_type"],
        "first_judge": next(iter(judges)),
        "failed_items": {n: f for n, f in failed.items() if f},
        "usage": {n: u for n, j in judges.items() if (u := j.usage()) is not None},
        "seconds": seconds,
        "resumed_items": resumed,
        "method": {
            "interval": "percentile bootstrap over pairs clustered by source_id; Wilson",
            "n_resamples": n_resamples,
            "seed": seed,
            "overlap": "clinjudge.inject.types.spans_touch",
        },
        "provenance": {
            "package_version": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "pairs": dataset.provenance(),
            "judges": {n: j.provenance() for n, j in judges.items()},
        },
    }
    scored_path = out_dir / "pairs_scored.jsonl"
    with scored_path.open("w", encoding="utf-8") as handle:
        for judge_scores in scores.values():
            for s in judge_scores:
                handle.write(json.dumps(asdict(s), ensure_ascii=False) + "\n")
    files = write_meta_eval_report(report, out_dir)
    return MetaEvalResult(report=report, scores=scores, files=[scored_path, *files])


def pairs_summary(dataset: Dataset, pairs: Sequence[PairRecord]) -> dict[str, Any]:
    """``path``, ``sha256``, ``n`` and the pair counts ``by_kind`` and ``by_type``."""
    by_kind: dict[str, int] = {}
    by_type: dict[str, int] = {}
    for p in pairs:
        by_kind[p.kind] = by_kind.get(p.kind, 0) + 1
        by_type[p.type] = by_type.get(p.type, 0) + 1
    return {
        "path": str(dataset.path),
        "sha256": dataset.sha256,
        "n": len(pairs),
        "by_kind": by_kind,
        "by_type": by_type,
    }


def run_meta_eval_sync(*args: Any, **kwargs: Any) -> MetaEvalResult:
    return asyncio.run(run_meta_eval(*args, **kwargs))
