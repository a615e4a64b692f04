"""The CEF scores of SPEC §2, in percent, from the cross-examination answers.

With Q_D the source questions and Q_S the summary questions that entered the exam, and only
their *parsed* cross answers counted (parse failures and failed calls are excluded from every
denominator and counted by the caller):

    coverage    = 100 − 100 · |{q ∈ Q_D : answer from S = IDK}| / |Q_D|   (omissions)
    conformity  = 100 − 100 · |{q ∈ Q_D : answer from S = NO}|  / |Q_D|   (contradictions)
    consistency = 100 − 100 · |{q ∈ Q_S : answer from D = IDK}| / |Q_S|   (hallucinations)
    conciseness = 100 · (1 − tokens(S) / tokens(D))   (token reduction: higher = shorter S;
                  negative when S is longer than D)
    H           = 2 · coverage · conciseness / (coverage + conciseness), 0 unless both > 0
    overall     = mean(coverage, conformity, consistency, H)                 (task "summary")
                = mean(coverage, conformity, consistency)                    (task "note")

Every question that entered the exam was answered YES from its own text, so "NO from S" is
exactly the paper's "YES from D, NO from S". Tokens are word tokens
(:func:`clinjudge.text.normalize.word_tokens`: words and numbers, punctuation and markup tags
not counted). For note generation (``task="note"``) conciseness is not computed: a note is not
meant to be shorter than its transcript (SPEC §2). A side with no parsed answer gives ``None``
for its scores — never 0 or 100 — and ``overall`` is ``None`` when any of its terms is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from clinjudge.cef.answers import Answer
from clinjudge.text.normalize import word_tokens

Task = Literal["summary", "note"]
TASKS: tuple[Task, ...] = ("summary", "note")
#: Named in results so that readers know what "tokens" means in conciseness.
TOKENIZER = "clinjudge.text.normalize.word_tokens (words and numbers)"


class CefScores(BaseModel):
    coverage: float | None
    conformity: float | None
    consistency: float | None
    conciseness: float | None
    overall: float | None


def percent_without(answers: Sequence[Answer], unwanted: Answer) -> float | None:
    """100 − 100 · (share of ``answers`` equal to ``unwanted``); ``None`` for no answers."""
    if not answers:
        return None
    return 100.0 - 100.0 * sum(1 for a in answers if a == unwanted) / len(answers)


def token_count(text: str) -> int:
    """Word tokens of ``text`` (the conciseness tokenizer, :data:`TOKENIZER`)."""
    return len(word_tokens(text))


def conciseness(source: str, summary: str) -> float | None:
    """100 · (1 − tokens(S)/tokens(D)); ``None`` when the source has no token."""
    source_tokens = token_count(source)
    if source_tokens == 0:
        return None
    return 100.0 * (1.0 - token_count(summary) / source_tokens)


def harmonic(coverage: float, concise: float) -> float:
    """Harmonic mean of coverage and conciseness, 0 unless both are positive."""
    if coverage > 0 and concise > 0:
        return 2.0 * coverage * concise / (coverage + concise)
    return 0.0


def overall(
    coverage: float | None,
    conformity: float | None,
    consistency: float | None,
    concise: float | None,
    task: Task,
) -> float | None:
    """mean(coverage, conformity, consistency, H) for summaries, mean of the first three for
    notes; ``None`` when a term is missing."""
    terms = [coverage, conformity, consistency]
    if task == "summary":
        if coverage is None or concise is None:
            return None
        terms.append(harmonic(coverage, concise))
    if any(t is None for t in terms):
        return None
    return sum(terms) / len(terms)  # type: ignore[arg-type]


def cef_scores(
    source_answers: Sequence[Answer],
    summary_answers: Sequence[Answer],
    *,
    source: str,
    summary: str,
    task: Task = "summary",
) -> CefScores:
    """All five scores from the parsed cross answers of each side (module docstring)."""
    if task not in TASKS:
        raise ValueError(f"unknown CEF task {task!r}: use summary or note")
    cov = percent_without(source_answers, "IDK")
    conf = percent_without(source_answers, "NO")
    cons = percent_without(summary_answers, "IDK")
    concise = conciseness(source, summary) if task == "summary" else None
    return CefScores(
        coverage=cov,
        conformity=conf,
        consistency=cons,
        conciseness=concise,
        overall=overall(cov, conf, cons, concise, task),
    )
