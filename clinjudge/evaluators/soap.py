"""The SOAP-note judges (SPEC §1) as :class:`~clinjudge.evaluators.base.Evaluator`: ``lexical``
and ``inference-aware``, on the offline or the LLM backend.

A row is the note's :class:`~clinjudge.types.NoteReport` (plus the extraction record) under the
item's ``id``. ``score`` = 1 − hallucination rate (tier 4–5 claims / judged claims); the flagged
spans are the note spans of the tier 4–5 claims. ``evaluate(item, given=claims)`` makes the
judge rate claims cut by another judge, so that several judges rate the same claim ids.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from clinjudge.evaluators.base import row_failures
from clinjudge.evaluators.registry import judge

if TYPE_CHECKING:
    from clinjudge.datasets.items import Item
    from clinjudge.evaluators.base import BuildOptions
    from clinjudge.graphs.soap_judge import ClaimProgress
    from clinjudge.judges.factory import JudgeSetup
    from clinjudge.types import Mode, NoteReport


#: Validated reports kept per judge (the rows of one run, typically).
REPORTS_HELD = 10_000


class SoapEvaluator:
    kind = "soap"
    needs_source = True
    shares_claims = True

    def __init__(self, name: str, setup: JudgeSetup, *, batch_size: int = 8) -> None:
        """``batch_size`` claims share one model call on the LLM backend."""
        from clinjudge.graphs.soap_judge import JudgeContext, build_graph

        self.name = name
        self.setup = setup
        self._reports: dict[int, tuple[dict[str, Any], NoteReport]] = {}
        self._graph = build_graph()
        self._context = JudgeContext(
            verifier=setup.verifier, extractor=setup.extractor, batch_size=batch_size
        )

    def identity(self) -> dict[str, Any]:
        p = self.setup.provenance
        return {
            "backend": p.backend,
            "mode": p.mode,
            "model": p.model,
            "decoding": p.decoding,
            "prompts": [ref.sha256 for ref in p.prompts],
            "knowledge": p.knowledge.get("digest"),
            "verifier": p.verifier,
            "package_version": p.package_version,
        }

    def provenance(self) -> dict[str, Any]:
        from clinjudge.grounding.backend import with_output_modes

        return with_output_modes(self.setup.provenance.model_dump(mode="json"), self.setup.caller)

    def usage(self) -> dict[str, int] | None:
        return self.setup.caller.usage.as_dict() if self.setup.caller else None

    @property
    def uses_model(self) -> bool:
        return self.setup.caller is not None

    async def evaluate(
        self, item: Item, given: list[dict] | None = None, progress: ClaimProgress | None = None
    ) -> dict[str, Any]:
        """The note's row; ``progress`` is told how many claims there are and as they are
        judged."""
        from clinjudge.runner import RECURSION_LIMIT

        state: dict[str, Any] = {
            "note_id": item.id,
            "transcript": item.transcript,
            "note": item.note,
        }
        if given:
            state["claims"] = given
        context = self._context
        if progress is not None:
            context = dataclasses.replace(context, progress=progress)
        final = await self._graph.ainvoke(
            state, context=context, config={"recursion_limit": RECURSION_LIMIT}
        )
        report = final["report"]
        # a call that failed or a reply that could not be read: judged again by the next run
        return {"id": item.id, **report, "retry": bool(report.get("failures"))}

    def planned_prompts(self, item: Item) -> tuple[list[str], str] | None:
        """The prompts a run would send for ``item`` and what they leave out (for ``compare
        --dry-run``), built as the graph builds them -- the splitter's claims in batches of the
        verifier's size, each batch's first ask -- with no call; ``None`` offline. With
        ``--claims llm`` the extraction prompt is counted and the splitter's claims stand in
        for the model's."""
        verifier = self.setup.verifier
        if self.setup.caller is None or not hasattr(verifier, "planned"):
            return None
        from clinjudge.grounding.note_input import NoteInput
        from clinjudge.text.claims import split_claims

        note = NoteInput(item.transcript, item.note)
        prompts: list[str] = []
        extractor = self.setup.extractor
        if getattr(extractor, "method", "") == "llm":
            from clinjudge.judges.extraction import ExtractedClaims

            schema = ExtractedClaims.model_json_schema()
            prompts.append(
                self.setup.caller.rendered(extractor.prompt, {"note": note.note_text}, schema)
            )
        claims = split_claims(note.note)
        size = max(1, getattr(verifier, "claims_per_batch", self._context.batch_size))
        for i in range(0, len(claims), size):
            prompts += verifier.planned(claims[i : i + size], note)
        return prompts, "re-asks of unreadable replies are not foreseen"

    def report(self, row: dict[str, Any]) -> NoteReport:
        """The row as a :class:`~clinjudge.types.NoteReport`, validated once per row: summary,
        scores, flags and verdict lines all read it (the row is held with its report, so an
        entry is never served for another row)."""
        from clinjudge.types import NoteReport

        held = self._reports.get(id(row))
        if held is not None and held[0] is row:
            return held[1]
        report = NoteReport.model_validate({k: v for k, v in row.items() if k != "extraction"})
        self._reports[id(row)] = (row, report)
        while len(self._reports) > REPORTS_HELD:
            self._reports.pop(next(iter(self._reports)))
        return report

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """:func:`~clinjudge.judges.compare.judge_summary` of the notes, with the headline
        pooled hallucination rate and its Wilson interval."""
        from clinjudge.judges.compare import judge_summary

        summary = judge_summary([self.report(r) for r in rows])
        headline = {
            "hallucination_rate": {
                "value": summary["hallucination_rate"],
                "ci95": summary["ci95"],
                "n": summary["n_claims"],
            },
            "major_rate": {
                "value": summary["major_rate"],
                "ci95": summary["major_ci95"],
                "n": summary["n_claims"],
            },
        }
        return {"kind": self.kind, "headline": headline, **summary}

    def item_scores(self, row: dict[str, Any]) -> dict[str, Any]:
        report = self.report(row)
        return {
            "hallucination_rate": report.hallucination_rate,
            "n_claims": report.n_judged,
            "n_hallucinated": report.n_hallucinated,
            "major_rate": report.major_rate,
            "excluded": report.parse_failures + report.errors,
        }

    def score(self, row: dict[str, Any]) -> float | None:
        rate = self.report(row).hallucination_rate
        return None if rate is None else 1.0 - rate

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]:
        report = self.report(row)
        flagged = {v.claim_id for v in report.verdicts if not v.supported}
        return [(c.start, c.end) for c in report.claims if c.id in flagged]

    def failures(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Claims left without a verdict: call errors and unreadable replies."""
        return row_failures(row)

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """``judge --json`` claim fields, the note's ``id`` and the claim id as ``claim_id``."""
        from clinjudge.judges.note_report import claim_rows

        lines = []
        for claim in claim_rows(self.report(row)):
            claim_id = claim.pop("id")
            lines.append({"id": row["id"], "judge": self.name, "claim_id": claim_id, **claim})
        return lines


#: ``--option`` keys of the SOAP judges: how claims are cut (``claims``: auto, split, llm), how the
#: LLM backend asks (``protocol``: batch, claim, claim-shared), claims per call (``batch_size``),
#: the offline judge's attribution rule (``attribution``: true/false; off by default, issue 36) and
#: its combiner's flagging threshold (``combiner_threshold``: a number in (0, 1); higher flags less
#: and more precisely).
SOAP_OPTIONS = ("claims", "protocol", "batch_size", "attribution", "combiner_threshold")


def _build(name: str, mode: Mode, options: BuildOptions) -> SoapEvaluator:
    from clinjudge.errors import ConfigError
    from clinjudge.evaluators.base import check_options
    from clinjudge.judges.factory import build_judge
    from clinjudge.judges.offline import OfflineConfig

    opts = check_options(name, options.options, SOAP_OPTIONS)
    given = opts.get("attribution", False)
    attribution = {"true": True, "false": False}.get(str(given).lower(), given)
    if not isinstance(attribution, bool):
        raise ConfigError(f"{name}.attribution must be true or false, got {given!r}")
    threshold = opts.get("combiner_threshold")
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0 < threshold < 1
    ):
        raise ConfigError(
            f"{name}.combiner_threshold must be a number between 0 and 1, got {threshold!r}"
        )
    batch_size = opts.get("batch_size", 8)
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"{name}.batch_size must be a whole number ≥ 1, got {batch_size!r}")
    if options.jury:  # one SOAP judge per juror, each on its model (evaluators/soap_jury.py)
        from clinjudge.evaluators.soap_jury import SoapJuryEvaluator
        from clinjudge.grounding.backend import check_jury_backend
        from clinjudge.llm import LLMSettings
        from clinjudge.llm_settings import parse_jury

        check_jury_backend(options.backend)
        base = options.settings or LLMSettings()
        seats = [
            (j, _build(name, mode, replace(options, jury=(), settings=j.settings(base))))
            for j in parse_jury(options.jury)
        ]
        return SoapJuryEvaluator(name, seats)
    setup = build_judge(
        mode,
        options.backend,
        settings=options.settings,
        chat_model=options.chat_model,
        prompt_overrides={
            k: v for k, v in options.prompt_overrides.items() if k.startswith("soap.")
        },
        knowledge=options.knowledge,
        cache=options.cache,
        claims=str(options.options.get("claims", "auto")),
        protocol=str(opts.get("protocol", "batch")),
        offline=OfflineConfig(
            dense=mode != "lexical",
            attribution=attribution,
            combiner_threshold=None if threshold is None else float(threshold),
        ),
    )
    if setup.caller is not None:
        per_claim = str(setup.provenance.verifier.get("protocol", "")).startswith("claim")
        per_call = 1 if per_claim else batch_size
        setup.provenance.verifier["claims_per_call"] = per_call
    return SoapEvaluator(name, setup, batch_size=batch_size)


@judge("lexical", summary="SOAP claims supported only where the transcript states them", jury=True)
def build_lexical(options: BuildOptions) -> SoapEvaluator:
    return _build("lexical", "lexical", options)


@judge(
    "inference-aware",
    summary="SOAP claims, with synonyms, trade/generic names and clinical inference; "
    "rates the claims of the first SOAP judge listed",
    jury=True,
)
def build_inference_aware(options: BuildOptions) -> SoapEvaluator:
    return _build("inference-aware", "inference-aware", options)
