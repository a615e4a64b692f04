"""Agreement of the rubric judges of one or more compare runs with human criterion labels, and
of the labellers with each other (issue 39 item 6): what ``clinjudge agreement`` writes for a
rubric run.

Per run, rubric judge and labeller, over the (item, criterion) pairs the labeller labelled and
the judge graded: :func:`~clinjudge.metrics.criterion_agreement.met_agreement` (agreement,
macro F1, κ) or :func:`~clinjudge.metrics.criterion_agreement.level_agreement` (exact,
within-one, quadratic κ; a jury's mean level taken to the nearest level), with bootstrap
intervals resampling encounters (the part of an item id before ``/``, else the item); per
criterion id the agreement share; the length bias
(:func:`clinjudge.metrics.length_bias.length_bias`: item scores from the grader's verdicts and
from the labeller's on the same criteria, the HealthBench score of ``met`` rubrics or the mean
of (level − 1)/(N − 1) of ``scale`` ones, before any critical gate); and the disagreements.
Beside every rate, what was left out: labelled criteria the grader did not grade (parse
failure, call error, "needs a model", a jury's tie), labels naming no graded criterion of the
run, and graded criteria of labelled items with no label. Per pair of labellers, on the pairs
both labelled: the same measures, the first as the reference — the ceiling a grader is read
against.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from typing import Any

from clinjudge import __version__
from clinjudge.agreement.labels import SYSTEM_SEP
from clinjudge.agreement.rubric_labels import CriterionLabel, CriterionLabels, Key
from clinjudge.agreement.rubric_runs import RubricJudge, RubricRun, words
from clinjudge.agreement.scores import run_names, run_provenance
from clinjudge.errors import ConfigError
from clinjudge.metrics.criterion_agreement import level_agreement, met_agreement, per_criterion
from clinjudge.metrics.length_bias import length_bias
from clinjudge.rubric.scoring import healthbench_score, scale_score

#: Disagreements kept per grader and labeller in the report.
MAX_DISAGREEMENTS = 50
NOT_GRADED = ("parse_failure", "error", "needs_model", "tie")


def encounter_of(item: str) -> str:
    return item.split(SYSTEM_SEP, 1)[0]


def measures(
    mode: str, truth: list[Any], graded: list[Any], items: list[str], resamples: int, seed: int
) -> dict[str, Any]:
    clusters = [encounter_of(i) for i in items]
    score = met_agreement if mode == "met" else level_agreement
    return score(truth, graded, clusters, resamples=resamples, seed=seed)


def _value(grade: dict[str, Any], mode: str) -> Any:
    """The grader's verdict; a jury's mean level (4.33) to the nearest level, halves up."""
    return bool(grade["met"]) if mode == "met" else math.floor(float(grade["level"]) + 0.5)


def _check_kind(label: CriterionLabel, mode: str, judge: str) -> None:
    if isinstance(label.value, bool) != (mode == "met"):
        given = "met / not met" if isinstance(label.value, bool) else f"level {label.value}"
        wanted = "met / not met" if mode == "met" else "levels 1..N"
        raise ConfigError(
            f"{label.where}: label: {given}, but {judge} grades {wanted}; label the rubric's "
            "kind of verdict"
        )


def item_score(grades: list[dict[str, Any]], mode: str) -> float | None:
    return healthbench_score(grades) if mode == "met" else scale_score(grades)


def against_labeller(
    judge: RubricJudge,
    labels: Mapping[Key, CriterionLabel],
    notes: Mapping[str, str] | None,
    *,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    """One judge against one labeller (module docstring)."""
    mode = judge.mode
    excluded = dict.fromkeys((*NOT_GRADED, "label_not_in_run", "unlabelled"), 0)
    pairs: list[tuple[CriterionLabel, dict[str, Any]]] = []
    for (item, cid), label in labels.items():
        grade = judge.grades.get(item, {}).get(cid)
        if grade is None:
            excluded["label_not_in_run"] += 1
        elif grade.get("status") != "graded":
            status = grade.get("status")
            excluded[status if status in NOT_GRADED else "error"] += 1
        else:
            _check_kind(label, mode, judge.name)
            pairs.append((label, grade))
    labelled_items = {item for item, _ in labels}
    for item in labelled_items & set(judge.grades):
        graded = [c for c, g in judge.grades[item].items() if g.get("status") == "graded"]
        excluded["unlabelled"] += sum(1 for c in graded if (item, c) not in labels)
    truth = [label.value for label, _ in pairs]
    calls = [_value(grade, mode) for _, grade in pairs]
    items = [label.item for label, _ in pairs]
    entry = measures(mode, truth, calls, items, resamples, seed)
    entry["excluded"] = excluded
    entry["per_criterion"] = per_criterion(
        [(label.criterion, h, g) for (label, _), h, g in zip(pairs, truth, calls, strict=True)]
    )
    entry["length_bias"] = _length_bias(pairs, mode, notes, resamples, seed)
    entry["disagreements"] = _disagreements(pairs, mode)
    return entry


def _length_bias(
    pairs: list[tuple[CriterionLabel, dict[str, Any]]],
    mode: str,
    notes: Mapping[str, str] | None,
    resamples: int,
    seed: int,
) -> dict[str, Any]:
    if notes is None:
        return {"unavailable": "the run's dataset could not be read (no note lengths)"}
    by_item: dict[str, list[tuple[CriterionLabel, dict[str, Any]]]] = {}
    for label, grade in pairs:
        by_item.setdefault(label.item, []).append((label, grade))
    rows = []
    for item, got in by_item.items():
        if item not in notes:
            continue
        key = "met" if mode == "met" else "level"
        grader = item_score([g for _, g in got], mode)
        human = item_score([g | {key: label.value} for label, g in got], mode)
        if grader is not None and human is not None:
            rows.append((grader, human, words(notes[item]), encounter_of(item)))
    if not rows:
        return {"n": 0, "unavailable": "no item has both scores"}
    g, h, w, c = (list(x) for x in zip(*rows, strict=True))
    return length_bias(g, h, w, c, resamples=resamples, seed=seed)


def _disagreements(
    pairs: list[tuple[CriterionLabel, dict[str, Any]]], mode: str
) -> list[dict[str, Any]]:
    """Pairs where the grader and the labeller differ: for levels, widest gap first."""
    found = [
        {
            "item": label.item,
            "criterion": label.criterion,
            "text": grade.get("text", ""),
            "human": label.value,
            "grader": _value(grade, mode),
            "reason": grade.get("reason", ""),
            "comment": label.comment,
        }
        for label, grade in pairs
        if label.value != _value(grade, mode)
    ]
    if mode != "met":
        found.sort(key=lambda d: -abs(d["human"] - d["grader"]))
    return found[:MAX_DISAGREEMENTS]


def between_labellers(
    first: str, second: str, labels: CriterionLabels, *, resamples: int, seed: int
) -> dict[str, Any] | None:
    """The second labeller as a grader against the first, on the pairs both labelled."""
    a, b = labels.by_labeller[first], labels.by_labeller[second]
    shared = [k for k in a if k in b]
    if not shared:
        return None
    kinds = {isinstance(a[k].value, bool) for k in shared} | {
        isinstance(b[k].value, bool) for k in shared
    }
    if len(kinds) > 1:
        raise ConfigError(f"labellers {first!r} and {second!r} label different kinds of verdict")
    mode = "met" if kinds == {True} else "scale"
    truth = [a[k].value for k in shared]
    other = [b[k].value for k in shared]
    entry = measures(mode, truth, other, [k[0] for k in shared], resamples, seed)
    return {
        "first": first,
        "second": second,
        "mode": mode,
        "only_first": len(a) - len(shared),
        "only_second": len(b) - len(shared),
        **entry,
    }


def rubric_agreement_report(
    runs: Sequence[RubricRun],
    labels: CriterionLabels,
    notes: Mapping[str, Mapping[str, str] | None],
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """``agreement.json`` of rubric runs (module docstring); ``notes``: each run's note texts
    by item id, by run path (``None`` when its dataset could not be read)."""
    graders, run_entries = [], []
    for name, run in zip(run_names(runs), runs, strict=True):  # type: ignore[arg-type]
        texts = notes.get(str(run.path))
        run_entries.append(
            {
                **run_provenance(name, run),
                "items": len(run.items),
                "note_lengths": texts is not None,
                "judges": {
                    j.name: run.manifest.get("judges", {}).get(j.name, {}) for j in run.judges
                },
            }
        )
        for judge in run.judges:
            against = [
                {"labeller": who}
                | against_labeller(judge, given, texts, resamples=resamples, seed=seed)
                for who, given in labels.by_labeller.items()
            ]
            graders.append(
                {"id": f"{name}:{judge.name}", "run": name, "judge": judge.name}
                | {"mode": judge.mode, "against": against}
            )
    names = labels.labellers
    between = [
        found
        for i, first in enumerate(names)
        for second in names[i + 1 :]
        if (found := between_labellers(first, second, labels, resamples=resamples, seed=seed))
    ]
    return {
        "kind": "rubric",
        "provenance": {
            "package_version": __version__,
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "label_files": [{"path": p, "sha256": h} for p, h in labels.files.items()],
            "runs": [
                {k: r[k] for k in ("name", "path", "manifest_sha256", "package_version")}
                for r in run_entries
            ],
            "resamples": resamples,
            "seed": seed,
        },
        "labels": {
            who: {"labels": len(given), "items": len({i for i, _ in given})}
            for who, given in labels.by_labeller.items()
        },
        "runs": run_entries,
        "graders": graders,
        "labellers": between,
    }
