"""What a loader returns: :class:`Item` (one transcript–note pair), :class:`Dataset`, and the one
error type every bad input raises, :class:`DatasetError`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from clinjudge.errors import DatasetError

__all__ = ["Dataset", "DatasetError", "Item"]


class Item(BaseModel):
    """One evaluation item: a source transcript and the note to judge against it.

    ``meta`` holds every other field of the row (dataset subset, specialty, metadata, ...).
    """

    id: str
    transcript: str
    note: str
    meta: dict[str, Any] = Field(default_factory=dict)


class Dataset(BaseModel):
    """Items loaded from one file, with the file's SHA-256 so a report can name exactly what ran."""

    name: str
    path: Path
    items: list[Item]
    sha256: str

    def __len__(self) -> int:
        return len(self.items)

    def provenance(self) -> dict[str, Any]:
        """JSON-ready description for report provenance: name, path, sha256, item count."""
        return {
            "name": self.name,
            "path": str(self.path),
            "sha256": self.sha256,
            "n_items": len(self.items),
        }
