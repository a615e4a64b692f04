"""Join a metadata table (patient age, gender, complaint … per encounter) to the notes of a run,
for subgroup endpoints (SPEC §9; issue 37).

A run's item ids are the encounter's id, or ``<encounter>/<system>`` when the run holds several
systems' notes. The metadata table (any CSV / JSONL / JSON of rows) is keyed by encounter; its
key column is found, not configured: the column whose values match the most items, by whole
id or by encounter part. Items the table does not hold are counted (``matched`` of ``items``),
never dropped silently; their subgroup is :data:`NO_METADATA`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from clinjudge.errors import ConfigError

NO_METADATA = "(no metadata)"
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class MetadataJoin:
    """Each item's value of ``column`` (numbers as numbers), joined on ``key_column``."""

    column: str
    key_column: str
    by_item: dict[str, Any]
    matched: int
    items: int

    def describe(self) -> str:
        return (
            f"metadata joined on {self.key_column!r}: {self.matched} of {self.items} notes "
            f"matched (subgroups by {self.column!r})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "key_column": self.key_column,
            "matched": self.matched,
            "items": self.items,
        }


def encounter_of(item_id: str, systems: Iterable[str]) -> str:
    """The encounter part of ``item_id``: without its ``/<system>`` suffix when it has one."""
    for system in systems:
        if item_id.endswith(f"/{system}"):
            return item_id[: -len(system) - 1]
    return item_id


def join_metadata(
    rows: list[dict[str, Any]], column: str, item_ids: list[str], systems: Iterable[str] = ()
) -> MetadataJoin:
    """Each item's ``column`` value, through the key column that matches the most items.

    Raises:
        ConfigError: no row has ``column``, or no column holds the items' ids or encounters.
    """
    present = sorted({k for row in rows for k in row})
    if not any(_blank(row.get(column)) is not None for row in rows):
        raise ConfigError(f"no column {column!r} in the metadata: it has {', '.join(present)}")
    systems = list(systems)
    wanted = {i: (i, encounter_of(i, systems)) for i in item_ids}
    best: tuple[int, str] | None = None
    for key in present:
        values = {str(v).strip() for row in rows if (v := row.get(key)) is not None}
        hits = sum(1 for whole, part in wanted.values() if whole in values or part in values)
        if hits and (best is None or hits > best[0]):
            best = (hits, key)
    if best is None:
        some = ", ".join(sorted({p for _, p in wanted.values()})[:3])
        raise ConfigError(
            f"no metadata column holds the run's item ids or encounters (such as {some})"
        )
    key = best[1]
    table = {str(row[key]).strip(): row.get(column) for row in rows if row.get(key) is not None}
    by_item: dict[str, Any] = {}
    for item, (whole, part) in wanted.items():
        found = whole if whole in table else part if part in table else None
        by_item[item] = NO_METADATA if found is None else _value(table[found])
    matched = sum(1 for v in by_item.values() if v != NO_METADATA)
    return MetadataJoin(column, key, by_item, matched, len(item_ids))


def _blank(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        return None
    return value


def _value(value: Any) -> Any:
    """A cell as a subgroup value: a number written as text ("60", "60.0") becomes a number."""
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        number = float(value)
        return int(number) if number.is_integer() else number
    return value
