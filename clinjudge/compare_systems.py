"""Systems side by side: each judge's numbers per system and paired differences between
systems over the same encounters (a dataset of several systems' notes,
:mod:`clinjudge.datasets.systems`).

Per judge and system *s*: the judge's own summary over *s*'s notes alone
(``judge.summarize``: for a SOAP judge the claim-pooled hallucination and major rates with
their Wilson intervals; for CEF the mean scores with bootstrap intervals …), its headline kept.

Per judge and pair of systems (*a*, *b*), over the encounters *E* where both have a judged note:

    d_e = m(a, e) − m(b, e)        mean difference  d̄ = (1/|E|) Σ_e d_e

with a percentile bootstrap 95% interval over encounters (2,000 resamples, seed 0; none below
:data:`~clinjudge.metrics.intervals.MIN_BOOTSTRAP_UNITS` encounters: "n too small"). ``m`` is
the note's hallucination rate for a SOAP judge (lower is better; a note with no judged claim
is left out) and the judge's item score otherwise (``judge.score``: higher is better). An
interval that excludes 0 separates the two systems on that judge.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from clinjudge.datasets.items import Item
from clinjudge.evaluators.base import Evaluator
from clinjudge.metrics.intervals import TOO_FEW, bootstrap_interval


def system_rates(
    judges: dict[str, Evaluator], rows: dict[str, list[dict]], items: list[Item]
) -> dict[str, Any]:
    """``{"systems": [...], "by_system": {judge: {system: headline}}, "pairs": [...]}`` (module
    docstring); ``{}`` when the items come from one system."""
    system_of = {i.id: str(i.meta["system"]) for i in items if "system" in i.meta}
    encounter_of = {i.id: str(i.meta.get("encounter", i.id)) for i in items}
    systems = list(dict.fromkeys(system_of.values()))
    if len(systems) < 2:
        return {}
    by_system: dict[str, dict[str, Any]] = {}
    pairs: list[dict[str, Any]] = []
    for name, judge in judges.items():
        per = {s: [r for r in rows[name] if system_of.get(r["id"]) == s] for s in systems}
        by_system[name] = {
            s: {"n_notes": len(per[s]), **(judge.summarize(per[s]).get("headline") or {})}
            for s in systems
            if per[s]
        }
        measure = _measure(judge)
        values = {
            s: {encounter_of[r["id"]]: v for r in per[s] if (v := measure(r)) is not None}
            for s in systems
        }
        for a, b in combinations(systems, 2):
            shared = [e for e in values[a] if e in values[b]]
            diffs = [values[a][e] - values[b][e] for e in shared]
            ci = bootstrap_interval(diffs)
            pairs.append(
                {
                    "judge": name,
                    "a": a,
                    "b": b,
                    "measure": _measure_name(judge),
                    "n_encounters": len(shared),
                    "mean_difference": sum(diffs) / len(diffs) if diffs else None,
                    "ci95": ci,
                    "note": None if ci is not None or not diffs else TOO_FEW,
                }
            )
    return {"systems": systems, "by_system": by_system, "pairs": pairs}


def _measure(judge: Evaluator):
    if judge.kind == "soap":
        return lambda row: judge.item_scores(row).get("hallucination_rate")
    return judge.score


def _measure_name(judge: Evaluator) -> str:
    return "hallucination rate (lower is better)" if judge.kind == "soap" else "score"
