"""What a rubric file declares (issue 39): the criteria a grader checks a text against, how each
is graded, and how the grades become a score.

A rubric is YAML (a ``.yaml``/``.yml`` file, or the front matter of a Markdown file whose body is
guidance shown to the grader before the criteria)::

    name: visit-facts             # how reports name it
    version: 1
    reads: [transcript, note]     # the dataset columns it needs (READABLE)
    mode: met                     # met: each criterion met / not met; scale: a level 1..N
    criteria:
      - id: chest-pain
        text: The note documents the patient's chest pain.
        points: 5                 # negative: something that must not appear (met = it appears)
        tags: [axis:completeness] # or a mapping {axis: completeness}
        critical: true            # a gate: the item fails when it goes the wrong way
        fact: chest pain          # optional: a visit fact, graded offline (see below)
        kind: documents           # with ``fact``: documents (default) or contradicts
    criteria_column: rubric       # optional: each item's own criteria (a JSON list) in a column
    scale: {1: ..., 5: ...}       # mode scale: a definition per level, 1..N (or per criterion
                                  # under ``levels``)
    aggregate: {critical_gate: true}
    prompt: grader.md             # optional: the grader's prompt, else the built-in one

**Fact criteria.** A criterion with ``fact: "<a clinical fact>"`` names something the note must
state (``kind: documents``: met when the note covers the fact) or must not state against the
visit (``kind: contradicts``: met when the note contradicts it; give it negative points). Only
these are graded offline, by the omission judge's knowledge-grounded reading
(:mod:`clinjudge.rubric.offline`); any other criterion offline "needs a model". A fact criterion
may leave ``text`` out: it reads "The note documents <fact>." (or "contradicts").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: Columns a rubric may read, and where an item keeps each (``item.meta`` keys, first found).
READABLE: dict[str, tuple[str, ...]] = {
    "transcript": (),  # item.transcript
    "note": (),  # item.note
    "answer": (),  # item.note: the judged text named as an answer
    "question": ("question", "Question", "prompt"),
    "reference note": ("reference_note", "reference", "reference_answer", "ideal_answer"),
}
Mode = Literal["met", "scale"]
FactKind = Literal["documents", "contradicts"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Criterion(_Strict):
    """One criterion; ``points`` is used by ``met`` rubrics, ``levels`` by ``scale`` ones."""

    id: str = Field(min_length=1)
    text: str = ""
    points: float = 1.0
    tags: tuple[str, ...] = ()
    critical: bool = False
    fact: str | None = None
    kind: FactKind | None = None
    levels: dict[int, str] | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return tuple(f"{k}:{v}" for k, v in value.items())
        if isinstance(value, str):
            return (value,)
        return value

    @model_validator(mode="after")
    def _wording(self) -> Criterion:
        if self.kind is not None and self.fact is None:
            raise ValueError("'kind' needs a 'fact'; add fact: <the clinical fact>, or drop kind")
        if self.fact is not None and not self.fact.strip():
            raise ValueError("'fact' is empty; name the clinical fact, or drop it")
        if not self.text.strip() and self.fact is None:
            raise ValueError(
                "a criterion needs 'text' (or a 'fact'); say what the grader checks "
                "(text: The note states the allergy.)"
            )
        if not self.text.strip():
            verb = "contradicts" if self.fact_kind == "contradicts" else "documents"
            object.__setattr__(self, "text", f"The note {verb} {self.fact}.")
        return self

    @property
    def fact_kind(self) -> FactKind | None:
        return None if self.fact is None else (self.kind or "documents")


class Aggregate(_Strict):
    """How grades become a score: ``critical_gate`` — an item that fails a critical criterion
    (a positive one not met, a negative one met) scores 0 — and the bootstrap's resamples."""

    critical_gate: bool = True
    n_resamples: int = Field(default=2000, ge=100)


class Rubric(_Strict):
    """A whole rubric file (module docstring); ``guidance`` is the Markdown body, ``sha256`` the
    file's hash and ``path`` where it was read (both filled by the loader)."""

    name: str = Field(min_length=1)
    version: str = "1"
    reads: tuple[str, ...] = ("transcript", "note")
    mode: Mode = "met"
    criteria: tuple[Criterion, ...] = ()
    criteria_column: str | None = None
    scale: dict[int, str] | None = None
    aggregate: Aggregate = Aggregate()
    prompt: str | None = None
    guidance: str = ""
    sha256: str = ""
    path: str = ""

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int | float) else value

    @field_validator("reads", mode="before")
    @classmethod
    def _reads(cls, value: Any) -> Any:
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list | tuple):
            return value
        names = [str(n).strip().replace("_", " ") for n in names]
        unknown = [n for n in names if n not in READABLE]
        if unknown:
            raise ValueError(f"unknown column {unknown[0]!r}")
        if not {"note", "answer"} & set(names):
            raise ValueError("a rubric reads the judged text: list 'note' or 'answer'")
        return tuple(names)

    @field_validator("scale")
    @classmethod
    def _scale(cls, value: dict[int, str] | None) -> dict[int, str] | None:
        return None if value is None else _levels(value)

    @model_validator(mode="after")
    def _whole(self) -> Rubric:
        if not self.criteria and not self.criteria_column:
            raise ValueError(
                "criteria: a rubric needs 'criteria' or a 'criteria_column'; list criteria, "
                "each with an id and a text (or a fact)"
            )
        ids = [c.id for c in self.criteria]
        if len(set(ids)) != len(ids):
            twice = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(
                f"criteria: criterion id {twice!r} is used twice; give each criterion a unique id"
            )
        if self.mode == "scale":
            for c in self.criteria:
                check_scale_criterion(c, self.scale)
        return self

    def levels_of(self, criterion: Criterion) -> dict[int, str]:
        """The level definitions of a scale criterion: its own, else the rubric's."""
        return _levels(criterion.levels) if criterion.levels else dict(self.scale or {})

    @property
    def top_level(self) -> int:
        return max(self.scale) if self.scale else 0


def check_scale_criterion(criterion: Criterion, scale: dict[int, str] | None) -> None:
    """A criterion of a scale rubric has level definitions (its own or the rubric's ``scale``).

    Raises:
        ValueError: it has neither.
    """
    if criterion.levels is None and not scale:
        raise ValueError(
            f"criterion {criterion.id!r} of a 'scale' rubric has no levels: give the rubric a "
            "'scale' or the criterion 'levels'"
        )
    if criterion.levels is not None:
        _levels(criterion.levels)


def _levels(value: dict[int, str]) -> dict[int, str]:
    """Levels 1..N, each defined (G-Eval style), N ≥ 2."""
    keys = sorted(value)
    if len(keys) < 2 or keys != list(range(1, len(keys) + 1)):
        raise ValueError(f"levels must be 1..N with N ≥ 2, got {keys}")
    if any(not str(v).strip() for v in value.values()):
        raise ValueError("every level needs a definition")
    return {k: str(value[k]).strip() for k in keys}
