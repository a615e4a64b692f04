"""What a directory the product wrote is, and which command reads it (issue 37): so a command
given the wrong kind of directory says what it was given and where to take it, instead of
failing on a field it expected.

Kinds, by what the directory holds:

    compare      run.json with a recorded command, no pairwise judge     (clinjudge compare)
    arena        run.json whose judges include ``pairwise``              (clinjudge arena)
    meta-eval    pairs_scored.jsonl                                      (clinjudge meta-eval)
    pairs        report.json with a calibration block, no run.json       (clinjudge pairs)
    safety-case  safety-case.json                                        (clinjudge safety-case)
    agreement    agreement.json                                          (clinjudge agreement)
"""

from __future__ import annotations

import json
from pathlib import Path

from clinjudge.errors import ConfigError

#: For each kind: who wrote it, and what reads it again.
READ_BY = {
    "compare": "`clinjudge report`, `label`, `agreement` and `safety-case` read it",
    "arena": "`clinjudge report DIR` renders it again",
    "meta-eval": "the same `clinjudge meta-eval` command resumes it and renders it again",
    "pairs": "`clinjudge gate DIR/report.json` and `safety-case` read it",
    "safety-case": "its files are the result; `clinjudge safety-case` writes it again",
    "agreement": "its files are the result; `clinjudge agreement` writes it again",
}


def run_kind(path: Path) -> str | None:
    """The kind of directory ``path`` is (module docstring), or ``None``."""
    if (path / "safety-case.json").is_file():
        return "safety-case"
    if (path / "agreement.json").is_file():
        return "agreement"
    if (path / "pairs_scored.jsonl").is_file():
        return "meta-eval"
    manifest = _json(path / "run.json")
    if isinstance(manifest, dict):
        if "pairwise" in (manifest.get("judges") or {}):
            return "arena"
        return "compare"
    report = _json(path / "report.json")
    if isinstance(report, dict) and "calibration" in report:
        return "pairs"
    return None


def require_kind(path: Path, wanted: tuple[str, ...], command: str) -> None:
    """Refuse a directory of another known kind than ``wanted``, naming what it is and what
    reads it.

    Raises:
        ConfigError: ``path`` is a directory of another known kind.
    """
    kind = run_kind(path)
    if kind is None or kind in wanted:
        return
    runs = " or ".join(wanted)
    article = "an" if kind[0] in "aeiou" else "a"
    raise ConfigError(
        f"{path}: {article} {kind} directory (written by clinjudge {kind}), not a {runs} run; "
        f"{command} reads {runs} runs — for this one, {READ_BY[kind]}"
    )


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
