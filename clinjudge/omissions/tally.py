"""Counts and rates of one note's fact statuses (SPEC §9 "Omissions"):

    omission rate           = omitted / facts
    critical-omission rate  = omitted critical / critical facts
    contradiction rate      = contradicted / facts

each ``None`` when its denominator is 0. A row that failed has no facts and every rate
``None``.
"""

from __future__ import annotations

from typing import Any


def tally(checked: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The row's counts and rates (module docstring) with its checked facts."""
    facts = checked or []
    critical = [f for f in facts if f["importance"] == "critical"]
    omitted = [f for f in facts if f["status"] == "omitted"]
    counts = {
        "n_facts": len(facts),
        "n_omitted": len(omitted),
        "n_contradicted": sum(1 for f in facts if f["status"] == "contradicted"),
        "n_critical": len(critical),
        "n_critical_omitted": sum(1 for f in critical if f["status"] == "omitted"),
    }
    return {
        **counts,
        "omission_rate": _rate(counts["n_omitted"], counts["n_facts"]),
        "critical_omission_rate": _rate(counts["n_critical_omitted"], counts["n_critical"]),
        "contradiction_rate": _rate(counts["n_contradicted"], counts["n_facts"]),
        "facts": facts if checked is not None else None,
    }


def _rate(k: int, n: int) -> float | None:
    return k / n if n else None
