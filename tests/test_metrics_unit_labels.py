"""Agreement with sentence labels (SPEC §9): unit calls from claim spans, and the summary."""

from __future__ import annotations

import pytest

from clinjudge.metrics.unit_labels import (
    ClaimCall,
    LabelledUnit,
    UnitResult,
    agreement_summary,
    rank_agrees,
    unit_call,
)


def unit(
    note: str, i: int, label: str, severity: str | None = None, system: str = "s"
) -> LabelledUnit:
    return LabelledUnit(
        note_id=note,
        encounter=note.split("/")[0],
        system=system,
        unit=i,
        start=10 * i,
        end=10 * i + 9,
        text="x",
        label=label,
        severity=severity,  # type: ignore[arg-type]
    )


def test_unit_call_overlap_rules():
    claims = [ClaimCall(0, 5, False), ClaimCall(5, 12, True), ClaimCall(30, 40, None)]
    assert unit_call(0, 4, claims) == "cleared"
    assert unit_call(10, 20, claims) == "flagged"  # the tier 4-5 claim reaches into the unit
    assert unit_call(12, 20, claims) == "cleared"  # touching end to start is no overlap
    assert unit_call(31, 39, claims) == "unjudged"  # only a failed claim
    assert unit_call(50, 60, claims) == "cleared"  # no claim there: nothing to flag


def test_summary_counts_and_kappa():
    rows = [
        UnitResult(unit("E1/a", 1, "unsupported", "major"), "flagged"),  # TP
        UnitResult(unit("E1/a", 2, "contradicted", "minor"), "cleared"),  # FN
        UnitResult(unit("E1/a", 3, "supported"), "flagged"),  # FP
        UnitResult(unit("E1/a", 4, "supported"), "cleared"),  # TN
        UnitResult(unit("E2/a", 1, "supported"), "cleared"),  # TN
        UnitResult(unit("E2/a", 2, "unsupported", "major"), "unjudged"),  # excluded
    ]
    s = agreement_summary(rows)
    assert (s["tp"], s["fp"], s["fn"], s["tn"]) == (1, 1, 1, 2)
    assert s["units"] == 5 and s["excluded_units"] == 1
    assert s["precision"] == pytest.approx(0.5) and s["recall"] == pytest.approx(0.5)
    assert s["accuracy"] == pytest.approx(0.6)
    # p_o = 0.6; p_gold = p_judge = 0.4 → p_e = 0.16 + 0.36 = 0.52; κ = 0.08 / 0.48
    assert s["kappa"] == pytest.approx(0.08 / 0.48)
    assert s["major_recall"] == 1.0 and s["majors"] == 1  # the unjudged major is left out


def test_per_note_spearman_and_system_ranking():
    rows = []
    for note, gold, judged in (("E1/a", 1, 1), ("E2/a", 2, 2), ("E3/a", 3, 3)):
        for i in range(4):
            rows.append(
                UnitResult(
                    unit(
                        note,
                        i,
                        "unsupported" if i < gold else "supported",
                        "minor" if i < gold else None,
                    ),
                    "flagged" if i < judged else "cleared",
                )
            )
    s = agreement_summary(rows)
    assert s["note_spearman"] == pytest.approx(1.0)
    assert s["kappa"] == pytest.approx(1.0)
    systems = {
        "a": {"gold_share": 0.1, "judged_share": 0.3},
        "b": {"gold_share": 0.4, "judged_share": 0.2},
    }
    assert rank_agrees(systems) is False
    systems["b"]["judged_share"] = 0.5
    assert rank_agrees(systems) is True
