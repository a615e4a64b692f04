"""The pairwise judge of ``clinjudge arena`` (SPEC §6, issue 25), offline or on an LLM.

Not a note judge of ``compare`` (it is not registered with :func:`~clinjudge.evaluators.
registry.judge`): its item is a *pair* — the two texts of one encounter, by their item ids in
``item.meta["a"]`` and ``item.meta["b"]``; ``item.transcript`` is their source. Its graph
(:mod:`clinjudge.graphs.pairwise`) asks both orders:

- **offline**, it reads the evidence the other judges found in each text
  (:meth:`PairwiseEvaluator.use_evidence`: the offline inference-aware SOAP judge and the
  offline omission judge, run over every text first) and applies the rules of
  :mod:`clinjudge.arena.preference`;
- **on an LLM**, it asks the ``pairwise.compare`` prompt once per order with every criterion
  of the run (two calls per pair), the texts given by :meth:`PairwiseEvaluator.use_texts`.

``--option pairwise.criteria=safety,completeness`` picks and orders the criteria (default:
relevance, completeness, safety, ethics, clarity); overall is always asked. A row: per
criterion and overall, the combined ``outcomes`` (``a``, ``b``, ``draw``), each order's
verdicts, whether a verdict followed the position, and what decided each (the measure
offline, the model's reason on an LLM); a pair that could not be judged (a text the other
judges could not judge, a failed call, a reply naming no winner) is a failure, retried by the
next run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from clinjudge.evaluators.base import row_failures

if TYPE_CHECKING:
    from clinjudge.arena.evidence import TextEvidence
    from clinjudge.datasets.items import Item
    from clinjudge.evaluators.base import BuildOptions
    from clinjudge.grounding.backend import ModelAccess

#: The judges whose rows the offline pairwise judge reads, by their names in the run.
EVIDENCE_JUDGES = ("inference-aware", "omission")
PROMPTS = ("pairwise.compare",)


class PairwiseEvaluator:
    name = kind = "pairwise"
    needs_source = True
    shares_claims = False

    def __init__(self, access: ModelAccess | None = None, criteria: tuple[str, ...] = ()) -> None:
        from clinjudge.arena.preference import CRITERIA
        from clinjudge.graphs.pairwise import PairwiseContext, build_graph

        self.access = access
        self.criteria = criteria or CRITERIA
        self._graph = build_graph()
        self._evidence: dict[str, TextEvidence | None] = {}
        self._texts: dict[str, str] = {}
        caller = access.caller if access else None
        self._context = PairwiseContext(
            evidence_of=self._evidence.get,
            criteria=self.criteria,
            caller=caller,
            prompt=access.prompt(PROMPTS[0]) if caller and access else None,
        )

    @property
    def uses_model(self) -> bool:
        return self._context.caller is not None

    def use_evidence(self, evidence: Mapping[str, TextEvidence | None]) -> None:
        """The evidence of every text, by item id (``None``: its judging failed)."""
        self._evidence.clear()
        self._evidence.update(evidence)

    def use_texts(self, texts: Mapping[str, str]) -> None:
        """Every text by item id (what the LLM backend shows the model)."""
        self._texts.clear()
        self._texts.update(texts)

    def identity(self) -> dict[str, Any]:
        from clinjudge import __version__
        from clinjudge.arena.preference import RULES_VERSION
        from clinjudge.evaluators.base import model_identity

        if self.uses_model and self.access is not None:
            return model_identity(
                self.access.provenance,
                criteria=list(self.criteria),
                package_version=__version__,
            )
        return {
            "backend": "offline",
            "rules": RULES_VERSION,
            "criteria": list(self.criteria),
            "evidence_from": list(EVIDENCE_JUDGES),
            "package_version": __version__,
        }

    def provenance(self) -> dict[str, Any]:
        from clinjudge.arena.preference import RULES

        if self.uses_model and self.access is not None:
            from clinjudge.grounding.backend import with_output_modes

            found = {**self.access.provenance, "criteria": list(self.criteria)}
            return with_output_modes(found, self._context.caller)
        measures = {
            c: [
                {"measure": m.name, "higher_is_better": m.higher_is_better, "margin": m.margin}
                for m in RULES[c]
            ]
            for c in self.criteria
        }
        return {
            **self.identity(),
            "measures": measures,
            "overall": "the text winning more criteria than it loses",
        }

    def usage(self) -> dict[str, int] | None:
        caller = self._context.caller
        return caller.usage.as_dict() if caller else None

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        from clinjudge.runner import RECURSION_LIMIT

        a, b = item.meta["a"], item.meta["b"]
        state: dict[str, Any] = {"id": item.id, "a": a, "b": b}
        if self.uses_model:
            state |= {
                "source": item.transcript,
                "text_a": self._texts.get(a, ""),
                "text_b": self._texts.get(b, ""),
            }
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


def build_pairwise(options: BuildOptions) -> PairwiseEvaluator:
    """The pairwise judge on ``options.backend`` with ``options.options["criteria"]`` (a
    comma-separated list, default all five).

    Raises:
        ConfigError: an unknown option or criterion, a criterion named twice, a backend that
            cannot be resolved.
    """
    from clinjudge.arena.preference import CRITERIA
    from clinjudge.errors import ConfigError
    from clinjudge.evaluators.base import check_options
    from clinjudge.grounding.backend import open_backend

    opts = check_options("pairwise", options.options, ("criteria",))
    names = [c.strip() for c in str(opts.get("criteria", ",".join(CRITERIA))).split(",")]
    names = [c for c in names if c]
    if unknown := [c for c in names if c not in CRITERIA]:
        raise ConfigError(f"unknown pairwise criterion {unknown[0]!r}: use {', '.join(CRITERIA)}")
    if not names or len(set(names)) != len(names):
        raise ConfigError("pairwise.criteria must name distinct criteria, at least one")
    access = open_backend(
        options.backend,
        judge="the pairwise judge",
        settings=options.settings,
        chat_model=options.chat_model,
        cache=options.cache,
        prompt_names=PROMPTS,
        prompt_overrides=options.prompt_overrides,
    )
    return PairwiseEvaluator(access, tuple(names))
