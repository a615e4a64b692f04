"""The pair dataset of the injection pipeline (SPEC §5): one JSONL line per matched pair — an
original text and the same text with exactly one injected error or one legitimate rewrite.

Written by ``clinjudge inject``, read by ``clinjudge meta-eval``. Spans are half-open character
offsets: ``original_span`` in ``original`` (what was replaced), ``edited_span`` in ``edited``
(what replaced it; empty for a pure deletion).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from clinjudge.datasets.items import DatasetError
from clinjudge.files import dump_line, read_jsonl
from clinjudge.inject.types import Perturbation


class PairRecord(BaseModel):
    """One matched pair and how it was made."""

    pair_id: str
    source_id: str
    kind: Literal["error", "rewrite"]
    type: str
    #: The text the judged text is checked against (a transcript or dialogue); "" when none.
    source: str = ""
    original: str
    edited: str
    original_span: tuple[int, int]
    edited_span: tuple[int, int]
    before: str
    after: str
    rationale: str = ""
    consequence: str = ""
    backend: Literal["offline", "llm"] = "offline"
    #: Role → model id (``applicability_a``, ``applicability_b``, ``injector``, ``validator``).
    models: dict[str, str] = Field(default_factory=dict)
    #: The LLM validator's verdicts (``None`` for offline mechanical pairs).
    validator: dict[str, Any] | None = None
    #: The programmatic edit-shape measurements and limits (SPEC §5 DESTROY/WRITE/...).
    shape: dict[str, Any] = Field(default_factory=dict)
    attempts: int = 1
    #: Everything else of the source row (e.g. ``question``, ``evidence`` for answers).
    meta: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_perturbation(
        cls, p: Perturbation, *, pair_id: str, source: str, shape: dict[str, Any], **extra: Any
    ) -> PairRecord:
        """A pair from an offline mechanical :class:`Perturbation`."""
        return cls(
            pair_id=pair_id,
            source_id=p.source_id,
            kind=p.kind,
            type=p.type,
            source=source,
            original=p.original_note,
            edited=p.note,
            original_span=p.original_span,
            edited_span=(p.start, p.end),
            before=p.before,
            after=p.after,
            rationale=p.rationale,
            shape=shape,
            **extra,
        )


def read_pairs(path: Path) -> list[PairRecord]:
    """Every pair of a pair JSONL file; a bad line raises :class:`DatasetError` naming it."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such pair file")
    pairs: list[PairRecord] = []
    seen: set[str] = set()
    for line in read_jsonl(path):
        number = line.number
        if not line.ok:
            raise DatasetError(f"{path}: line {number}: {line.problem}")
        try:
            pair = PairRecord.model_validate(line.value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "line"
            raise DatasetError(f"{path}: line {number}, {where}: {first['msg']}") from None
        if pair.pair_id in seen:
            raise DatasetError(f"{path}: line {number}: duplicate pair_id {pair.pair_id!r}")
        seen.add(pair.pair_id)
        pairs.append(pair)
    if not pairs:
        raise DatasetError(f"{path}: no pairs")
    return pairs


def pair_line(pair: PairRecord) -> str:
    """One pair as a line of a pair JSONL file (:func:`clinjudge.files.dump_line`)."""
    return dump_line(pair.model_dump(mode="json"))


def write_pair(handle: Any, pair: PairRecord) -> None:
    """Append one pair as a JSON line to an open text ``handle``."""
    handle.write(pair_line(pair))
