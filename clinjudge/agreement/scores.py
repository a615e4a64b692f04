"""Agreement of the SOAP judges of one or more compare runs with sentence labels, and of the
reviewers with each other (SPEC §9): what ``clinjudge agreement`` writes.

Per run and SOAP judge, over the labelled units of the run's notes the judge has a row for:
:func:`clinjudge.metrics.unit_agreement.judge_agreement` (precision, recall, F1, accuracy, κ
with encounter-bootstrap intervals, major recall, per-system shares, per-note Spearman, severity,
tier-5 precision against ``contradicted``), the misses and false flags by kind, and the
disagreements worst first (:mod:`clinjudge.metrics.disagreements`). Per pair of label sets, on
the units both labelled: :func:`clinjudge.metrics.reviewer_agreement.reviewer_agreement`, and
each judge's κ, precision and recall against the first set on those same units.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clinjudge import __version__
from clinjudge.agreement.labels import LabelledNotes, LabelSet, sha256_of
from clinjudge.agreement.runs import Run, match_notes
from clinjudge.metrics.disagreements import (
    disagreement_list,
    false_flags_by_kind,
    misses_by_kind,
)
from clinjudge.metrics.reviewer_agreement import reviewer_agreement
from clinjudge.metrics.unit_agreement import JudgedClaim, judge_agreement, unit_results
from clinjudge.metrics.unit_labels import UnitResult, agreement_summary

#: Headline measures of a judge on the units two reviewers both labelled.
REVIEWED_KEYS = ("units", "precision", "recall", "f1", "kappa", "major_recall")


def run_names(runs: Sequence[Run]) -> list[str]:
    """Each run's directory name, made unique with ``#2``, ``#3`` … when two share one."""
    names: list[str] = []
    for run in runs:
        name, k = run.path.name or str(run.path), 2
        while name in names:
            name, k = f"{run.path.name}#{k}", k + 1
        names.append(name)
    return names


def run_provenance(name: str, run: Any) -> dict[str, Any]:
    """What ``agreement.json`` records of every run, SOAP or rubric: its name, path, manifest
    hash, package version and dataset."""
    return {
        "name": name,
        "path": str(run.path),
        "manifest_sha256": run.manifest_sha256,
        "package_version": run.manifest.get("version"),
        "dataset": (run.manifest.get("command") or {}).get("dataset"),
    }


def score_judge(
    claims: Mapping[str, list[JudgedClaim]],
    notes: LabelledNotes,
    *,
    resamples: int,
) -> tuple[dict[str, Any], list[UnitResult]]:
    """One judge's agreement entry (module docstring) from its claims by labelled note id."""
    units = {n: us for n, us in notes.units.items() if n in claims}
    results = unit_results(units, claims)
    entry: dict[str, Any] = judge_agreement(results, claims, resamples=resamples)
    entry["miss_kinds"] = {k: len(v) for k, v in misses_by_kind(results).items()}
    entry["false_flag_kinds"] = {k: len(v) for k, v in false_flags_by_kind(results, claims).items()}
    entry["disagreements"] = disagreement_list(results, claims)
    return entry, results


def on_reviewed_units(results: Sequence[UnitResult], notes: LabelledNotes) -> list[dict[str, Any]]:
    """The judge's headline measures on the units each pair of label sets both labelled."""
    out = []
    for first, second, pairs in notes.reviews:
        keys = {(a.note_id, a.unit) for a, _ in pairs}
        subset = [r for r in results if (r.unit.note_id, r.unit.unit) in keys]
        summary = agreement_summary(subset)
        out.append(
            {"first": str(first), "second": str(second)} | {k: summary[k] for k in REVIEWED_KEYS}
        )
    return out


def agreement_report(
    runs: Sequence[Run],
    sets: Sequence[LabelSet],
    units_file: Path,
    notes: LabelledNotes,
    *,
    system: str = "reference",
    checked: Mapping[Path, bool] | None = None,
    resamples: int = 1000,
) -> dict[str, Any]:
    """``agreement.json``'s content (module docstring): ``provenance`` (package version, runs
    with their manifest hashes, label files and units file with their SHA-256), ``labels``
    (counts), ``runs`` (note mapping per run), ``judges`` (one entry per run and judge) and
    ``reviewers`` (one entry per pair of label sets with units in common)."""
    label_paths = [s.path for s in sets]
    judges: list[dict[str, Any]] = []
    run_entries: list[dict[str, Any]] = []
    for name, run in zip(run_names(runs), runs, strict=True):
        matched = match_notes(run, notes.units, system, label_paths)
        run_entries.append(
            {
                **run_provenance(name, run),
                "notes": len(run.items),
                "matched_notes": len(matched),
                "unlabelled_notes": [i for i in run.items if i not in matched],
                "notes_checked_against_units": bool((checked or {}).get(run.path)),
                "judges": {j: run.manifest.get("judges", {}).get(j, {}) for j in run.judges},
            }
        )
        for judge, by_item in run.judges.items():
            claims = {matched[i]: c for i, c in by_item.items() if i in matched}
            entry, results = score_judge(claims, notes, resamples=resamples)
            judges.append(
                {"id": f"{name}:{judge}", "run": name, "judge": judge, **entry}
                | {"on_reviewed_units": on_reviewed_units(results, notes)}
            )
    return {
        "provenance": {
            "package_version": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "label_sets": [{"path": str(s.path), "files": s.files} for s in sets],
            "units_file": {"path": str(units_file), "sha256": sha256_of(units_file)},
            "runs": [
                {k: r[k] for k in ("name", "path", "manifest_sha256", "package_version")}
                for r in run_entries
            ],
        },
        "labels": {
            "notes": len(notes.units),
            "units": sum(map(len, notes.units.values())),
            "encounters": len({u.encounter for us in notes.units.values() for u in us}),
            "labels_without_unit": notes.labels_without_unit,
            "system_of_ids_without_one": system,
        },
        "runs": run_entries,
        "judges": judges,
        "reviewers": [
            {"first": str(a), "second": str(b), **reviewer_agreement(p, resamples=resamples)}
            for a, b, p in notes.reviews
        ],
    }
