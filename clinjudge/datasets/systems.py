"""Datasets holding the notes of several systems for the same encounters, in one run.

Two shapes, as evaluation sets come:

* **one note column per system** (ACI-Bench's model notes side by side: ``dialogue``,
  ``reference``, ``gpt4``, ``bart`` …): ``--systems reference,gpt4,bart`` names the columns;
* **a system column** (one row per encounter and system): ``--system-column system``.

Either way every system's note is one item, id ``<encounter>/<system>`` (as the labelled notes
of ``bench/`` name them), its meta ``system`` and ``encounter``; a row one system left empty is
skipped for that system only, with the system named. The judges then run over all items at
once, and the report adds per-system rates and paired differences
(:mod:`clinjudge.judges.system_rates`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinjudge.datasets.items import Dataset, DatasetError, Item, SkippedItem
from clinjudge.datasets.loader import SYSTEM_SEP, load_items


def load_system_columns(
    source: str | Path, systems: list[str], *, limit: int | None = None, **options: Any
) -> Dataset:
    """The items of each system's note column (module docstring); ``limit``: the first
    ``limit`` encounters; ``options`` as :func:`~clinjudge.datasets.loader.load_items` takes
    them (its note column excepted)."""
    if len(set(systems)) != len(systems) or not all(s.strip() for s in systems):
        raise DatasetError(f"--systems must name distinct columns, got {','.join(systems)!r}")
    items: list[Item] = []
    skipped: list[SkippedItem] = []
    first: Dataset | None = None
    for system in systems:
        try:
            data = load_items(source, limit=limit, note_column=system, **options)
        except DatasetError as exc:
            raise DatasetError(f"system {system!r}: {exc}") from None
        first = first or data
        for item in data.items:
            meta = {k: v for k, v in item.meta.items() if k not in systems}
            items.append(
                Item(
                    id=f"{item.id}{SYSTEM_SEP}{system}",
                    transcript=item.transcript,
                    note=item.note,
                    meta=meta | {"system": system, "encounter": item.id},
                )
            )
        for s in data.skipped:
            named = f"{s.id}{SYSTEM_SEP}{system}" if s.id else None
            skipped.append(SkippedItem(row=s.row, id=named, reason=f"{system}: {s.reason}"))
    assert first is not None  # systems is not empty
    return first.model_copy(update={"items": items, "skipped": skipped})


def systems_of(items: list[Item]) -> list[str]:
    """The systems of a dataset's items, in order of first appearance (``[]``: one system)."""
    return list(dict.fromkeys(str(i.meta["system"]) for i in items if "system" in i.meta))
