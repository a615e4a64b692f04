"""Loaders for the public sets the benchmarks use; thin wrappers over :func:`load_items` that fix
the column names and handle each set's quirks. Paths are passed in: nothing is downloaded.

- ACI-Bench (wyim/aci-bench, CC BY 4.0): ``encounter_id, dataset, dialogue, note`` + an optional
  ``<stem>_metadata.csv`` (age, gender, complaints) joined on ``encounter_id``.
- PriMock57 (babylonhealth/primock57, CC BY 4.0), collated JSONL: ``id, transcript, note, ...``;
  transcription markup (``<UNSURE>…</UNSURE>``, ``<UNIN/>``, ``<INAUDIBLE_SPEECH/>``) is removed.
- MTS-Dialog (abachaa/MTS-Dialog, CC BY 4.0): ``ID, section_header, section_text, dialogue``;
  each note is one section of a visit note.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from clinjudge.datasets.items import Dataset, DatasetError
from clinjudge.datasets.loader import load_items
from clinjudge.datasets.readers import read_records

_PRIMOCK_MARKUP = re.compile(r"</?UNSURE>|<UNIN/>|<INAUDIBLE_SPEECH/>")
_RUNS_OF_SPACES = re.compile(r" {2,}")
_TRAILING_SPACES = re.compile(r"(?<! ) +$", re.MULTILINE)


def load_aci_bench(
    csv_path: str | Path,
    *,
    metadata_path: str | Path | None = None,
    limit: int | None = None,
) -> Dataset:
    """ACI-Bench challenge CSV (``train.csv``, ``valid.csv``, ...), metadata joined into ``meta``.

    ``metadata_path`` defaults to the sibling ``<stem>_metadata.csv`` when it exists. Metadata
    values are trimmed, blanks become ``None``, a numeric ``patient_age`` an int,
    ``2nd_complaints`` a list (``"none"`` → ``[]``); the metadata ``id`` is renamed ``source_id``.
    """
    csv_path = Path(csv_path)
    dataset = load_items(
        csv_path,
        limit=limit,
        transcript_column="dialogue",
        note_column="note",
        id_column="encounter_id",
    )
    if metadata_path is None:
        sibling = csv_path.with_name(f"{csv_path.stem}_metadata.csv")
        if not sibling.is_file():
            return dataset
        metadata_path = sibling
    metadata = _aci_metadata(Path(metadata_path))
    items = [
        item.model_copy(update={"meta": {**item.meta, **metadata.get(item.id, {})}})
        for item in dataset.items
    ]
    return dataset.model_copy(update={"items": items})


def load_primock57(
    jsonl_path: str | Path, *, strip_markup: bool = True, limit: int | None = None
) -> Dataset:
    """PriMock57 collated JSONL; ``strip_markup`` removes the transcription tags (SPEC §1 judges
    read plain speech)."""
    dataset = load_items(
        jsonl_path, limit=limit, transcript_column="transcript", note_column="note", id_column="id"
    )
    if not strip_markup:
        return dataset
    items = [
        item.model_copy(
            update={
                "transcript": strip_transcription_markup(item.transcript),
                "meta": {**item.meta, "markup_stripped": True},
            }
        )
        for item in dataset.items
    ]
    return dataset.model_copy(update={"items": items})


def load_mts_dialog(csv_path: str | Path, *, limit: int | None = None) -> Dataset:
    """MTS-Dialog CSV: transcript ``dialogue``, note ``section_text``, id ``ID``;
    ``section_header`` (GENHX, ROS, ...) stays in ``meta``."""
    return load_items(
        csv_path,
        limit=limit,
        transcript_column="dialogue",
        note_column="section_text",
        id_column="ID",
    )


def strip_transcription_markup(text: str) -> str:
    """Remove PriMock57 tags, keeping the words inside ``<UNSURE>``; squeeze the spaces left."""
    squeezed = _RUNS_OF_SPACES.sub(" ", _PRIMOCK_MARKUP.sub("", text))
    return _TRAILING_SPACES.sub("", squeezed)


def _aci_metadata(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        raise DatasetError(f"{path}: metadata file not found")
    by_id: dict[str, dict[str, Any]] = {}
    for record in read_records(path):
        fields = {k: _clean(v) for k, v in record.fields.items()}
        encounter_id = fields.pop("encounter_id", None)
        if encounter_id is None:
            raise DatasetError(f"{path}: {record.where}, column 'encounter_id': missing or empty")
        fields.pop("dataset", None)  # already in the main CSV
        if "id" in fields:
            fields["source_id"] = fields.pop("id")
        if fields.get("patient_age") is not None:
            fields["patient_age"] = _age(fields["patient_age"])
        if "2nd_complaints" in fields:
            fields["2nd_complaints"] = [
                c.strip()
                for c in (fields["2nd_complaints"] or "").split(";")
                if c.strip() and c.strip().lower() != "none"
            ]
        by_id[str(encounter_id)] = fields
    return by_id


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        return value or None
    return value


def _age(value: str) -> int | str:
    """Age in years as an int when it is a number ("60.0" → 60); else as written ("22-month")."""
    try:
        return int(float(value))
    except ValueError:
        return value
