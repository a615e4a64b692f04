"""MEDEC (abachaa/MEDEC, CC BY 4.0) as a paired error-detection dataset (SPEC §4 "Pairs").

Two inputs:
- a **pair JSONL** such as ``medec_ms_error_correct_pairs.jsonl``: one erroneous note and its
  corrected twin per line (``text_id``, ``erroneous_note``, ``corrected_note``,
  ``error_sentence``, ``corrected_sentence``; optional ``error_type``, ``error_sentence_id``);
- a **MEDEC CSV** (``Text ID, Text, Error Flag, Error Type, Error Sentence, Corrected Sentence,
  Corrected Text``, ...): erroneous and clean notes of the dataset.

Pairing of a CSV:
- ``twins`` (default): every erroneous note with a ``Corrected Text`` is paired with that
  corrected twin (a note of its own, id ``<Text ID>:corrected``); erroneous notes without one are
  matched one-to-one to the dataset's clean notes (word Jaccard ≥ 0.6). All dataset notes are
  judged; those in no pair count for pointwise metrics only.
- ``match``: the seed's MEDEC procedure — erroneous notes matched one-to-one to the dataset's
  own clean notes (word Jaccard ≥ 0.6, or ``char_overlap`` ≥ 0.85); no synthetic twins.
A pair JSONL gives the same note ids as the CSV in ``twins`` mode (error note = ``text_id``, twin
= ``<text_id>:corrected``); identical clean texts are judged once and shared by their pairs.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from clinjudge.datasets.items import DatasetError
from clinjudge.files import parse_line
from clinjudge.pairs import (
    DetectionNote,
    NotePair,
    PairDataset,
    Similarity,
    match_one_to_one,
)

Pairing = Literal["twins", "match"]
TWIN_SUFFIX = ":corrected"
CSV_COLUMNS = ("Text ID", "Text", "Error Flag")
JSONL_FIELDS = ("erroneous_note", "corrected_note", "error_sentence", "corrected_sentence")
_NA = frozenset({"", "na", "nan", "none"})


@dataclass(frozen=True)
class MedecRecord:
    """One row of a MEDEC CSV."""

    text_id: str
    text: str
    has_error: bool
    error_type: str | None
    error_sentence: str | None
    corrected_sentence: str | None
    corrected_text: str | None


def _value(raw: str | None) -> str | None:
    return None if raw is None or raw.strip().casefold() in _NA else raw


def read_medec_csv(path: Path) -> list[MedecRecord]:
    """Rows of a MEDEC CSV. Raises `DatasetError` naming the file, row and column."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DatasetError(f"{path}: not a MEDEC CSV, missing column(s) {', '.join(missing)}")
        records = []
        for line, row in enumerate(reader, start=2):
            flag = (row.get("Error Flag") or "").strip()
            if flag not in {"0", "1"}:
                raise DatasetError(f"{path}, row {line}: Error Flag must be 0 or 1, got {flag!r}")
            if not (row.get("Text") or "").strip() or not (row.get("Text ID") or "").strip():
                raise DatasetError(f"{path}, row {line}: empty Text ID or Text")
            records.append(
                MedecRecord(
                    text_id=row["Text ID"].strip(),
                    text=row["Text"],
                    has_error=flag == "1",
                    error_type=_value(row.get("Error Type")),
                    error_sentence=_value(row.get("Error Sentence")),
                    corrected_sentence=_value(row.get("Corrected Sentence")),
                    corrected_text=_value(row.get("Corrected Text")),
                )
            )
    return records


