"""What a loader returns: :class:`Item` (one transcript–note pair), :class:`Dataset`, and the one
error type every bad input raises, :class:`DatasetError`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from clinjudge.errors import DatasetError

__all__ = [
    "Dataset",
    "DatasetError",
    "Item",
    "SkippedItem",
    "max_text_chars",
    "text_too_long",
    "visit_order",
]

#: The largest text (a note, a transcript) a command reads, in characters, unless
#: ``CLINJUDGE_MAX_TEXT_CHARS`` says otherwise. Real visit notes and transcripts are tens of
#: thousands of characters; a 20 MB "note" took 3 GB of memory and wrote 666 MB of rows.
MAX_TEXT_CHARS = 2_000_000
MAX_TEXT_SETTING = "CLINJUDGE_MAX_TEXT_CHARS"


def max_text_chars() -> int:
    """The size limit per text (:data:`MAX_TEXT_CHARS`, or ``CLINJUDGE_MAX_TEXT_CHARS``).

    Raises:
        DatasetError: the setting is not a positive whole number.
    """
    value = os.environ.get(MAX_TEXT_SETTING, "").strip()
    if not value:
        return MAX_TEXT_CHARS
    if not value.isdigit() or int(value) < 1:
        raise DatasetError(f"{MAX_TEXT_SETTING} must be a positive whole number, got {value!r}")
    return int(value)


def text_too_long(text: str, role: str) -> str | None:
    """Why ``text`` (the ``role``: note, transcript) is over the size limit, naming the setting
    that raises it; ``None`` when it is not."""
    limit = max_text_chars()
    if len(text) <= limit:
        return None
    return (
        f"{role} of {len(text):,} characters is over the limit of {limit:,} a text "
        f"(set {MAX_TEXT_SETTING} to raise it)"
    )


class Item(BaseModel):
    """One evaluation item: a source transcript and the note to judge against it.

    ``meta`` holds every other field of the row (dataset subset, specialty, metadata, ...).
    """

    id: str
    transcript: str
    note: str
    meta: dict[str, Any] = Field(default_factory=dict)


def visit_order(items: Sequence[Item]) -> list[Item]:
    """``items`` with the notes of one visit (the same transcript) side by side: visits in the
    order of their first item, a visit's items in their own order. A run judges in this order,
    so a model server that keeps the previous prompt's prefix reads a visit's transcript once
    for all its systems' notes; in the file's order it reads it again for each note whenever
    one system's notes come before another's, as ``--systems`` columns load (issue 38)."""
    visits: dict[str, list[Item]] = {}
    for item in items:
        visits.setdefault(item.transcript, []).append(item)
    return [item for visit in visits.values() for item in visit]


class SkippedItem(BaseModel):
    """A row that could not be judged (an empty note, a line that is not JSON, ...): where it is
    in the file, its id when it has one, and why."""

    row: str
    id: str | None = None
    reason: str

    def describe(self) -> str:
        return f"{self.row}" + (f", id {self.id}" if self.id else "") + f": {self.reason}"


class Dataset(BaseModel):
    """Items loaded from one file, with the file's SHA-256 so a report can name exactly what ran,
    and the rows skipped on the way (counted in every report)."""

    name: str
    path: Path
    items: list[Item]
    sha256: str
    skipped: list[SkippedItem] = Field(default_factory=list)

    def __len__(self) -> int:
        return len(self.items)

    def provenance(self) -> dict[str, Any]:
        """JSON-ready description for report provenance: name, path, sha256, item count."""
        return {
            "name": self.name,
            "path": str(self.path),
            "sha256": self.sha256,
            "n_items": len(self.items),
            "n_skipped": len(self.skipped),
        }
