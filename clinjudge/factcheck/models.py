"""Result models of the fact-checker (SPEC §3 "Outputs").

Per claim (:class:`ClaimCheck`): id, text, span in the answer, label, the queries, the evidence
(passage id or URL with its snippet), the verdict (``supported`` / ``not_supported``) or the failure
that left it unrated, ``checkable`` (the evidence addressed the claim at all), and the offline
rater's continuous ``support_score`` (``None`` from the LLM rater).

Per answer (:class:`AnswerResult`), with these denominators:

- ``n_claims``: every claim of the decomposition; ``n_relevant``: those labelled ``relevant``
  (only they are checked, SPEC §3 step 2);
- ``n_excluded``: relevant claims left unrated by a parse failure, a model-call error or a search
  error; ``n_rated`` = ``n_relevant − n_excluded``;
- ``unsupported_rate`` = not_supported / ``n_rated``, with its Wilson 95% interval ``ci95``
  (``None`` and (0, 1) when nothing was rated);
- ``checkable_rate`` = checkable / ``n_rated`` (``None`` when nothing was rated).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, computed_field

from clinjudge.metrics.intervals import wilson_interval
from clinjudge.search.base import Passage
from clinjudge.types import CallError, ParseFailure

Label = Literal["relevant", "context", "meta"]
Rating = Literal["supported", "not_supported"]
LABELS: tuple[str, ...] = ("relevant", "context", "meta")


class FactClaim(BaseModel):
    """An atomic claim of the answer; ``answer[start:end]`` is the text it was drawn from."""

    id: str
    text: str
    start: int
    end: int
    label: Label
    label_reason: str = ""


class ClaimRating(BaseModel):
    """A rater's reading of one claim against its evidence (SPEC §3 step 4)."""

    verdict: Rating
    checkable: bool
    rationale: str = ""
    cited: list[str] = []
    #: Continuous support in [0, 1] (offline rater, :mod:`clinjudge.factcheck.support`); ``None``
    #: for raters that give only a verdict.
    support_score: float | None = None


class ClaimCheck(FactClaim):
    queries: list[str] = []
    evidence: list[Passage] = []
    verdict: Rating | None = None
    checkable: bool | None = None
    rationale: str = ""
    cited: list[str] = []
    support_score: float | None = None
    failure: ParseFailure | CallError | None = None


class AnswerResult(BaseModel):
    """One answer's fact-check; rates as in the module docstring."""

    id: str
    backend: str
    search: str
    claims: list[ClaimCheck]
    decomposition: dict[str, object] = {}
    seconds: float = 0.0

    @property
    def relevant(self) -> list[ClaimCheck]:
        return [c for c in self.claims if c.label == "relevant"]

    @property
    def rated(self) -> list[ClaimCheck]:
        return [c for c in self.relevant if c.verdict is not None]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_claims(self) -> int:
        return len(self.claims)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_relevant(self) -> int:
        return len(self.relevant)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_rated(self) -> int:
        return len(self.rated)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_excluded(self) -> int:
        return self.n_relevant - self.n_rated

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_not_supported(self) -> int:
        return sum(1 for c in self.rated if c.verdict == "not_supported")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_checkable(self) -> int:
        return sum(1 for c in self.rated if c.checkable)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unsupported_rate(self) -> float | None:
        return self.n_not_supported / self.n_rated if self.n_rated else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ci95(self) -> tuple[float, float]:
        return wilson_interval(self.n_not_supported, self.n_rated)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def checkable_rate(self) -> float | None:
        return self.n_checkable / self.n_rated if self.n_rated else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def support_score(self) -> float | None:
        """Mean ``support_score`` of the rated relevant claims that have one (offline rater:
        1 / (1 + unsupported specifics)); ``None`` when none has (the LLM rater gives none)."""
        scores = [c.support_score for c in self.rated if c.support_score is not None]
        return sum(scores) / len(scores) if scores else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def parse_failures(self) -> int:
        return sum(1 for c in self.relevant if c.failure and c.failure.kind == "parse_failure")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def errors(self) -> int:
        return sum(1 for c in self.relevant if c.failure and c.failure.kind == "error")

    @classmethod
    def from_row(cls, row: dict) -> AnswerResult:
        """Read back a stored row (computed fields in it are recomputed, not trusted)."""
        fields = set(cls.model_fields)
        return cls.model_validate({k: v for k, v in row.items() if k in fields})
