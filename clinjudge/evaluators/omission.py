"""What a note leaves out (SPEC §9 "Omissions") as the judge ``omission``: the recall side of
note judging.

An item's ``transcript`` is the visit, its ``note`` the note. The graph
(:mod:`clinjudge.graphs.omission`) lists the visit's clinically relevant facts — offline from
the transcript's knowledge concepts (:mod:`clinjudge.omissions.visit_facts`), on the LLM
backend with the ``omission.visit_facts`` prompt — and marks each ``covered``,
``contradicted`` or ``omitted`` by the note (:mod:`clinjudge.omissions.coverage`, or the
``omission.coverage`` prompt: instructions, the visit's facts, then the note, so the calls
for several systems' notes of one encounter share their prefix up to the note;
``--option omission.layout=note_first`` asks the earlier layout, the note before the facts,
prompt ``omission.coverage_note_first``). Each fact is ``critical`` (red-flag symptom,
allergy, abnormal result, medication change, return precaution) or ``routine``.

Summary, facts pooled over the items judged:

    omission rate           = Σ omitted / Σ facts                     (Wilson 95% interval)
    critical-omission rate  = Σ omitted critical / Σ critical facts   (Wilson 95% interval)
    contradiction rate      = Σ contradicted / Σ facts                (Wilson 95% interval)

Facts of one note are not independent, so the Wilson intervals are narrower than a
note-level resampling would give: ``per_note`` reports the mean of the per-note omission rate
with its bootstrap interval (notes resampled) beside them. An item whose call failed or whose
reply could not be parsed is excluded, counted, and retried by the next run.
``score(row)`` = 1 − omission rate (higher = fewer omissions); the flagged spans are the note
sentences that contradict a fact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from clinjudge.evaluators.base import BaseEvaluator, check_options
from clinjudge.evaluators.registry import judge

if TYPE_CHECKING:
    from clinjudge.datasets.items import Item
    from clinjudge.evaluators.base import BuildOptions
    from clinjudge.grounding.backend import ModelAccess
    from clinjudge.knowledge.base import KnowledgeBase

PROMPTS = ("omission.visit_facts", "omission.coverage")
#: ``--option omission.layout`` → the coverage prompt it asks.
LAYOUTS = {"facts_first": "omission.coverage", "note_first": "omission.coverage_note_first"}
#: (headline metric, numerator count, denominator count)
RATES = (
    ("omission_rate", "n_omitted", "n_facts"),
    ("critical_omission_rate", "n_critical_omitted", "n_critical"),
    ("contradiction_rate", "n_contradicted", "n_facts"),
)


class OmissionEvaluator(BaseEvaluator):
    name = kind = "omission"
    needs_source = True

    def __init__(self, access: ModelAccess, kb: KnowledgeBase | None) -> None:
        from clinjudge.graphs.omission import OmissionContext, build_graph

        super().__init__(access, {})
        self._graph = build_graph()
        prompts = access.prompts if access.caller else [None, None]
        self._context = OmissionContext(kb, access.caller, *prompts)

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        state = {"id": item.id, "transcript": item.transcript, "note": item.note}
        final = await self._graph.ainvoke(state, context=self._context)
        return {**final["row"], "retry": bool(final["row"]["failure"])}

    def score(self, row: dict[str, Any]) -> float | None:
        rate = row.get("omission_rate")
        return None if rate is None else 1.0 - rate

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """Pooled rates with Wilson intervals, the per-note mean with its bootstrap interval,
        counts by category and importance (module docstring)."""
        from clinjudge.metrics.intervals import bootstrap_interval, wilson_interval

        judged = [r for r in rows if r.get("facts") is not None]
        totals = {k: sum(r[k] for r in judged) for _, k, _ in RATES} | {
            d: sum(r[d] for r in judged) for _, _, d in RATES
        }
        headline = {}
        for metric, k, n in RATES:
            value = totals[k] / totals[n] if totals[n] else None
            headline[metric] = {
                "value": value,
                "ci95": list(wilson_interval(totals[k], totals[n])) if totals[n] else None,
                "n": totals[n],
                "excluded_items": len(rows) - len(judged),
            }
        per_note = [r["omission_rate"] for r in judged if r["omission_rate"] is not None]
        return {
            "kind": self.kind,
            "headline": headline,
            "n_items": len(rows),
            "n_judged": len(judged),
            "excluded": len(rows) - len(judged),
            "counts": totals,
            "per_note": {
                "mean_omission_rate": sum(per_note) / len(per_note) if per_note else None,
                "ci95": bootstrap_interval(per_note),
                "n": len(per_note),
            },
            "by_category": _by(judged, "category"),
            "by_importance": _by(judged, "importance"),
        }

    def item_scores(self, row: dict[str, Any]) -> dict[str, Any]:
        keys = [m for m, _, _ in RATES] + ["n_facts", "n_omitted", "n_critical_omitted"]
        return {k: row.get(k) for k in keys}

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]:
        return [
            tuple(f["note_span"])  # type: ignore[misc]
            for f in row.get("facts") or []
            if f["status"] == "contradicted" and f["note_span"][0] >= 0
        ]

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        facts = row.get("facts")
        if facts is None:
            return [{"id": row["id"], "judge": self.name, "failure": row.get("failure")}]
        return [{"id": row["id"], "judge": self.name, "fact": f} for f in facts]


def _by(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, int]]:
    """Facts and omissions per value of ``key`` (category or importance)."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        for f in r["facts"]:
            entry = out.setdefault(f[key], {"facts": 0, "omitted": 0, "contradicted": 0})
            entry["facts"] += 1
            entry["omitted"] += f["status"] == "omitted"
            entry["contradicted"] += f["status"] == "contradicted"
    return dict(sorted(out.items()))


@judge("omission", summary="what the note leaves out of the visit: omission and critical rates")
def build(options: BuildOptions) -> OmissionEvaluator:
    from clinjudge.errors import ConfigError
    from clinjudge.grounding.backend import knowledge_provenance, open_backend
    from clinjudge.knowledge.base import KnowledgeBase

    opts = check_options("omission", options.options, ("layout",))
    layout = str(opts.get("layout", "facts_first"))
    if layout not in LAYOUTS:
        raise ConfigError(f"unknown omission layout {layout!r}: use {' or '.join(LAYOUTS)}")
    access = open_backend(
        options.backend,
        judge="the omission judge",
        settings=options.settings,
        chat_model=options.chat_model,
        cache=options.cache,
        prompt_names=(PROMPTS[0], LAYOUTS[layout]),
        prompt_overrides=options.prompt_overrides,
        known_prompts=(*PROMPTS, LAYOUTS["note_first"]),
    )
    kb = None
    if access.caller is None:
        kb = options.knowledge or KnowledgeBase.default()
        access.provenance["knowledge"] = knowledge_provenance(kb)
        access.provenance["fact_reader"] = "transcript knowledge concepts (omissions.visit_facts)"
    return OmissionEvaluator(access, kb)
