"""The omission judge's LLM replies (prompts ``omission.visit_facts`` and ``omission.coverage``)
and how they become facts and statuses.

A fact whose quote the transcript does not contain keeps no span (``spans`` empty): it is
reported, not dropped, since the model may paraphrase. A category or importance outside the
allowed values makes the reply a parse failure (pydantic), never a guess. The coverage reply
must give a status for every fact it was asked about; a fact left out is a parse failure of
the whole reply, and an id it was not asked about is ignored.
"""

from __future__ import annotations

from pydantic import BaseModel

from clinjudge.grounding.quotes import locate_quote
from clinjudge.omissions.coverage import FactCoverage, Status
from clinjudge.omissions.fact import Category, Importance, VisitFact


class ReplyFact(BaseModel):
    fact: str
    category: Category
    importance: Importance
    quote: str = ""


class FactsReply(BaseModel):
    facts: list[ReplyFact]


class ReplyStatus(BaseModel):
    id: str
    status: Status
    quote: str = ""


class CoverageReply(BaseModel):
    facts: list[ReplyStatus]


def facts_from_reply(reply: FactsReply, transcript: str) -> list[VisitFact]:
    """The reply's facts, numbered ``f1`` …, each located by its quote."""
    out = []
    for i, f in enumerate(reply.facts, start=1):
        where = locate_quote(transcript, f.quote) if f.quote.strip() else None
        spans = ((where.start, where.end),) if where is not None and where.start >= 0 else ()
        critical = f.importance == "critical"
        out.append(
            VisitFact(
                id=f"f{i}",
                category=f.category,
                text=f.fact,
                importance=f.importance,
                polarity="denied" if f.fact.lower().startswith(("no ", "denies")) else "affirmed",
                quote=f.quote,
                spans=spans,
                surface=f.fact,
                why_critical=f.category if critical else "",
            )
        )
    return out


def facts_listing(facts: list[VisitFact]) -> str:
    """The numbered fact list the coverage prompt shows."""
    return "\n".join(f"{f.id}: {f.text}" for f in facts)


def missing_ids(reply: CoverageReply, facts: list[VisitFact]) -> list[str]:
    """Ids of facts the reply gives no status for."""
    given = {s.id for s in reply.facts}
    return [f.id for f in facts if f.id not in given]


def coverage_from_reply(
    reply: CoverageReply, facts: list[VisitFact], note: str
) -> list[FactCoverage]:
    """Each fact's status from the reply, its note span located by the quote."""
    by_id = {s.id: s for s in reply.facts}
    out = []
    for fact in facts:
        given = by_id[fact.id]
        where = locate_quote(note, given.quote) if given.quote.strip() else None
        start, end = (where.start, where.end) if where is not None else (-1, -1)
        why = f"the model found {given.quote!r}" if given.quote.strip() else "the model found none"
        if given.status == "omitted":
            start, end, why = -1, -1, "the model found nothing in the note"
        out.append(FactCoverage(fact, given.status, start, end, why))
    return out
