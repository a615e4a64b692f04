"""How far a jury's jurors agree on a rubric (issue 39 item 3): ``report.json``'s ``jury`` block
of a rubric judge graded by ``--jury``.

Every (item, criterion) the jury graded is a subject; the block is
:func:`clinjudge.metrics.jury.jury_agreement` over them (Fleiss' κ, ties, subjects no juror voted
on, each juror's agreement with the verdict), plus ``by_criterion[c]``: Fleiss' κ over the items
for criterion c with its observed agreement, the items where the jurors split (not unanimous)
and the ties.
"""

from __future__ import annotations

from typing import Any

from clinjudge.metrics.jury import JurySubject, jury_agreement


def jury_summary(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``jury`` block (module docstring); ``None`` when no criterion was graded by a jury."""
    cells = [c for r in rows for c in r.get("criteria") or [] if c.get("jurors")]
    if not cells:
        return None
    names = list(dict.fromkeys(n for c in cells for n in c["jurors"]))
    by_criterion: dict[str, list[JurySubject]] = {}
    subjects = []
    for c in cells:
        subject = _subject(c)
        subjects.append(subject)
        by_criterion.setdefault(c["id"], []).append(subject)
    out = jury_agreement(subjects, names)
    out["by_criterion"] = {cid: _criterion(found) for cid, found in by_criterion.items()}
    return out


def _subject(cell: dict[str, Any]) -> JurySubject:
    """A criterion's votes (met, or the level), its failed jurors and the jury's verdict."""
    votes = {
        n: g["level"] if g.get("level") is not None else bool(g["met"])
        for n, g in cell["jurors"].items()
        if g["status"] == "graded"
    }
    failed = [n for n, g in cell["jurors"].items() if g["status"] in ("parse_failure", "error")]
    verdict = None
    if cell["status"] == "graded":
        verdict = float(cell["level"]) if cell.get("level") is not None else bool(cell["met"])
    return JurySubject(votes, verdict, failed)


def _criterion(subjects: list[JurySubject]) -> dict[str, Any]:
    agreement = jury_agreement(subjects, [])
    return {
        **agreement["kappa"],
        "items": len(subjects),
        "split": sum(1 for s in subjects if len(set(s.votes.values())) > 1),
        "ties": agreement["ties"],
    }
