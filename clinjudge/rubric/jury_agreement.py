"""How far a jury's jurors agree (issue 39 item 3), for ``report.json``'s ``jury`` block of a
rubric judge graded by ``--jury``.

Every (item, criterion) the jury graded is a subject; each juror who voted rates it met / not
met (or a level 1..N, taken as a category). Then

    kappa            Fleiss' κ over every subject (:func:`clinjudge.metrics.fleiss.fleiss_kappa`:
                     κ = (P̄ − P̄_e) / (1 − P̄_e)), with the observed agreement P̄
    by_criterion[c]  Fleiss' κ over the items for criterion c, the items where the jurors split
                     (not unanimous) and the ties
    by_juror[j]      the subjects j voted on and failed on, and its agreement with the jury's
                     verdict: the share of the decided (not tied) subjects it voted with the
                     majority on, and Cohen's κ of its labels against the verdicts (SPEC §9;
                     :func:`clinjudge.metrics.agreement.cohen_kappa`) — on levels, the mean
                     absolute difference between its level and the jury's mean
    ties, no_votes   subjects tied, and subjects no juror voted on

A juror's own vote is part of the majority it is compared with, so with few jurors its
agreement reads high; κ between jurors is the number to trust.
"""

from __future__ import annotations

import math
from typing import Any

from clinjudge.metrics.fleiss import fleiss_kappa, label_counts


def jury_summary(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``jury`` block (module docstring); ``None`` when no criterion was graded by a jury."""
    cells = [c for r in rows for c in r.get("criteria") or [] if c.get("jurors")]
    if not cells:
        return None
    names = list(dict.fromkeys(n for c in cells for n in c["jurors"]))
    by_criterion: dict[str, list[dict[str, Any]]] = {}
    for c in cells:
        by_criterion.setdefault(c["id"], []).append(c)
    return {
        "jurors": names,
        "subjects": len(cells),
        "kappa": fleiss_kappa(label_counts(_labels(c)) for c in cells).as_dict(),
        "ties": sum(1 for c in cells if c["status"] == "tie"),
        "no_votes": sum(1 for c in cells if c["votes"]["voted"] == 0),
        "by_criterion": {cid: _criterion(found) for cid, found in by_criterion.items()},
        "by_juror": {n: _juror(n, cells) for n in names},
    }


def _labels(cell: dict[str, Any]) -> list[Any]:
    """The labels the jurors who voted gave a subject: met (bool) or a level."""
    return [
        g["level"] if g.get("level") is not None else g["met"]
        for g in cell["jurors"].values()
        if g["status"] == "graded"
    ]


def _criterion(cells: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        **fleiss_kappa(label_counts(_labels(c)) for c in cells).as_dict(),
        "items": len(cells),
        "split": sum(1 for c in cells if len(set(_labels(c))) > 1),
        "ties": sum(1 for c in cells if c["status"] == "tie"),
    }


def _juror(name: str, cells: list[dict[str, Any]]) -> dict[str, Any]:
    from clinjudge.metrics.agreement import cohen_kappa

    mine = [(c, c["jurors"].get(name) or {}) for c in cells]
    voted = [(c, g) for c, g in mine if g.get("status") == "graded"]
    out: dict[str, Any] = {
        "voted": len(voted),
        "failed": sum(1 for _, g in mine if g.get("status") in ("parse_failure", "error")),
    }
    decided = [(c, g) for c, g in voted if c["status"] == "graded"]
    if any(g.get("level") is not None for _, g in decided):
        gaps = [abs(g["level"] - c["level"]) for c, g in decided]
        out["mean_abs_difference"] = sum(gaps) / len(gaps) if gaps else None
        out["n"] = len(gaps)
        return out
    own = [bool(g["met"]) for _, g in decided]
    jury = [bool(c["met"]) for c, _ in decided]
    out["agreement"] = (
        sum(a == b for a, b in zip(own, jury, strict=True)) / len(own) if own else None
    )
    kappa = cohen_kappa(own, jury) if own else math.nan
    out["kappa"] = None if math.isnan(kappa) else kappa
    out["n"] = len(own)
    return out
