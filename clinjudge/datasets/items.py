"""What a loader returns: :class:`Item` (one transcript–note pair), :class:`Dataset`, and the one
error type every bad input raises, :class:`DatasetError`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from clinjudge.errors import DatasetError

__all__ = ["Dataset", "DatasetError", "Item", "SkippedItem"]


class Item(BaseModel):
    """One evaluation item: a source transcript and the note to judge against it.

    ``meta`` holds every other field of the row (dataset subset, specialty, metadata, ...).
    """

    id: str
    transcript: str
    note: str
    meta: dict[str, Any] = Field(default_factory=dict)


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
