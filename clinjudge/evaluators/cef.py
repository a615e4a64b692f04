"""CEF (SPEC §2) as an :class:`~clinjudge.evaluators.base.Evaluator` of ``clinjudge compare``.

Options (``BuildOptions.options``, e.g. ``--option cef.n_source=12``): ``n_source`` (N, default
10) and ``n_summary`` (N', default 10) questions per side, ``task`` ``"summary"`` (default) or
``"note"`` (no conciseness; overall = mean of coverage, conformity, consistency); ``layout``
(LLM backend) ``"focused"`` (each call shows only its own text: the prompts of before issue 38;
the default) or ``"shared"`` (every call of an item opens with the same instructions and both
texts, which a server reuses), :mod:`clinjudge.cef.llm_backend`. ``claims`` (a SOAP-judge setting
compare hands to every judge) is ignored.

A row is the item's :class:`~clinjudge.cef.result.CefResult` under its ``id`` (scores, counts,
every question with its answers and span, seconds); ``retry`` marks a row that lost answers to
failed calls or unparseable replies. ``score(row)`` = overall; the flagged spans are the spans
in S of the S-questions the source answers IDK or NO.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from clinjudge.errors import ConfigError
from clinjudge.evaluators.base import check_options, model_identity, row_failures
from clinjudge.evaluators.registry import judge

if TYPE_CHECKING:
    from clinjudge.cef.factory import CefSetup
    from clinjudge.datasets.items import Item
    from clinjudge.evaluators.base import BuildOptions

SCORES = ("coverage", "conformity", "consistency", "conciseness", "overall")
DEFAULT_QUESTIONS = 10
#: What a CEF estimate assumes (the model writes the questions the answer calls carry).
STAND_IN_CAVEAT = (
    "an upper bound: every question the model is asked for is kept and confirmed by its own "
    "text, each counted as a question quoting one of that text's sentences"
)


class CefEvaluator:
    name = "cef"
    kind = "cef"
    shares_claims = False
    needs_source = True

    def __init__(self, setup: CefSetup, *, n_source: int, n_summary: int, task: str) -> None:
        from clinjudge.graphs.cef import CefContext, build_graph

        self.setup = setup
        self.options = {"n_source": n_source, "n_summary": n_summary, "task": task}
        self._graph = build_graph()
        self._context = CefContext(
            backend=setup.backend,
            n_source=n_source,
            n_summary=n_summary,
            task=task,  # type: ignore[arg-type]
        )

    def identity(self) -> dict[str, Any]:
        p = self.setup.provenance
        return model_identity(p, options=self.options)

    def provenance(self) -> dict[str, Any]:
        from clinjudge.cef.scores import TOKENIZER
        from clinjudge.grounding.backend import with_output_modes

        provenance = {**self.setup.provenance, "options": self.options, "tokenizer": TOKENIZER}
        return with_output_modes(provenance, self.setup.caller)

    def usage(self) -> dict[str, int] | None:
        return self.setup.caller.usage.as_dict() if self.setup.caller else None

    def planned_prompts(self, item: Item) -> tuple[list[str], str] | None:
        """The prompts a run would send for ``item`` at most (for ``compare --dry-run``):
        :meth:`clinjudge.cef.llm_backend.LLMCef.planned`; ``None`` offline."""
        planner = getattr(self.setup.backend, "planned", None)
        if planner is None:
            return None
        texts = {"source": item.transcript, "summary": item.note}
        counts = {"source": self.options["n_source"], "summary": self.options["n_summary"]}
        return planner(texts, counts), STAND_IN_CAVEAT

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        from clinjudge.cef.result import CefResult
        from clinjudge.runner import RECURSION_LIMIT

        final = await self._graph.ainvoke(
            {"item_id": item.id, "source": item.transcript, "summary": item.note},
            context=self._context,
            config={"recursion_limit": RECURSION_LIMIT},
        )
        result = CefResult.model_validate(final["result"])
        return {**final["result"], "id": item.id, "retry": result.incomplete}

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """``headline``: per score, the mean over the items where it is defined, its 95%
        percentile-bootstrap interval (items resampled), items used (``n``) and items excluded
        (no parsed answer on that side); plus totals of questions, drops and failures."""
        from clinjudge.metrics.intervals import bootstrap_interval

        scores: dict[str, dict[str, Any]] = {}
        for name in SCORES:
            values = [r[name] for r in rows if r.get(name) is not None]
            mean = float(np.mean(values)) if values else None
            ci = bootstrap_interval(values)
            scores[name] = {
                "value": mean,
                "ci95": ci,
                "n": len(values),
                "excluded": len(rows) - len(values),
            }
        totals = {
            key: sum(int(r.get(key, 0)) for r in rows)
            for key in (
                "n_source_questions",
                "n_summary_questions",
                "generated_source",
                "generated_summary",
                "dropped_label_source",
                "dropped_label_summary",
                "dropped_self_source",
                "dropped_self_summary",
                "parse_failures",
                "errors",
            )
        }
        seconds = [r.get("seconds", 0.0) for r in rows]
        return {
            "kind": self.kind,
            "headline": scores,
            "n_items": len(rows),
            "totals": totals,
            "parse_failures": totals["parse_failures"],
            "generation_failures": sum(len(r.get("failures", [])) for r in rows),
            "seconds_per_item_median": float(np.median(seconds)) if seconds else None,
            "options": self.options,
            "note": "scores in percent over each item's parsed cross answers; means over items "
            "where the score is defined (excluded: items with no parsed answer on that side)",
        }

    def item_scores(self, row: dict[str, Any]) -> dict[str, Any]:
        keys = (*SCORES, "n_source_questions", "n_summary_questions", "parse_failures")
        return {key: row.get(key) for key in keys}

    def score(self, row: dict[str, Any]) -> float | None:
        return row.get("overall")

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]:
        from clinjudge.cef.result import CefResult

        return [
            (q.span[0], q.span[1]) for q in CefResult.model_validate(row).unsupported() if q.span
        ]

    def failures(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Questions the generator or the answerer failed on."""
        return row_failures(row)

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """One line per generated question: side, question, fact, own and cross answers,
        status and span in its own text."""
        return [
            {
                "id": row["id"],
                "judge": self.name,
                "question_id": q["id"],
                "side": q["side"],
                "question": q["question"],
                "fact": q["fact"],
                "own_answer": q["own_answer"],
                "cross_answer": q["cross_answer"],
                "status": q["status"],
                "span": q["span"],
                "detail": q["detail"],
            }
            for q in row.get("questions", [])
        ]


@judge("cef", summary="cross-examination scores: coverage, conformity, consistency, conciseness")
def build(options: BuildOptions) -> CefEvaluator:
    """A CEF judge from ``options`` (module docstring for ``options.options``)."""
    from clinjudge.cef.factory import build_cef
    from clinjudge.cef.scores import TASKS

    opts = check_options("cef", options.options, ("n_source", "n_summary", "task", "layout"))
    counts = {}
    for key in ("n_source", "n_summary"):
        value = opts.get(key, DEFAULT_QUESTIONS)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"cef option {key} must be a whole number ≥ 1 (got {value!r})")
        counts[key] = value
    task = opts.get("task", "summary")
    if task not in TASKS:
        raise ConfigError(f"cef option task must be summary or note (got {task!r})")
    layout = opts.get("layout")  # checked by build_cef
    setup = build_cef(
        options.backend,
        settings=options.settings,
        chat_model=options.chat_model,
        prompt_overrides=options.prompt_overrides,
        knowledge=options.knowledge,
        cache=options.cache,
        layout=layout,
    )
    return CefEvaluator(setup, task=task, **counts)
