"""The pairwise judge of ``clinjudge arena`` (SPEC §6, issue 25), offline backend.

Not a note judge of ``compare`` (it is not registered with :func:`~clinjudge.evaluators.
registry.judge`): its item is a *pair* — the two texts of one encounter, by their item ids in
``item.meta["a"]`` and ``item.meta["b"]``. Its graph (:mod:`clinjudge.graphs.pairwise`) reads
the evidence the other judges found in each text (:meth:`PairwiseEvaluator.use_evidence`:
the offline inference-aware SOAP judge and the offline omission judge, run over every text
first) and asks both orders. A row: per criterion and overall, the combined ``outcomes``
(``a``, ``b``, ``draw``), each order's verdicts, whether a verdict followed the position, and
the measure that decided each; a pair whose text the other judges could not judge is a
failure, retried by the next run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from clinjudge.evaluators.base import row_failures

if TYPE_CHECKING:
    from clinjudge.arena.evidence import TextEvidence
    from clinjudge.datasets.items import Item

#: The judges whose rows the offline pairwise judge reads, by their names in the run.
EVIDENCE_JUDGES = ("inference-aware", "omission")


class PairwiseEvaluator:
    name = kind = "pairwise"
    needs_source = True
    shares_claims = False

    def __init__(self) -> None:
        from clinjudge.graphs.pairwise import PairwiseContext, build_graph

        self._graph = build_graph()
        self._evidence: dict[str, TextEvidence | None] = {}
        self._context = PairwiseContext(evidence_of=self._evidence.get)

    def use_evidence(self, evidence: Mapping[str, TextEvidence | None]) -> None:
        """The evidence of every text, by item id (``None``: its judging failed)."""
        self._evidence.clear()
        self._evidence.update(evidence)

    def identity(self) -> dict[str, Any]:
        from clinjudge import __version__
        from clinjudge.arena.preference import CRITERIA, RULES_VERSION

        return {
            "backend": "offline",
            "rules": RULES_VERSION,
            "criteria": list(CRITERIA),
            "evidence_from": list(EVIDENCE_JUDGES),
            "package_version": __version__,
        }

    def provenance(self) -> dict[str, Any]:
        from clinjudge.arena.preference import RULES

        return {
            **self.identity(),
            "measures": {
                c: [{"measure": m.name, "higher_is_better": m.higher_is_better, "margin": m.margin}
                    for m in measures]
                for c, measures in RULES.items()
            },
            "overall": "the text winning more criteria than it loses",
        }  # fmt: skip

    def usage(self) -> dict[str, int] | None:
        return None

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        from clinjudge.runner import RECURSION_LIMIT

        state = {"id": item.id, "a": item.meta["a"], "b": item.meta["b"]}
        final = await self._graph.ainvoke(
            state, context=self._context, config={"recursion_limit": RECURSION_LIMIT}
        )
        row = final["row"]
        return {**row, "encounter": item.meta["encounter"], "retry": bool(row["failure"])}

    def failures(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        return row_failures(row)

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        judged = [r for r in rows if r.get("outcomes")]
        return {"kind": self.kind, "n_pairs": len(rows), "n_judged": len(judged)}
