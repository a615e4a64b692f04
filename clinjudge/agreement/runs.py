"""The SOAP judges of a ``clinjudge compare`` run directory, read for scoring against sentence
labels (SPEC §9), and the mapping of the run's notes to the labelled notes.

A run directory holds ``run.json`` (the manifest), ``runs/<judge>.jsonl`` (one row per note:
the judge's claims with their note spans and its verdicts) and, once finished, ``report.json``
(each judge's ``kind``). Only SOAP judges are read (kind ``soap``; a run without a report: the
judges whose identity names a ``mode``). Nothing in the directory is written.

**Note mapping.** A run item ``ENCOUNTER/system`` (``compare --system-column`` or
``--systems``) is the labelled note of that encounter and system; an item id without a system
(``ENCOUNTER``, one note per encounter) is the labelled note of ``system`` (default
``reference``, the human-written note).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinjudge.agreement.labels import SYSTEM_SEP, note_id
from clinjudge.errors import ConfigError
from clinjudge.files import rows_by_key
from clinjudge.metrics.unit_agreement import JudgedClaim


@dataclass
class Run:
    """A run directory: its manifest, and each SOAP judge's claims by item id."""

    path: Path
    manifest: dict[str, Any]
    manifest_sha256: str
    judges: dict[str, dict[str, list[JudgedClaim]]] = field(default_factory=dict)

    @property
    def items(self) -> list[str]:
        """Every item id the run's judges have a row for, in first-seen order."""
        return list(dict.fromkeys(i for rows in self.judges.values() for i in rows))


def judged_claims(row: dict[str, Any]) -> list[JudgedClaim]:
    """A SOAP row's claims in claim order with their verdicts; a claim without a verdict (parse
    failure, call error) has ``hallucinated`` and ``tier`` ``None``."""
    verdicts = {v["claim_id"]: v for v in row.get("verdicts", [])}
    out = []
    for c in row.get("claims", []):
        v = verdicts.get(c["id"])
        tier = None if v is None else int(v["tier"])
        out.append(
            JudgedClaim(
                start=int(c["start"]),
                end=int(c["end"]),
                hallucinated=None if v is None else not v.get("supported", tier <= 3),
                tier=tier,
                severity=None if v is None else v.get("severity"),
                rationale="" if v is None else str(v.get("rationale", "")),
                text=str(c.get("text", "")),
                claim_id=str(c["id"]),
            )
        )
    return out


def soap_judges(path: Path, manifest: dict[str, Any]) -> list[str]:
    """The run's SOAP judges (module docstring)."""
    named = judges_of_kind(path, "soap")
    if named is not None:
        return named
    return [n for n, identity in manifest.get("judges", {}).items() if "mode" in identity]


def read_manifest(path: Path) -> tuple[dict[str, Any], str]:
    """A run directory's manifest and its SHA-256.

    Raises:
        ConfigError: no such directory, no ``run.json``, or one that is not a manifest.
    """
    if not path.is_dir():
        raise ConfigError(f"{path}: no such run directory")
    manifest_file = path / "run.json"
    if not manifest_file.is_file():
        raise ConfigError(
            f"{path}: not a run directory (no run.json; `clinjudge compare` writes one)"
        )
    blob = manifest_file.read_bytes()
    try:
        manifest = json.loads(blob)
    except (json.JSONDecodeError, UnicodeDecodeError):
        manifest = None
    if not isinstance(manifest, dict):
        raise ConfigError(f"{manifest_file}: not a clinjudge run manifest")
    return manifest, hashlib.sha256(blob).hexdigest()


def judges_of_kind(path: Path, kind: str) -> list[str] | None:
    """The judges ``report.json`` gives ``kind``; ``None`` without a readable report."""
    report = path / "report.json"
    if not report.is_file():
        return None
    try:
        kinds = {n: j.get("kind") for n, j in json.loads(report.read_text())["judges"].items()}
    except (json.JSONDecodeError, KeyError, AttributeError):
        return None
    return [n for n, k in kinds.items() if k == kind] if kinds else None


def read_run(path: Path) -> Run:
    """The run directory's SOAP judges and their claims (module docstring).

    Raises:
        ConfigError: no such directory, no ``run.json``, or no SOAP judge with rows.
    """
    run = Run(path, *read_manifest(path))
    for name in soap_judges(path, run.manifest):
        rows = rows_by_key(path / "runs" / f"{name}.jsonl")
        if rows:
            run.judges[name] = {item: judged_claims(row) for item, row in rows.items()}
    if not run.judges:
        names = ", ".join(run.manifest.get("judges", {})) or "none"
        hint = (
            "; a rubric judge is scored against criterion labels (a .csv or .jsonl with item, "
            "criterion, label)"
            if "rubric:" in names
            else ""
        )
        raise ConfigError(
            f"{path}: no SOAP judge with judged notes in the run (judges: {names}){hint}"
        )
    return run


def labelled_id(item_id: str, system: str) -> str:
    """The labelled note an item of the run is (module docstring)."""
    return item_id if SYSTEM_SEP in item_id else note_id(item_id, system)


def match_notes(
    run: Run, labelled: Iterable[str], system: str, label_paths: Iterable[Path]
) -> dict[str, str]:
    """``{item id: labelled note id}`` for the run's items that have labels.

    Raises:
        ConfigError: no item of the run matches a labelled note (the ids of both shown).
    """
    wanted = set(labelled)
    matched = {i: n for i in run.items if (n := labelled_id(i, system)) in wanted}
    if not matched:
        ours = ", ".join(run.items[:3])
        theirs = ", ".join(sorted(wanted)[:3]) or "none"
        raise ConfigError(
            f"{run.path}: none of its {len(run.items)} notes ({ours}, …) has labels in "
            f"{', '.join(map(str, label_paths))} (labelled notes: {theirs}, …; an id without "
            f"'{SYSTEM_SEP}system' is read as system {system!r}, see --system)"
        )
    return matched


def check_notes(
    run: Run, matched: dict[str, str], notes: dict[str, str], units: dict[str, list[Any]]
) -> None:
    """Every labelled unit's text is the run's note text at the unit's span.

    Raises:
        ConfigError: the first note whose text differs from the one the units were cut from.
    """
    for item, labelled in matched.items():
        note = notes.get(item)
        for u in units.get(labelled, []) if note is not None else []:
            if u.text and note[u.start : u.end] != u.text:
                raise ConfigError(
                    f"{run.path}: note {item!r} is not the labelled note {labelled!r}: unit "
                    f"{u.unit} reads {u.text[:40]!r} in the units file but "
                    f"{note[u.start : u.end][:40]!r} in the run's dataset"
                )
