"""A jury's verdict on one criterion (issue 39 item 3; MedHELM's LLM-as-jury): every juror
grades the same criterion with the same prompt, and (:mod:`clinjudge.metrics.jury`)

    met / not met : the majority of the jurors who voted; as many met as not met is a ``tie``
                    — recorded and counted, never broken by a guess, and not scored (like a
                    criterion no juror graded);
    levels 1..N   : the mean of the levels given (a float: 4, 5, 4 → 4.33).

A juror whose reply gave no valid verdict for the criterion (a parse failure) or whose call
failed (an error) is left out of that criterion's vote: ``votes`` says how many jurors voted
of how many sat. A criterion no juror voted on is not graded (``error`` when a juror's call
failed, else ``parse_failure``). Every juror's own verdict stays on the criterion under
``jurors`` (status, met or level, reason, cited turns), so a reviewer sees where they split;
the verdict cites the turns of the jurors on the winning side (every voter's, for levels).
A critical scale criterion fails its gate when the mean is 1: every voter gave level 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clinjudge.metrics.jury import majority, mean_level
from clinjudge.rubric.grades import base, graded_level, graded_met, not_graded
from clinjudge.rubric.model import Criterion

#: The grader a jury's verdicts are counted under (``graded_by``).
JURY = "jury"


def jury_grade(criterion: Criterion, verdicts: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """The jury's grade of ``criterion`` from each juror's grade of it, by juror name (module
    docstring)."""
    voted = {n: g for n, g in verdicts.items() if g.get("status") == "graded"}
    silent = [n for n in verdicts if n not in voted]
    left_out = f"; no verdict from {', '.join(silent)}" if silent else ""
    if not voted:
        kind = "error" if any(g.get("status") == "error" for g in verdicts.values()) else None
        reasons = "; ".join(f"{n}: {g.get('reason', '')}" for n, g in verdicts.items())
        out = not_graded(criterion, kind or "parse_failure", f"no juror gave a verdict ({reasons})")
        tally: dict[str, Any] = {}
    elif any(g.get("level") is not None for g in voted.values()):
        levels = {n: g["level"] for n, g in voted.items()}
        top = max(g["top_level"] for g in voted.values())
        said = ", ".join(f"{n} {level}" for n, level in levels.items())
        out = graded_level(
            criterion,
            mean_level(levels) or 0.0,
            top,
            reason=f"jury: mean of levels ({said}){left_out}",
            turns=_turns(voted.values()),
        )
        out["graded_by"] = JURY
        tally = {"levels": list(levels.values())}
    else:
        votes = {n: bool(g["met"]) for n, g in voted.items()}
        verdict, winners = majority(votes)
        met = [n for n, v in votes.items() if v]
        unmet = [n for n, v in votes.items() if not v]
        tally = {"met": len(met), "not_met": len(unmet)}
        split = f"met: {', '.join(met) or 'none'}; not met: {', '.join(unmet) or 'none'}"
        if verdict is None:
            out = {
                **base(criterion),
                "status": "tie",
                "reason": f"jury tied {len(met)}-{len(unmet)} ({split}){left_out}",
                "graded_by": None,
            }
        else:
            out = graded_met(
                criterion,
                bool(verdict),
                reason=f"jury {len(winners)} of {len(voted)} ({split}){left_out}",
                turns=_turns(voted[n] for n in winners),
                note_span=[-1, -1],
                graded_by=JURY,
            )
    out["votes"] = {"voted": len(voted), "of": len(verdicts), **tally}
    out["jurors"] = {n: _seat(g) for n, g in verdicts.items()}
    return out


def juror_failures(item_id: str, grade: dict[str, Any]) -> list[dict[str, Any]]:
    """The failure records of a jury grade: one per juror that gave no verdict (``id``
    ``ITEM:CRITERION@JUROR``), counted by the run's failure accounting."""
    return [
        {"kind": g["status"], "id": f"{item_id}:{grade['id']}@{name}", "reason": g["reason"]}
        for name, g in (grade.get("jurors") or {}).items()
        if g["status"] in ("parse_failure", "error")
    ]


def _seat(grade: dict[str, Any]) -> dict[str, Any]:
    """What the criterion keeps of one juror's grade."""
    keep = ("status", "met", "level", "reason", "turns")
    return {k: grade[k] for k in keep if k in grade}


def _turns(grades: Any) -> list[int]:
    return sorted({t for g in grades for t in g.get("turns") or []})
