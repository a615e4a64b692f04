"""The safety case over ``compare`` runs (SPEC §8 and §9): endpoints with Wilson intervals, per
system and per subgroup, and release gates on their bounds.

One system = the notes of one run directory judged by ``clinjudge compare``, or — for a run of
several systems' notes (``--systems``, ``--system-column``; items ``<encounter>/<system>``) —
each system's notes of that run (or a ``clinjudge pairs`` report of ``detect`` predictions,
for calibration). Endpoints, pooled over
the run's judged units (claims or facts; items whose calls failed are excluded and counted):

    major_hallucination_rate  = claims judged major (tier 4–5, severity major) / claims judged
    contradiction_rate        = tier-5 claims / claims judged          (SOAP judge ``--judge``)
    critical_omission_rate    = critical facts omitted / critical facts     (``omission`` judge)

each with its Wilson 95% interval; an endpoint whose judge the run lacks is absent. Claims of
one note are not independent, so these intervals are narrower than a resampling of notes
would give. Calibration needs a confidence and a correctness label per case, which ``compare``
runs do not carry: a ``pairs`` report gives ``overconfident_error_rate`` (stated confidence
≥ 0.8 and wrong, over parsed predictions; Wilson) and the Brier score (reported, not gated).

Subgroups: a metadata column of the judged items (``--metadata`` table, e.g. ACI-Bench's
``*_metadata.csv``), joined on the encounter (:mod:`clinjudge.metadata_join`): each value's
endpoints, numbers binned into age bands (< 18, 18–39,
40–64, ≥ 65); a subgroup with fewer than ``min_n`` items is named and given no rates.

Gates (:mod:`clinjudge.gates`, ``[gates]`` keyed by endpoint name): a ``max`` gate passes when
the endpoint's UPPER bound is at or below it. For a failing gate, ``clean_cases_needed`` says
how many more units with no event would bring the bound under the limit
(:func:`clinjudge.metrics.safety.clean_cases_to_pass`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinjudge.errors import ConfigError
from clinjudge.files import rows_by_key
from clinjudge.gates import Gate, evaluate_gates
from clinjudge.metadata_join import NO_METADATA
from clinjudge.metrics.intervals import clustered_wilson, wilson_interval
from clinjudge.metrics.safety import clean_cases_to_pass

ENDPOINTS = ("major_hallucination_rate", "contradiction_rate", "critical_omission_rate")
#: Calibration endpoints, read from a ``clinjudge pairs`` report of ``detect`` predictions.
CALIBRATION = ("overconfident_error_rate",)
AGE_BANDS = ((18, "<18"), (40, "18-39"), (65, "40-64"), (float("inf"), "65+"))


@dataclass
class Counts:
    """Events and units of each endpoint, summed over items."""

    events: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ENDPOINTS, 0))
    units: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ENDPOINTS, 0))
    items: int = 0

    def add(self, other: Counts) -> None:
        for e in ENDPOINTS:
            self.events[e] += other.events[e]
            self.units[e] += other.units[e]
        self.items += other.items


@dataclass
class SystemRun:
    name: str
    path: Path
    per_item: dict[str, Counts]
    excluded: int
    judges: list[str]
    #: endpoints read whole from a report (calibration of detect predictions), no items
    given: dict[str, dict[str, Any]] = field(default_factory=dict)
    brier: float | None = None
    #: the system's name inside a run of several systems (its items end in ``/<system>``)
    system: str | None = None
    #: every system the run holds (to find an item's encounter)
    run_systems: list[str] = field(default_factory=list)
    #: the items whose calls failed (counted in ``excluded``)
    excluded_ids: list[str] = field(default_factory=list)


def load_runs(paths: list[Path], soap_judge: str) -> list[SystemRun]:
    """One :class:`SystemRun` per system: a run directory of one system as it is, a run of
    several systems split by system (named ``<system>``, or ``<run>/<system>`` when several
    run directories are given).

    Raises:
        ConfigError: as :func:`load_run`; two systems under one name.
    """
    found: list[SystemRun] = []
    for path in paths:
        run = load_run(path, soap_judge)
        systems = _systems_of(path) if run.per_item or run.excluded else []
        if len(systems) < 2:
            found.append(run)
            continue
        for system in systems:
            mine = {i: c for i, c in run.per_item.items() if i.endswith(f"/{system}")}
            name = system if len(paths) == 1 else f"{run.name}/{system}"
            failed = sum(1 for i in run.excluded_ids if i.endswith(f"/{system}"))
            found.append(
                SystemRun(name, path, mine, failed, run.judges, system=system, run_systems=systems)
            )
    names = [r.name for r in found]
    if len(set(names)) != len(names):
        raise ConfigError("two run directories share a name; give each system its own")
    return found


def _systems_of(path: Path) -> list[str]:
    """The systems a compare run's report names (``[]``: a run of one system)."""
    try:
        report = json.loads((path / "report.json").read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ConfigError(f"{path}/report.json is not JSON") from None
    systems = (report.get("systems") or {}).get("systems") if isinstance(report, dict) else None
    return [str(s) for s in systems] if isinstance(systems, list) else []


def item_counts(soap: dict[str, Any] | None, omission: dict[str, Any] | None) -> Counts:
    """One item's events and units (module docstring)."""
    c = Counts(items=1)
    if soap is not None:
        verdicts = soap.get("verdicts") or []
        for e in ("major_hallucination_rate", "contradiction_rate"):
            c.units[e] = len(verdicts)
        c.events["major_hallucination_rate"] = sum(
            1 for v in verdicts if v.get("tier", 0) >= 4 and v.get("severity") == "major"
        )
        c.events["contradiction_rate"] = sum(1 for v in verdicts if v.get("tier") == 5)
    if omission is not None and omission.get("facts") is not None:
        c.units["critical_omission_rate"] = omission["n_critical"]
        c.events["critical_omission_rate"] = omission["n_critical_omitted"]
    return c


def load_run(path: Path, soap_judge: str) -> SystemRun:
    """A compare run's per-item counts.

    Raises:
        ConfigError: not a compare run, or it has neither the SOAP judge nor ``omission``.
    """
    rows_dir = path / "runs"
    if (path / "report.json").is_file() and not rows_dir.is_dir():
        return _calibration_run(path)
    if not (path / "report.json").is_file() or not rows_dir.is_dir():
        raise ConfigError(f"{path}: not a compare run directory (no report.json and runs/)")
    judges = sorted(p.stem for p in rows_dir.glob("*.jsonl"))
    wanted = [j for j in (soap_judge, "omission") if j in judges]
    if not wanted:
        raise ConfigError(
            f"{path}: no {soap_judge} or omission rows (it has {', '.join(judges) or 'none'})"
        )
    rows = {j: rows_by_key(rows_dir / f"{j}.jsonl") for j in wanted}
    ids = list(dict.fromkeys(i for r in rows.values() for i in r))
    per_item: dict[str, Counts] = {}
    excluded: list[str] = []
    for item_id in ids:
        soap = rows.get(soap_judge, {}).get(item_id)
        omission = rows.get("omission", {}).get(item_id)
        failed = [r for r in (soap, omission) if r is not None and _failed(r)]
        if failed:
            excluded.append(item_id)
            continue
        per_item[item_id] = item_counts(soap, omission)
    return SystemRun(path.name, path, per_item, len(excluded), wanted, excluded_ids=excluded)


def _calibration_run(path: Path) -> SystemRun:
    """A ``clinjudge pairs`` report of ``detect`` predictions: its overconfident errors (stated
    confidence ≥ 0.8 and wrong, Wilson interval) and Brier score.

    Raises:
        ConfigError: the report has no calibration block.
    """
    try:
        report = json.loads((path / "report.json").read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ConfigError(f"{path}/report.json is not JSON") from None
    calibration = report.get("calibration") if isinstance(report, dict) else None
    if not isinstance(calibration, dict):
        raise ConfigError(f"{path}: neither a compare run nor a pairs report with calibration")
    over = calibration.get("overconfident_error") or {}
    given = {}
    if over.get("n"):
        given["overconfident_error_rate"] = {
            "value": over["value"],
            "ci95": over["ci95"],
            "n": over["n"],
            "events": over["k"],
        }
    return SystemRun(path.name, path, {}, 0, ["detect"], given, calibration.get("brier"))


def _failed(row: dict[str, Any]) -> bool:
    return bool(row.get("retry")) or bool(row.get("failure"))


def endpoints(counts: Counts, per_item: list[Counts] | None = None) -> dict[str, dict[str, Any]]:
    """Each endpoint with units: value, Wilson ci95, n (units), events; with ``per_item``, also
    the interval that accounts for clustering by item (``ci95_clustered``: design-effect
    Wilson, :func:`clustered_wilson`) and its ``design_effect``."""
    out = {}
    for e in ENDPOINTS:
        k, n = counts.events[e], counts.units[e]
        if n == 0:
            continue
        out[e] = {"value": k / n, "ci95": list(wilson_interval(k, n)), "n": n, "events": k}
        clustered = (
            clustered_wilson([c.events[e] for c in per_item], [c.units[e] for c in per_item])
            if per_item
            else None
        )
        if clustered is not None:
            out[e]["ci95_clustered"] = list(clustered.ci95)
            out[e]["design_effect"] = round(clustered.design_effect, 3)
            out[e]["clusters"] = clustered.clusters
    return out


def subgroup_of(value: Any) -> str:
    """A metadata value as a subgroup label; numbers (ages) in bands."""
    if value == NO_METADATA:
        return NO_METADATA
    if value is None:
        return "(blank)"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return next(label for limit, label in AGE_BANDS if value < limit)
    return str(value).strip() or "(blank)"


def system_case(
    run: SystemRun,
    gates: list[Gate],
    groups: dict[str, Any] | None,
    min_n: int,
) -> dict[str, Any]:
    """One system's endpoints, gate results and subgroups."""
    total = Counts()
    for c in run.per_item.values():
        total.add(c)
    found = {**endpoints(total, list(run.per_item.values())), **run.given}
    results = []
    for r in evaluate_gates(found, [g for g in gates if g.metric in found]):
        entry = found[r.gate.metric]
        need = 0 if r.passed else clean_cases_to_pass(entry["events"], entry["n"], r.gate.limit)
        results.append(
            {
                "endpoint": r.gate.metric,
                "kind": r.gate.kind,
                "limit": r.gate.limit,
                "value": r.value,
                "bound": r.bound,
                "n": r.n,
                "passed": r.passed,
                "reason": r.reason,
                "clean_cases_needed": need if r.gate.kind == "max" else None,
            }
        )
    missing = [g.metric for g in gates if g.metric not in found]
    for metric in missing:
        results.append({"endpoint": metric, "passed": False, "reason": "not measured by this run"})
    case: dict[str, Any] = {
        "system": run.name,
        "run_dir": str(run.path),
        "run_system": run.system,
        "judges": run.judges,
        "n_items": total.items,
        "excluded_items": run.excluded,
        "endpoints": found,
        "brier_score": run.brier,
        "gates": results,
        "passed": all(r["passed"] for r in results),
    }
    if groups is not None and run.per_item:
        case["subgroups"] = _subgroups(run, groups, min_n)
    return case


def _subgroups(run: SystemRun, groups: dict[str, Any], min_n: int) -> dict[str, Any]:
    by: dict[str, Counts] = {}
    members: dict[str, list[Counts]] = {}
    for item_id, c in run.per_item.items():
        label = subgroup_of(groups[item_id]) if item_id in groups else NO_METADATA
        by.setdefault(label, Counts()).add(c)
        members.setdefault(label, []).append(c)
    out = {}
    for label, c in sorted(by.items()):
        enough = c.items >= min_n
        out[label] = {
            "n_items": c.items,
            "enough_cases": enough,
            "endpoints": endpoints(c, members[label]) if enough else {},
        }
    return out


def calibration_note() -> str:
    return (
        "overconfident errors and the Brier score need a confidence and a correctness label "
        "per case: they are read from clinjudge pairs reports of detect predictions given "
        "as runs; compare runs carry neither"
    )
