"""The fact-checker (SPEC §3) as an :class:`~clinjudge.evaluators.base.Evaluator`: ``factcheck``.

The answer is ``item.note``, the question ``item.meta["question"]`` (optional). A row's own
corpus, ``item.meta["evidence"]`` (a list of strings or of ``{id, text, url}`` objects, or a JSON
string of either), wins over the configured search backend for that row. ``options.options``:
``corpus`` (JSONL path), ``search`` (backend name), ``search_url``, ``k`` (passages per claim),
``evidence`` (``per_claim``, the default, or ``pooled``: :mod:`clinjudge.factcheck.evidence`).

A row is the answer's :class:`~clinjudge.factcheck.models.AnswerResult` under the item's ``id``.
``score`` = 1 − unsupported rate (``None`` when no relevant claim was rated); the flagged spans are
the answer spans of the ``not_supported`` claims.
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

from clinjudge.evaluators.base import check_options, model_identity
from clinjudge.evaluators.registry import judge

if TYPE_CHECKING:
    from clinjudge.datasets.items import Item
    from clinjudge.evaluators.base import BuildOptions
    from clinjudge.factcheck.models import AnswerResult
    from clinjudge.factcheck.setup import FactcheckSetup


class FactcheckEvaluator:
    name = "factcheck"
    kind = "factcheck"
    shares_claims = False
    needs_source = False

    def __init__(self, setup: FactcheckSetup) -> None:
        from clinjudge.graphs.factcheck import FactcheckContext, build_graph

        self.setup = setup
        self._graph = build_graph()
        self._context = FactcheckContext(setup)

    def identity(self) -> dict[str, Any]:
        p = self.setup.provenance
        pooled = {"evidence": "pooled"} if p.get("evidence") == "pooled" else {}
        return model_identity(p, search=p["search"], k=p["k"], **pooled)

    def provenance(self) -> dict[str, Any]:
        from clinjudge.grounding.backend import with_output_modes

        return with_output_modes(dict(self.setup.provenance), self.setup.caller)

    def usage(self) -> dict[str, int] | None:
        return self.setup.caller.usage.as_dict() if self.setup.caller else None

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        from clinjudge.graphs.factcheck import check_answer
        from clinjudge.search import CorpusSearch, passages_from_value

        question = item.meta.get("question")
        question = question if isinstance(question, str) and question.strip() else None
        key = ""
        evidence = item.meta.get("evidence")
        if evidence not in (None, "", []):
            key = f"item:{item.id}"
            passages = passages_from_value(evidence, where=f"item {item.id}: evidence")
            self._context.searches[key] = CorpusSearch(passages, label=f"item {item.id}")
        try:
            result = await check_answer(
                self._graph,
                self._context,
                answer_id=item.id,
                answer=item.note,
                question=question,
                search_key=key,
            )
        finally:
            self._context.searches.pop(key, None)
        row = result.model_dump(mode="json")
        if any(c.failure for c in result.claims):
            row["retry"] = True  # a failed call or bad reply lost part of it: run it again
        return row

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """Pooled unsupported rate (all rated relevant claims, Wilson 95% CI), mean per-answer
        rate (answers with ≥ 1 rated claim, bootstrap 95% CI over answers), pooled checkable rate
        (rated relevant claims, Wilson), and the counts of claims in each denominator."""
        from clinjudge.metrics.intervals import bootstrap_interval, wilson_interval

        results = [_result(r) for r in rows]
        rated = sum(r.n_rated for r in results)
        unsupported = sum(r.n_not_supported for r in results)
        checkable = sum(r.n_checkable for r in results)
        per_answer = [r.unsupported_rate for r in results if r.unsupported_rate is not None]
        pooled = unsupported / rated if rated else None
        checkable_rate = checkable / rated if rated else None
        mean_rate = statistics.fmean(per_answer) if per_answer else None
        summary = {
            "unsupported_rate": pooled,
            "ci95": list(wilson_interval(unsupported, rated)),
            "mean_answer_unsupported_rate": mean_rate,
            "mean_answer_ci95": bootstrap_interval(per_answer),
            "checkable_rate": checkable_rate,
            "checkable_ci95": list(wilson_interval(checkable, rated)),
            "n_answers": len(results),
            "n_answers_rated": len(per_answer),
            "n_claims": sum(r.n_claims for r in results),
            "n_relevant": sum(r.n_relevant for r in results),
            "n_rated": rated,
            "n_not_supported": unsupported,
            "n_checkable": checkable,
            "n_excluded": sum(r.n_excluded for r in results),
            "parse_failures": sum(r.parse_failures for r in results),
            "errors": sum(r.errors for r in results),
            "denominators": "unsupported and checkable rates: rated relevant claims "
            "(relevant minus excluded); mean answer rate: answers with a rated claim",
        }
        headline = {
            "unsupported_rate": {"value": pooled, "ci95": summary["ci95"], "n": rated},
            "checkable_rate": {
                "value": checkable_rate,
                "ci95": summary["checkable_ci95"],
                "n": rated,
            },
        }
        return {"kind": self.kind, "headline": headline, **summary}

    def item_scores(self, row: dict[str, Any]) -> dict[str, Any]:
        result = _result(row)
        return {
            "unsupported_rate": result.unsupported_rate,
            "n_claims": result.n_claims,
            "checkable_rate": result.checkable_rate,
            "n_relevant": result.n_relevant,
            "n_excluded": result.n_excluded,
            "support_score": result.support_score,
        }

    def score(self, row: dict[str, Any]) -> float | None:
        rate = _result(row).unsupported_rate
        return None if rate is None else 1.0 - rate

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]:
        result = _result(row)
        return [(c.start, c.end) for c in result.claims if c.verdict == "not_supported"]

    def failures(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Claims whose queries, search or rating failed."""
        return [c["failure"] for c in row.get("claims") or [] if c.get("failure")]

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        result = _result(row)
        return [
            {
                "id": result.id,
                "judge": self.name,
                "claim_id": c.id,
                "text": c.text,
                "start": c.start,
                "end": c.end,
                "label": c.label,
                "verdict": c.verdict,
                "checkable": c.checkable,
                "queries": c.queries,
                "evidence": [{"id": p.id, "url": p.url, "snippet": p.text} for p in c.evidence],
                "rationale": c.rationale,
                "failure": None if c.failure is None else c.failure.model_dump(),
            }
            for c in result.claims
        ]


def _result(row: dict[str, Any]) -> AnswerResult:
    from clinjudge.factcheck.models import AnswerResult

    return AnswerResult.from_row(row)


@judge("factcheck", summary="retrieval-grounded checking of each claim of an answer")
def build(options: BuildOptions) -> FactcheckEvaluator:
    from clinjudge.factcheck.setup import DEFAULT_K, build_factcheck

    known = ("corpus", "search", "search_url", "k", "evidence")
    opts = check_options("factcheck", options.options, known)
    k = opts.get("k") or DEFAULT_K
    setup = build_factcheck(
        options.backend,
        settings=options.settings,
        chat_model=options.chat_model,
        prompt_overrides={
            n: p for n, p in options.prompt_overrides.items() if n.startswith("factcheck.")
        },
        knowledge=options.knowledge,
        cache=options.cache,
        search=opts.get("search"),
        search_url=opts.get("search_url"),
        corpus=opts.get("corpus"),
        k=int(k),
        evidence=str(opts.get("evidence", "per_claim")),
    )
    return FactcheckEvaluator(setup)
