"""What one CEF run over a (source, generated text) pair produces (SPEC §2), and how it is
assembled from the generated questions and their two answers.

Every generated question ends in exactly one ``status``:

- ``dropped_label``: the generator itself did not label it YES — never asked;
- ``dropped_self``: its answer from its own text is not YES (NO, IDK, unparseable or a failed
  call) — never cross-examined;
- ``asked``: its answer from the other text was parsed — it counts in the scores;
- ``parse_failure`` / ``error``: its cross answer could not be read, or the call failed —
  excluded from the scores and counted.

So, per side: generated = dropped_label + dropped_self + parse failures + errors + asked, and
the score denominators are ``n_source_questions`` / ``n_summary_questions`` (the asked ones).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field

from clinjudge.cef.answers import ANSWERS, Answer
from clinjudge.cef.scores import TOKENIZER, Task, cef_scores, token_count

Side = Literal["source", "summary"]
SIDES: tuple[Side, ...] = ("source", "summary")
#: The text that answers a side's questions in the cross-examination.
OTHER: dict[Side, Side] = {"source": "summary", "summary": "source"}
Status = Literal["asked", "dropped_label", "dropped_self", "parse_failure", "error"]
#: Question id prefix per side: d1, d2, … from the source D; s1, s2, … from the summary S.
ID_PREFIX: dict[Side, str] = {"source": "d", "summary": "s"}


class CefQuestion(BaseModel):
    """One generated YES-question with its answers.

    ``fact``: the statement of its own text it asks about (offline: the fact verified; LLM:
    the verbatim quote the generator cited); ``span``: ``[start, end)`` of that statement in its
    own text (``None`` when the quote could not be located); ``label``: the generator's own
    answer label as written; ``own_answer``: the answer from its own text; ``cross_answer``:
    the answer from the other text; ``detail``: the answerer's rationale or the failure reason.
    """

    id: str
    side: Side
    question: str
    fact: str = ""
    span: list[int] | None = None
    section: str = "subjective"
    label: str | None = None
    own_answer: Answer | None = None
    cross_answer: Answer | None = None
    status: Status = "asked"
    detail: str = ""


class AnswerRecord(BaseModel):
    """The outcome of asking one question of one text."""

    id: str
    kind: Literal["answer", "parse_failure", "error"] = "answer"
    answer: Answer | None = None
    detail: str = ""


class CefResult(BaseModel):
    """Scores (percent, ``None`` when undefined), counts and every question of one item."""

    id: str = ""
    backend: str
    task: Task
    n_source: int  # questions requested from the source (N)
    n_summary: int  # questions requested from the summary (N')
    coverage: float | None
    conformity: float | None
    consistency: float | None
    conciseness: float | None
    overall: float | None
    n_source_questions: int  # denominators: source questions with a parsed cross answer
    n_summary_questions: int
    generated_source: int
    generated_summary: int
    dropped_label_source: int
    dropped_label_summary: int
    dropped_self_source: int
    dropped_self_summary: int
    parse_failures: int  # cross answers that could not be parsed (excluded)
    errors: int  # cross answers lost to failed calls (excluded)
    self_errors: int = 0  # own answers lost to failed calls (their questions dropped_self)
    answers_source: dict[str, int]  # cross answers of the source questions: YES/NO/IDK counts
    answers_summary: dict[str, int]
    tokens: dict[str, Any]
    failures: list[dict[str, Any]] = Field(default_factory=list)
    questions: list[CefQuestion]
    seconds: float = 0.0

    @property
    def incomplete(self) -> bool:
        """True when a failed call or a reply that could not be parsed at all cost answers or
        a side's questions: the next run retries the item, and the response cache keeps every
        reply that parsed, so only the lost calls are made again. A single unreadable answer
        inside a reply that parsed is not retried: the cached reply would give it again."""
        whole = any(
            q.status == "parse_failure" and q.detail.startswith("reply not parsed")
            for q in self.questions
        )
        return (
            self.lost_to_errors
            or whole
            or any(f.get("kind") == "parse_failure" for f in self.failures)
        )

    @property
    def lost_to_errors(self) -> bool:
        """True when a failed call (not a bad reply) cost an answer or a side's questions:
        re-running may complete the item."""
        generation = any(f.get("kind") == "error" for f in self.failures)
        return generation or self.errors > 0 or self.self_errors > 0

    def omitted(self) -> list[CefQuestion]:
        """Source questions the text could not answer (IDK): the omitted source facts."""
        return [q for q in self.questions if q.side == "source" and q.cross_answer == "IDK"]

    def contradicted(self) -> list[CefQuestion]:
        """Source questions the text answers NO: contradictions of the source."""
        return [q for q in self.questions if q.side == "source" and q.cross_answer == "NO"]

    def unsupported(self) -> list[CefQuestion]:
        """Summary questions the source does not answer YES: unsupported statements."""
        return [
            q for q in self.questions if q.side == "summary" and q.cross_answer in ("IDK", "NO")
        ]


def assemble_result(
    *,
    questions: list[CefQuestion],
    own: list[AnswerRecord],
    cross: list[AnswerRecord],
    source: str,
    summary: str,
    task: Task,
    backend: str,
    n_source: int,
    n_summary: int,
    failures: list[dict[str, Any]] | None = None,
    item_id: str = "",
    seconds: float = 0.0,
) -> CefResult:
    """Join each question with its answers, give it its status (module docstring) and score.

    ``questions`` arrive with status ``asked`` or ``dropped_label``; a question without an own
    answer record, or whose own answer is not YES, becomes ``dropped_self``.
    """
    own_by_id = {r.id: r for r in own}
    cross_by_id = {r.id: r for r in cross}
    joined = [_join(q, own_by_id.get(q.id), cross_by_id.get(q.id)) for q in questions]
    joined.sort(key=lambda q: (SIDES.index(q.side), _number(q.id)))
    parsed = {
        side: [q.cross_answer for q in joined if q.side == side and q.status == "asked"]
        for side in SIDES
    }
    scores = cef_scores(
        parsed["source"],  # type: ignore[arg-type]
        parsed["summary"],  # type: ignore[arg-type]
        source=source,
        summary=summary,
        task=task,
    )

    def count(side: Side, status: Status) -> int:
        return sum(1 for q in joined if q.side == side and q.status == status)

    return CefResult(
        id=item_id,
        backend=backend,
        task=task,
        n_source=n_source,
        n_summary=n_summary,
        **scores.model_dump(),
        n_source_questions=len(parsed["source"]),
        n_summary_questions=len(parsed["summary"]),
        generated_source=sum(1 for q in joined if q.side == "source"),
        generated_summary=sum(1 for q in joined if q.side == "summary"),
        dropped_label_source=count("source", "dropped_label"),
        dropped_label_summary=count("summary", "dropped_label"),
        dropped_self_source=count("source", "dropped_self"),
        dropped_self_summary=count("summary", "dropped_self"),
        parse_failures=sum(1 for q in joined if q.status == "parse_failure"),
        errors=sum(1 for q in joined if q.status == "error"),
        self_errors=sum(1 for r in own if r.kind == "error"),
        answers_source=_answer_counts(parsed["source"]),
        answers_summary=_answer_counts(parsed["summary"]),
        tokens={
            "source": token_count(source),
            "summary": token_count(summary),
            "tokenizer": TOKENIZER,
        },
        failures=list(failures or []),
        questions=joined,
        seconds=seconds,
    )


def _join(q: CefQuestion, own: AnswerRecord | None, cross: AnswerRecord | None) -> CefQuestion:
    if q.status == "dropped_label":
        return q
    update: dict[str, Any] = {"own_answer": own.answer if own else None}
    if own is None or own.answer != "YES":
        why = own.detail if own is not None else "not answered from its own text"
        kind = "" if own is None or own.kind == "answer" else f"{own.kind}: "
        update |= {"status": "dropped_self", "detail": f"own answer not YES — {kind}{why}"}
        return q.model_copy(update=update)
    if cross is None:
        update |= {"status": "parse_failure", "detail": "no answer returned for this question"}
    elif cross.kind != "answer" or cross.answer is None:
        status = "error" if cross.kind == "error" else "parse_failure"
        update |= {"status": status, "detail": cross.detail}
    else:
        update |= {"status": "asked", "cross_answer": cross.answer, "detail": cross.detail}
    return q.model_copy(update=update)


def _answer_counts(answers: list[Answer | None]) -> dict[str, int]:
    counts = Counter(answers)
    return {a: counts.get(a, 0) for a in ANSWERS}


def _number(question_id: str) -> int:
    digits = "".join(ch for ch in question_id if ch.isdigit())
    return int(digits) if digits else 0
