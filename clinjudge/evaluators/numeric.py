"""MedCalc-style numeric answers (SPEC §7) as the judge ``numeric``.

An item's ``note`` is a model's answer to a calculation question (``transcript``: the patient
note, optional; ``meta["question"]``: the question, optional); ``meta["truth"]`` is the ground
truth and ``meta["output_type"]`` (``decimal``, ``integer``, ``date``) its type (MedCalc-Bench's
column names work too: :data:`COLUMNS`). The judge reads
the answer's final value — offline by :func:`clinjudge.judges.numeric_answer.find_answer`, on
the LLM backend by the ``numeric.final_answer`` prompt — and checks it
(:func:`clinjudge.metrics.numeric.answer_correct`):

    continuous (decimal, or a truth with a fraction when no type is given):
        correct ⇔ |answer − truth| ≤ rel_tol · |truth|  (rel_tol 0.05; truth 0: |answer| ≤ 0.05)
    discrete (integer, date, weeks and days): correct ⇔ exact match

The graph (:mod:`clinjudge.graphs.numeric`) reads the value, then checks it or records why the
judge could not read it.

An answer that gives no value is wrong; a judge call that fails or cannot be parsed leaves the
item unjudged (``correct`` null) and excluded from the accuracy, which says how many it excludes.
Options: ``rel_tol``, ``zero_abs_tol``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clinjudge.evaluators.base import BaseEvaluator, check_options
from clinjudge.evaluators.registry import judge

if TYPE_CHECKING:
    from clinjudge.datasets.items import Item
    from clinjudge.evaluators.base import BuildOptions
    from clinjudge.grounding.backend import ModelAccess

PROMPT = "numeric.final_answer"


class NumericEvaluator(BaseEvaluator):
    name = kind = "numeric"
    needs_source = False

    def __init__(self, access: ModelAccess, options: dict[str, Any]) -> None:
        from clinjudge.graphs.numeric import NumericContext, build_graph

        super().__init__(access, options)
        self._graph = build_graph()
        self._context = NumericContext(
            access.caller,
            access.prompt(PROMPT) if access.caller else None,
            float(self.options["rel_tol"]),
            float(self.options["zero_abs_tol"]),
        )

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        from clinjudge.errors import ConfigError
        from clinjudge.judges.numeric_answer import target_kind

        if self.missing(item) is not None:
            names = ", ".join(COLUMNS["truth"])
            raise ConfigError(f"item {item.id}: the numeric judge needs a 'truth' column ({names})")
        truth = str(_field(item, "truth")).strip()
        output_type = str(_field(item, "output_type") or "").lower() or None
        kind = target_kind(truth, output_type)
        continuous = kind == "number" and (
            output_type == "decimal" if output_type else "." in truth
        )
        state = {
            "id": item.id,
            "question": str(_field(item, "question") or ""),
            "answer_text": item.note,
            "truth": truth,
            "kind": kind,
            "continuous": continuous,
        }
        final = await self._graph.ainvoke(state, context=self._context)
        return {**final["row"], "retry": bool(final["row"]["failure"])}

    def missing(self, item: Item) -> str | None:
        """What the item lacks to be judged: its truth."""
        if str(_field(item, "truth") or "").strip():
            return None
        return f"truth (a {', '.join(COLUMNS['truth'])} column)"

    def score(self, row: dict[str, Any]) -> float | None:
        return None if row["correct"] is None else float(row["correct"])

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """Accuracy = correct / judged items with its Wilson 95% interval; excluded = items
        whose judge call failed; how each value was read."""
        from clinjudge.metrics.intervals import wilson_interval

        judged = [r for r in rows if r["correct"] is not None]
        correct = sum(1 for r in judged if r["correct"])
        accuracy = correct / len(judged) if judged else None
        ci = list(wilson_interval(correct, len(judged)))
        read: dict[str, int] = {}
        for r in judged:
            how = (r["answer"] or {}).get("how", "none")
            read[how] = read.get(how, 0) + 1
        headline = {"accuracy": {"value": accuracy, "ci95": ci, "n": len(judged)}}
        return {
            "kind": self.kind,
            "headline": headline,
            "n_items": len(rows),
            "n_correct": correct,
            "excluded": len(rows) - len(judged),
            "read_by": read,
            "tolerance": {k: self.options[k] for k in ("rel_tol", "zero_abs_tol")},
        }

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]:
        answer = row.get("answer") or {}
        if row["correct"] is not False or answer.get("start", -1) < 0:
            return []
        return [(answer["start"], answer["end"])]

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"id": row["id"], "judge": self.name, **{k: v for k, v in row.items() if k != "id"}}
        ]


#: Columns read from ``item.meta``, by the names this judge documents and MedCalc-Bench's.
COLUMNS = {
    "truth": ("truth", "ground_truth", "Ground Truth Answer"),
    "output_type": ("output_type", "Output Type"),
    "question": ("question", "Question"),
}


def _field(item: Item, name: str) -> object:
    return next((item.meta[k] for k in COLUMNS[name] if item.meta.get(k) not in (None, "")), None)


@judge("numeric", summary="MedCalc-style final answers: within 5% of the truth, or exact")
def build(options: BuildOptions) -> NumericEvaluator:
    from clinjudge.grounding.backend import open_backend
    from clinjudge.metrics.numeric import REL_TOL, ZERO_ABS_TOL

    given = check_options("numeric", options.options, ("rel_tol", "zero_abs_tol"))
    settings = {"rel_tol": REL_TOL, "zero_abs_tol": ZERO_ABS_TOL, **given}
    access = open_backend(
        options.backend,
        judge="the numeric judge",
        settings=options.settings,
        chat_model=options.chat_model,
        cache=options.cache,
        prompt_names=(PROMPT,),
        prompt_overrides=options.prompt_overrides,
    )
    return NumericEvaluator(access, settings)
