"""The CLI's per-claim table (DESIGN "Users", job 1): one row per claim with its tier (SPEC §1),
verdict, text, evidence spans and the knowledge entries used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from clinjudge.report.formatting import truncate

CLAIM_WIDTH = 70
EVIDENCE_WIDTH = 60
KNOWLEDGE_WIDTH = 40


def render_claim_table(
    claims: Sequence[Mapping[str, Any] | Any], title: str | None = None
) -> Table:
    """A rich table with columns id, section, tier, verdict, claim, why, evidence, knowledge.

    Each claim is a dict (or a pydantic model) with keys ``id, text, section, tier, supported,
    subtype, evidence, knowledge`` and, for a claim that could not be judged (``tier`` None),
    ``failure`` — its reason is shown in the evidence column. The caption counts verdicts.
    """
    table = Table(title=title, show_lines=False, header_style="bold")
    table.add_column("id", no_wrap=True)
    table.add_column("section", no_wrap=True)
    table.add_column("tier", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("claim")
    table.add_column("why")
    table.add_column("evidence")
    table.add_column("knowledge")
    counts = {"supported": 0, "hallucinated": 0, "not judged": 0}
    for raw in claims:
        claim = raw.model_dump() if hasattr(raw, "model_dump") else dict(raw)
        verdict = _verdict(claim)
        counts[verdict.plain] += 1
        table.add_row(
            str(claim.get("id", "")),
            str(claim.get("section") or ""),
            _tier(claim),
            verdict,
            truncate(claim.get("text") or "", CLAIM_WIDTH),
            truncate(claim.get("rationale") or "", CLAIM_WIDTH),
            _evidence(claim),
            _knowledge(claim.get("knowledge") or []),
        )
    table.caption = (
        f"{len(claims)} claims: {counts['supported']} supported, "
        f"{counts['hallucinated']} hallucinated, {counts['not judged']} not judged"
    )
    return table


def _tier(claim: dict[str, Any]) -> str:
    tier = claim.get("tier")
    if tier is None:
        return "—"
    subtype = claim.get("subtype")
    return f"{tier} ({subtype})" if subtype else str(tier)


def _verdict(claim: dict[str, Any]) -> Text:
    if claim.get("tier") is None:
        return Text("not judged", style="yellow")
    if claim.get("supported"):
        return Text("supported", style="green")
    return Text("hallucinated", style="bold red")


def _evidence(claim: dict[str, Any]) -> Text:
    if claim.get("tier") is None:
        return Text(truncate(failure_text(claim.get("failure")), EVIDENCE_WIDTH), style="yellow")
    spans = [e for e in claim.get("evidence") or [] if isinstance(e, Mapping)]
    quoted = "; ".join(
        f'{"" if e.get("source", "transcript") == "transcript" else "note: "}"{e.get("text", "")}"'
        for e in spans
    )
    return Text(truncate(quoted, EVIDENCE_WIDTH) if quoted else "—")


def _knowledge(entries: Sequence[Any]) -> str:
    names = []
    for entry in entries:
        if isinstance(entry, Mapping):
            preferred, concept = entry.get("preferred", ""), entry.get("concept_id", "")
            names.append(f"{preferred} [{concept}]" if concept else str(preferred))
        else:
            names.append(str(entry))
    return truncate(", ".join(names), KNOWLEDGE_WIDTH) if names else "—"


def failure_text(failure: object) -> str:
    """A claim's failure as a reader wants it: ``call failed: <reason>`` or ``reply
    unreadable: <reason>``, never a dict."""
    if not isinstance(failure, Mapping):
        return f"not judged: {failure or 'unknown failure'}"
    what = "call failed" if failure.get("kind") == "error" else "reply unreadable"
    return f"{what}: {failure.get('reason') or 'no reason given'}"
