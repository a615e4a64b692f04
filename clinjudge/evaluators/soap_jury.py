"""The SOAP judges graded by a jury (``--judges inference-aware --jury MODEL@URL,…``; issue 39
item 3): one :class:`~clinjudge.evaluators.soap.SoapEvaluator` per juror, every one rating the
same claims (the splitter's, or those the first juror's model cut with ``--claims llm``, or
those given), in flight together, and the row the jury's
(:func:`clinjudge.judges.jury_verdicts.jury_row`: majority of supported / not supported, ties
kept, the verdict of the median-tier juror of the winning side).

Reads as a SOAP judge (the same rates, flips, reports), plus: ``summarize`` adds the ``jury``
block (:func:`clinjudge.metrics.jury.jury_agreement` over the claims: Fleiss' κ, ties, each
juror against the verdict), ``failures`` the jurors' (one per juror and claim without a
verdict), ``provenance`` each juror's model, host, decoding, prompts and usage, ``usage`` their
sum with each juror's under ``jurors``; the jurors are in the identity.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clinjudge.datasets.items import Item
    from clinjudge.evaluators.soap import SoapEvaluator
    from clinjudge.llm_settings import Juror
    from clinjudge.types import NoteReport


class SoapJuryEvaluator:
    """A SOAP judge whose rows are a jury's; it reads them as its first juror's judge does."""

    kind = "soap"
    needs_source = True
    shares_claims = True
    uses_model = True

    def __init__(self, name: str, jurors: list[tuple[Juror, SoapEvaluator]]) -> None:
        self.name = name
        self.jurors = jurors
        self.reader = jurors[0][1]
        self.setup = self.reader.setup

    def identity(self) -> dict[str, Any]:
        jury = [j.identity() for _, j in self.jurors]
        return {**self.reader.identity(), "model": None, "jury": jury}

    def provenance(self) -> dict[str, Any]:
        jury = [
            {
                "juror": juror.name,
                "host": juror.host(),
                **judge.provenance(),
                "usage": judge.usage(),
            }
            for juror, judge in self.jurors
        ]
        return {**self.reader.provenance(), "model": None, "base_url": None, "jury": jury}

    def usage(self) -> dict[str, Any] | None:
        from clinjudge.llm_usage import total_usage

        own = {j.name: e.setup.caller.usage for j, e in self.jurors if e.setup.caller}
        return {
            **total_usage(own.values()).as_dict(),
            "jurors": {n: u.as_dict() for n, u in own.items()},
        }

    async def evaluate(self, item: Item, given: list[dict] | None = None, progress=None) -> dict:  # noqa: ANN001
        from clinjudge.judges.jury_verdicts import jury_row

        (_, first), *others = self.jurors
        if given is None and getattr(first.setup.extractor, "method", "") == "llm":
            lead = await first.evaluate(item)  # the model cuts the claims: once, the first's
            given = lead["claims"]
            found = [lead, *await asyncio.gather(*(j.evaluate(item, given) for _, j in others))]
        else:  # given claims, or the splitter's (the same for every juror): all at once
            found = await asyncio.gather(*(j.evaluate(item, given) for _, j in self.jurors))
        rows = {j.name: r for (j, _), r in zip(self.jurors, found, strict=True)}
        row = {"id": item.id, **jury_row(rows)}
        return {**row, "retry": bool(row["failures"] or row["juror_failures"])}

    def planned_prompts(self, item: Item) -> tuple[list[str], str] | None:
        plans = [judge.planned_prompts(item) for _, judge in self.jurors]
        prompts = [p for plan in plans if plan for p in plan[0]]
        return (prompts, f"each juror's; {plans[0][1]}") if plans[0] else None

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        from clinjudge.judges.jury_verdicts import claim_subjects
        from clinjudge.metrics.jury import jury_agreement

        subjects = [s for r in rows for s in claim_subjects(r)]
        names = [j.name for j, _ in self.jurors]
        return {**self.reader.summarize(rows), "jury": jury_agreement(subjects, names)}

    def report(self, row: dict[str, Any]) -> NoteReport:
        return self.reader.report(row)

    def item_scores(self, row: dict[str, Any]) -> dict[str, Any]:
        return {**self.reader.item_scores(row), "ties": row.get("ties", 0)}

    def score(self, row: dict[str, Any]) -> float | None:
        return self.reader.score(row)

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]:
        return self.reader.flagged_spans(row)

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        return [{**line, "judge": self.name} for line in self.reader.verdict_lines(row)]

    def failures(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Each juror's claim without a verdict (a claim no juror voted on is excluded from the
        rates as every failure is, and counted once per juror here)."""
        return list(row.get("juror_failures") or [])
