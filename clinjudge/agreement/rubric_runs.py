"""The rubric judges of a ``clinjudge compare`` run directory, read for scoring against human
criterion labels (issue 39 item 6).

A rubric judge (``--judges rubric:FILE``) writes one row per item to ``runs/<judge>.jsonl``: its
``mode`` (``met`` or ``scale``) and its ``criteria``, one grade each (``status`` graded,
needs_model, parse_failure or error; ``met`` or ``level``; the grader's ``reason``;
:mod:`clinjudge.rubric.grades`). Rubric judges are those ``report.json`` gives kind ``rubric``
(a run without a report: the judges named ``rubric:…``). Nothing in the directory is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinjudge.agreement.runs import judges_of_kind, read_manifest
from clinjudge.errors import ConfigError
from clinjudge.files import rows_by_key
from clinjudge.run_dir import RunDir

PREFIX = "rubric:"


@dataclass
class RubricJudge:
    """One rubric judge of a run: its mode and each item's grades by criterion id."""

    name: str
    mode: str
    grades: dict[str, dict[str, dict[str, Any]]]


@dataclass
class RubricRun:
    """A run directory: its manifest (and hash) and its rubric judges."""

    path: Path
    manifest: dict[str, Any]
    manifest_sha256: str
    judges: list[RubricJudge] = field(default_factory=list)

    @property
    def items(self) -> list[str]:
        return list(dict.fromkeys(i for j in self.judges for i in j.grades))


def rubric_judges(path: Path, manifest: dict[str, Any]) -> list[str]:
    """The run's rubric judges (module docstring)."""
    named = judges_of_kind(path, "rubric")
    if named is not None:
        return named
    return [n for n in manifest.get("judges", {}) if n.startswith(PREFIX)]


def read_rubric_run(path: Path) -> RubricRun:
    """The run directory's rubric judges and their grades (module docstring).

    Raises:
        ConfigError: no such directory, no ``run.json``, or no rubric judge with rows.
    """
    manifest, sha = read_manifest(path)
    run = RubricRun(path, manifest, sha)
    for name in rubric_judges(path, manifest):
        rows = rows_by_key(RunDir(path).rows_path(name))
        if not rows:
            continue
        modes = {r.get("mode") for r in rows.values()} - {None}
        grades = {
            item: {str(c["id"]): c for c in row.get("criteria") or [] if "id" in c}
            for item, row in rows.items()
        }
        run.judges.append(RubricJudge(name, modes.pop() if len(modes) == 1 else "met", grades))
    if not run.judges:
        names = ", ".join(manifest.get("judges", {})) or "none"
        raise ConfigError(
            f"{path}: no rubric judge with judged items in the run (judges: {names}); "
            "criterion labels score a `compare --judges rubric:FILE` run"
        )
    return run


def words(text: str) -> int:
    """A note's length in words (whitespace-separated tokens)."""
    return len(text.split())