def pairs_from_records(
    records: list[MedecRecord],
    *,
    pairing: Pairing = "twins",
    similarity: Similarity = "word_jaccard",
    threshold: float | None = None,
    name: str = "medec",
) -> PairDataset:
    """Notes and pairs of MEDEC rows under the chosen pairing (see the module docstring)."""
    if pairing not in ("twins", "match"):
        raise DatasetError(f"pairing must be twins or match, got {pairing!r}")
    notes = [
        DetectionNote(r.text_id, r.text, r.has_error, r.text_id, r.error_type) for r in records
    ]
    ids = [n.note_id for n in notes]
    if len(set(ids)) != len(ids):
        raise DatasetError(f"{name}: duplicate Text IDs")
    pairs: list[NotePair] = []
    to_match: list[MedecRecord] = []
    for r in records:
        if not r.has_error:
            continue
        if pairing == "twins" and r.corrected_text:
            twin_id = r.text_id + TWIN_SUFFIX
            notes.append(DetectionNote(twin_id, r.corrected_text, False, r.text_id, None))
            pairs.append(_pair(r, twin_id, "twin", None))
        else:
            to_match.append(r)
    clean = [r for r in records if not r.has_error]
    matches = match_one_to_one(
        [r.text for r in to_match],
        [r.text for r in clean],
        similarity=similarity,
        threshold=threshold,
    )
    pairs += [
        _pair(to_match[m.left], clean[m.right].text_id, "matched", m.similarity) for m in matches
    ]
    order = {r.text_id: i for i, r in enumerate(records)}
    pairs.sort(key=lambda p: order[p.pair_id])
    return PairDataset(name=name, notes=notes, pairs=pairs, pairing=pairing)


def _pair(r: MedecRecord, clean_id: str, how: str, similarity: float | None) -> NotePair:
    return NotePair(
        pair_id=r.text_id,
        error_note_id=r.text_id,
        clean_note_id=clean_id,
        error_sentence=r.error_sentence or "",
        corrected_sentence=r.corrected_sentence or "",
        error_type=r.error_type,
        how=how,  # type: ignore[arg-type]
        similarity=similarity,
    )


def read_pair_jsonl(path: Path, *, name: str | None = None) -> PairDataset:
    """A pair JSONL (one erroneous note and its corrected twin per line)."""
    notes: dict[str, DetectionNote] = {}
    clean_by_text: dict[str, str] = {}
    pairs: list[NotePair] = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            row, problem = parse_line(line)
            if problem is not None:
                raise DatasetError(f"{path}, line {line_no}: {problem}")
            if not isinstance(row, dict):
                raise DatasetError(f"{path}, line {line_no}: expected a JSON object")
            missing = [f for f in JSONL_FIELDS if not str(row.get(f) or "").strip()]
            pair_id = str(row.get("text_id") or row.get("pair_id") or row.get("id") or "").strip()
            if missing or not pair_id:
                what = ", ".join(missing) if missing else "text_id"
                raise DatasetError(f"{path}, line {line_no}: missing or empty field(s) {what}")
            if pair_id in notes:
                raise DatasetError(f"{path}, line {line_no}: duplicate id {pair_id!r}")
            error_type = row.get("error_type")
            notes[pair_id] = DetectionNote(
                pair_id, row["erroneous_note"], True, pair_id, error_type
            )
            clean_text = row["corrected_note"]
            clean_id = clean_by_text.get(clean_text)
            if clean_id is None:
                clean_id = clean_by_text[clean_text] = pair_id + TWIN_SUFFIX
                notes[clean_id] = DetectionNote(clean_id, clean_text, False, pair_id, None)
            pairs.append(
                NotePair(
                    pair_id=pair_id,
                    error_note_id=pair_id,
                    clean_note_id=clean_id,
                    error_sentence=row["error_sentence"],
                    corrected_sentence=row["corrected_sentence"],
                    error_type=error_type,
                )
            )
    if not pairs:
        raise DatasetError(f"{path}: no pairs")
    return PairDataset(name=name or path.stem, notes=list(notes.values()), pairs=pairs)


def load_pair_dataset(
    path: str | Path,
    *,
    pairing: Pairing = "twins",
    similarity: Similarity = "word_jaccard",
    threshold: float | None = None,
) -> PairDataset:
    """A pair JSONL (``.jsonl``) or MEDEC CSV (``.csv``) as a `PairDataset` with its sha256.

    Raises:
        DatasetError: missing file, unknown format, bad rows, or ``match`` asked of a pair file.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise DatasetError(f"dataset file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        if pairing != "twins":
            raise DatasetError(f"{path}: a pair file is already paired; use --pairing twins")
        data = read_pair_jsonl(path)
    elif suffix == ".csv":
        records = read_medec_csv(path)
        data = pairs_from_records(
            records, pairing=pairing, similarity=similarity, threshold=threshold, name=path.stem
        )
    else:
        raise DatasetError(f"{path}: expected a pair .jsonl or a MEDEC .csv")
    data.path = str(path)
    data.sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    return data
