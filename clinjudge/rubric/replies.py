"""The grader's prompt inputs and replies on the LLM backend (issue 39 item 2; prompts
``rubric.grade_met`` and ``rubric.grade_scale``).

The prompt is a shared prefix — the instructions, the rubric's guidance, the visit (the
transcript with numbered turns ``T1`` …, the note, the question or reference when the rubric
reads them) — then a batch of criteria, so one call grades several criteria and every batch of
an item reuses the same prefix (a server with prefix caching reads it once). The reply gives,
per criterion id, ``met`` (or ``level``), a ``reason`` and the ``turns`` it cites. A criterion
the reply leaves out, or gives without a verdict or with a level out of range, is *missing*: the
caller asks again for the missing ones once, then records each as a parse failure — never a
guessed verdict. Ids the reply was not asked about are ignored; cited turns outside the
transcript are dropped.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel

from clinjudge.rubric.grades import graded_level, graded_met
from clinjudge.rubric.model import Criterion, Rubric
from clinjudge.text.transcript import parse_transcript


class ReplyGrade(BaseModel):
    id: str
    met: bool | None = None
    level: int | None = None
    reason: str = ""
    turns: list[int] = []


class GradesReply(BaseModel):
    grades: list[ReplyGrade]


def grades_schema(rubric: Rubric, batch: list[Criterion]) -> dict[str, Any]:
    """The JSON schema a server is asked to follow for one batch (as the SOAP judge's
    :func:`~clinjudge.judges.llm_judge.verdict_schema`): :class:`GradesReply` with ``id`` one of
    the batch's ids, ``met`` a boolean (or ``level`` one of the criteria's levels) required, and
    exactly one grade per criterion — a grammar-constrained server cannot skip a criterion or
    invent an id (a 1.5B model answered ``c1``, ``c2`` … after the prompt's example)."""
    schema = copy.deepcopy(GradesReply.model_json_schema())
    item = schema["$defs"]["ReplyGrade"]
    props = item["properties"]
    props["id"] = {"type": "string", "enum": [c.id for c in batch]}
    if rubric.mode == "scale":
        levels = sorted({level for c in batch for level in rubric.levels_of(c)})
        props["level"] = {"type": "integer", "enum": levels}
        props.pop("met")
        item["required"] = ["id", "level"]
    else:
        props["met"] = {"type": "boolean"}
        props.pop("level")
        item["required"] = ["id", "met"]
    grades = schema["properties"]["grades"]
    grades["minItems"] = grades["maxItems"] = len(batch)
    return schema


def numbered_transcript(transcript: str) -> str:
    """One line per turn, ``T<n> [speaker] <turn text>`` (turn n counted from 1, as reports
    show it)."""
    turns = parse_transcript(transcript).turns
    return "\n".join(
        f"T{i} [{t.speaker}] {' '.join(t.text.split())}" for i, t in enumerate(turns, start=1)
    )


def visit_variables(
    rubric: Rubric, *, transcript: str, note: str, question: str, reference: str
) -> dict[str, str]:
    """The shared part of every call for one item: what the rubric reads (``(not read)`` for
    a column it does not), the prompt fencing each."""
    unread = "(not read by this rubric)"
    answer = "answer" in rubric.reads and "note" not in rubric.reads
    return {
        "question": question if "question" in rubric.reads else unread,
        "transcript": numbered_transcript(transcript)
        if "transcript" in rubric.reads and transcript.strip()
        else unread,
        "reference": reference if "reference note" in rubric.reads else unread,
        "text_label": "Answer" if answer else "Note",
        "note": note,
    }


def prompt_variables(
    rubric: Rubric,
    batch: list[Criterion],
    *,
    transcript: str,
    note: str,
    question: str,
    reference: str,
) -> dict[str, str]:
    """Every variable of the grading prompt for one batch of an item's criteria."""
    return {
        "guidance": rubric.guidance or "(none)",
        **visit_variables(
            rubric, transcript=transcript, note=note, question=question, reference=reference
        ),
        "criteria": criteria_listing(rubric, batch),
    }


def criteria_listing(rubric: Rubric, criteria: list[Criterion]) -> str:
    """The batch of criteria the prompt lists, one per line (levels under a scale one)."""
    lines = []
    for c in criteria:
        if rubric.mode == "scale":
            levels = "; ".join(f"{k} = {v}" for k, v in rubric.levels_of(c).items())
            lines.append(f"- {c.id}: {c.text}\n  levels: {levels}")
        else:
            what = " (an error: met means the text does this)" if c.points < 0 else ""
            lines.append(f"- {c.id}: {c.text}{what}")
    return "\n".join(lines)


def grades_from_reply(
    rubric: Rubric, reply: GradesReply, criteria: list[Criterion], n_turns: int
) -> tuple[list[dict[str, Any]], list[Criterion]]:
    """The grades the reply gives for ``criteria`` and the criteria it leaves missing (module
    docstring)."""
    given = {g.id.strip(): g for g in reply.grades}
    done: list[dict[str, Any]] = []
    missing: list[Criterion] = []
    for c in criteria:
        g = given.get(c.id)
        turns = sorted({t for t in (g.turns if g else []) if 1 <= t <= n_turns})
        if g is None:
            missing.append(c)
        elif rubric.mode == "scale":
            top = max(rubric.levels_of(c))
            if g.level is None or not 1 <= g.level <= top:
                missing.append(c)
            else:
                done.append(graded_level(c, g.level, top, reason=g.reason, turns=turns))
        elif g.met is None:
            missing.append(c)
        else:
            span = [-1, -1]
            done.append(
                graded_met(c, g.met, reason=g.reason, turns=turns, note_span=span, graded_by="llm")
            )
    return done, missing
