"""Release gates over a report's intervals (SPEC §8), read from a TOML file (stdlib ``tomllib``).

    # gates.toml
    min_n = 100                                   # optional: cases every gated metric needs
    [gates]
    parse_failures = { max = 0.05 }               # upper 95% bound must be <= 0.05
    flag_rate = 0.7                               # a bare number is a max
    bcr = { min = 0.25, min_n = 200 }             # higher is better: lower bound >= 0.25
    "eca.tp_localization" = { min = 0.5 }         # dotted path into report.json
    "systems.by_system.inference-aware.*.major_rate" = { max = 0.05 }   # * : every system

A ``*`` segment stands for every key at that level: the gate is checked once per match (one
result per system of a multi-system run), each result naming its own path.

A metric is any object of the report with ``ci95`` (and usually ``value``, ``n``); the rule
lives in :func:`clinjudge.metrics.safety.passes_gate`: a ``max`` gate passes only when the UPPER
bound is at or below it, a ``min`` gate only when the LOWER bound is at or above it, so a small
sample cannot pass by luck. A gate with ``min_n`` (or the file's ``min_n``) also fails when the
metric rests on fewer cases.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from clinjudge.metrics.safety import passes_gate


class GateError(ValueError):
    """A gate file or report that cannot be evaluated; the message is one line."""


@dataclass(frozen=True)
class Gate:
    metric: str
    kind: Literal["max", "min"]
    limit: float
    min_n: int | None = None


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    value: float | None
    bound: float | None  # the upper bound for a max gate, the lower bound for a min gate
    n: int | None
    passed: bool
    reason: str = ""
    #: the metric's path in the report (the gate's own, or one match of its ``*``)
    path: str = ""


def _limit(metric: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise GateError(f"gate {metric!r}: {key} must be a number, got {value!r}")
    return float(value)


def _min_n(metric: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GateError(f"gate {metric!r}: min_n must be a non-negative integer, got {value!r}")
    return value


def parse_gates(config: dict[str, Any]) -> list[Gate]:
    """Gates of a parsed TOML document (see the module docstring)."""
    unknown = sorted(set(config) - {"gates", "min_n"})
    if unknown:
        raise GateError(f"unknown top-level key(s) {', '.join(unknown)}; expected [gates], min_n")
    table = config.get("gates")
    if not isinstance(table, dict) or not table:
        raise GateError("no [gates] table with at least one gate")
    default_n = _min_n("(file)", config.get("min_n"))
    gates: list[Gate] = []
    for metric, spec in table.items():
        if not isinstance(spec, dict):
            gates.append(Gate(metric, "max", _limit(metric, "max", spec), default_n))
            continue
        extra = sorted(set(spec) - {"max", "min", "min_n"})
        if extra:
            raise GateError(f"gate {metric!r}: unknown key(s) {', '.join(extra)}")
        if "max" not in spec and "min" not in spec:
            raise GateError(f"gate {metric!r}: needs max or min")
        n = _min_n(metric, spec.get("min_n", default_n))
        for kind in ("max", "min"):
            if kind in spec:
                gates.append(Gate(metric, kind, _limit(metric, kind, spec[kind]), n))
    return gates


def load_gates(path: str | Path) -> list[Gate]:
    """Read and validate a gates TOML file.

    Raises:
        GateError: missing file, invalid TOML or an invalid gate.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            config = tomllib.load(handle)
    except FileNotFoundError:
        raise GateError(f"gates file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise GateError(f"{path}: invalid TOML ({exc})") from None
    return parse_gates(config)


def gateable(report: dict[str, Any], prefix: str = "") -> list[str]:
    """The dotted path of every object of ``report`` with a ``ci95``: the metrics a gate can
    name (``judges.inference-aware.headline.hallucination_rate``, ``bcr``, ...). An object with
    a ``ci95`` is listed and still searched (a judge's summary holds its headline)."""
    found: list[str] = []
    for key, value in report.items():
        if not isinstance(value, dict):
            continue
        path = f"{prefix}{key}"
        if "ci95" in value:
            found.append(path)
        found += gateable(value, f"{path}.")
    return found


def system_wildcards(paths: list[str]) -> list[str]:
    """The ``*`` form of every per-system metric among ``paths``
    (``systems.by_system.J.S.M`` → ``systems.by_system.J.*.M``), each once, in order: the
    path a gate names to check every system of a run."""
    found: dict[str, None] = {}
    for path in paths:
        parts = path.split(".")
        if len(parts) == 5 and parts[:2] == ["systems", "by_system"]:
            found[".".join([*parts[:3], "*", parts[4]])] = None
    return list(found)


def expand(report: dict[str, Any], metric: str) -> list[str]:
    """The concrete paths a gate's metric names: itself, or with each ``*`` segment replaced
    by every key at that level that leads to an object of the report.

    Raises:
        GateError: a ``*`` that matches nothing (the message names what the report has).
    """
    paths: list[tuple[str, Any]] = [("", report)]
    for part in metric.split("."):
        step = []
        for path, node in paths:
            if not isinstance(node, dict):
                continue
            keys = [k for k in node if isinstance(node[k], dict)] if part == "*" else [part]
            step += [(f"{path}.{k}" if path else k, node.get(k)) for k in keys]
        paths = step
    if "*" in metric.split(".") and not paths:
        known = gateable(report)
        raise GateError(f"metric {metric!r} matches nothing in the report; it has {known[:6]}")
    return [path for path, _ in paths] or [metric]


def lookup(report: dict[str, Any], metric: str) -> dict[str, Any]:
    """The object at a dotted path of the report; it must carry a two-number ``ci95``.

    Raises:
        GateError: no such path (the message names a few the report has), or no ``ci95``.
    """
    node: Any = report
    for part in metric.split("."):
        if not isinstance(node, dict) or part not in node:
            known = gateable(report)
            some = ", ".join(known[:6]) + (f" (+{len(known) - 6} more)" if len(known) > 6 else "")
            raise GateError(
                f"metric {metric!r} not in the report; it has {some or 'no metric with a ci95'}"
                " (clinjudge gate REPORT --list)"
            )
        node = node[part]
    if not isinstance(node, dict) or "ci95" not in node:
        raise GateError(f"metric {metric!r} has no 95% interval (ci95) to gate on")
    return node


def evaluate_gates(report: dict[str, Any], gates: list[Gate]) -> list[GateResult]:
    """Check every gate against the report (see the module docstring for the rule), once per
    path its metric names (:func:`expand`)."""
    results = []
    for gate in gates:
        for path in expand(report, gate.metric):
            entry = lookup(report, path)
            ci = entry.get("ci95")
            valid = isinstance(ci, list | tuple) and len(ci) == 2
            bound = (ci[1] if gate.kind == "max" else ci[0]) if valid else None
            n = entry.get("n")
            passed = passes_gate(ci if valid else None, **{gate.kind: gate.limit})
            reason = "" if passed else "bound beyond limit" if bound is not None else "no interval"
            if gate.min_n is not None and (n is None or n < gate.min_n):
                passed, reason = False, f"n = {n} < min_n = {gate.min_n}"
            results.append(GateResult(gate, entry.get("value"), bound, n, passed, reason, path))
    return results
