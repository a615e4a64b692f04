"""Offline grading of a rubric's fact criteria by the omission judge's reading (issue 39 item 4).

A criterion ``fact: "<wording>"`` is read as a visit fact (:class:`~clinjudge.omissions.fact.
VisitFact`) and checked against the note by :func:`clinjudge.omissions.coverage.check_fact`,
the same reading that gives the omission judge its ``covered`` / ``contradicted`` /
``omitted``:

    kind documents   : met ⇔ the fact is covered by the note
    kind contradicts : met ⇔ the note contradicts the fact

The wording becomes a fact in this order: (1) the visit fact of the transcript
(:func:`~clinjudge.omissions.visit_facts.visit_facts`) with the same wording; (2) a visit fact
naming the same knowledge concept with the same polarity (``no chest pain`` is denied) — its
dose fact when the wording gives a dose, which then is the wording's dose; (3) a fact built
from the wording alone: its first clinical concept, polarity, doses, and category (allergy,
medication, symptom, diagnosis, finding, plan, return precaution, follow-up). A wording with
no concept is checked by its content words only (it can be covered, never contradicted). The
cited turns are the transcript turns the fact was read from (none for a fact of the wording
alone). Every other criterion is ``needs_model``: not graded, never guessed.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import replace
from typing import Any

from clinjudge.grounding.critical_items import ALLERGY, is_precaution
from clinjudge.grounding.plan_items import plan_kinds
from clinjudge.grounding.transcript_facts import build_transcript_facts
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.knowledge.concept import Mention
from clinjudge.omissions.coverage import NoteView, check_fact
from clinjudge.omissions.fact import Category, VisitFact
from clinjudge.omissions.visit_facts import visit_facts
from clinjudge.rubric.grades import graded_met, needs_model
from clinjudge.rubric.model import Criterion
from clinjudge.text.negation import is_negated
from clinjudge.text.quantities import extract_quantities
from clinjudge.text.transcript import parse_transcript, turn_spans

_DENIAL = re.compile(r"^\s*(?:no|denies|denied|not|negative for|without)\b", re.I)
#: A concept's kind → the fact category it makes, first kind found wins.
_CATEGORY: tuple[tuple[str, Category], ...] = (
    ("drug", "medication"),
    ("drug_class", "medication"),
    ("symptom", "symptom"),
    ("disease", "diagnosis"),
    ("finding", "exam finding"),
    ("test", "plan"),
    ("procedure", "plan"),
)


def grade_offline(
    criteria: list[Criterion], transcript: str, note: str, kb: KnowledgeBase
) -> list[dict[str, Any]]:
    """Each criterion's grade (module docstring), in order."""
    if not any(c.fact for c in criteria):
        return [needs_model(c) for c in criteria]
    facts = build_transcript_facts(parse_transcript(transcript), kb, dense=False)
    visit = visit_facts(facts, kb)
    view = NoteView(note, kb)
    starts = [s for s, _ in turn_spans(transcript)] if transcript.strip() else []
    out = []
    for c in criteria:
        if not c.fact:
            out.append(needs_model(c))
            continue
        fact = resolve_fact(c.fact, visit, kb)
        found = check_fact(fact, view, facts)
        wanted = "contradicted" if c.fact_kind == "contradicts" else "covered"
        turns = sorted({bisect_right(starts, s) for s, _ in fact.spans} - {0})
        out.append(
            graded_met(
                c,
                found.status == wanted,
                reason=f"{found.status}: {found.rationale}",
                turns=turns,
                note_span=[found.note_start, found.note_end],
                graded_by="knowledge",
            )
        )
    return out


def resolve_fact(wording: str, visit: list[VisitFact], kb: KnowledgeBase) -> VisitFact:
    """The visit fact a criterion's wording names, else a fact of the wording alone (module
    docstring)."""
    key = wording.strip().lower()
    same = next((f for f in visit if f.text.strip().lower() == key), None)
    if same is not None:
        return same
    own = fact_of_wording(wording, kb)
    if own.canonical:
        sharing = [
            f for f in visit if set(f.canonical) & set(own.canonical) and f.polarity == own.polarity
        ]
        wanted = own.attribute
        match = next((f for f in sharing if f.attribute == wanted), None)
        if match is not None:
            return replace(match, quantities=own.quantities) if wanted == "dose" else match
    return own


def fact_of_wording(wording: str, kb: KnowledgeBase) -> VisitFact:
    """A fact read from the wording alone (module docstring, step 3)."""
    text = wording.strip()
    base = {"id": "", "text": text, "importance": "routine", "surface": text, "quote": text}
    if is_precaution(text) or "return precaution" in text.lower():
        return VisitFact(category="return precaution", **base)  # type: ignore[arg-type]
    if "follow-up" in plan_kinds(text):
        return VisitFact(category="follow-up", **base)  # type: ignore[arg-type]
    read = [(m, _kinds(m, kb)) for m in kb.concepts_in(text)]
    mentions = [(m, kinds) for m, kinds in read if any(k in kinds for k, _ in _CATEGORY)]
    if not mentions:
        return VisitFact(category="history", **base)  # type: ignore[arg-type]
    m, kinds = mentions[0]
    denied = bool(_DENIAL.search(text)) or is_negated(text, m.start, m.end)
    category = next(c for k, c in _CATEGORY if k in kinds)
    if ALLERGY.search(text) and category == "medication":
        category = "allergy"
    doses = tuple(q for q in extract_quantities(text) if q.kind == "dose")
    dose = category == "medication" and bool(doses)
    return VisitFact(
        **{**base, "surface": m.surface},
        category=category,
        polarity="denied" if denied else "affirmed",
        canonical=tuple(m.canonical),
        attribute="dose" if dose else "",
        quantities=doses if dose else (),
    )


def _kinds(m: Mention, kb: KnowledgeBase) -> set[str]:
    """A mention's kinds with those of the classes it names: a lay term ("coughing up blood")
    is read as what it stands for (as the visit's facts read it)."""
    pos = kb.lexicon.pos
    return set(m.kinds) | {kb.concept(c).kind for c in m.canonical if c in pos}
