"""A jury's verdicts on a note's claims (issue 39 item 3: the SOAP judge graded by ``--jury``).

Every juror rates the same claims (cut once, by the first juror) with the same prompt. A
juror's label for a claim is whether its tier supports it (tiers 1–3 supported, 4–5 not; SPEC
§1), and the jury's label is the majority of the jurors who gave a verdict
(:func:`clinjudge.metrics.jury.majority`):

    verdict      the verdict of the juror with the median tier among the winning side (the
                 lower median), its rationale prefixed ``jury 2 of 3 (…):``, so tier, subtype,
                 evidence and severity are one juror's, never a blend
    tie          as many jurors say supported as not: no verdict, never a guess; the claim is
                 in neither rate and counted under the row's ``jury`` (``ties``)
    no vote      no juror gave a verdict: the claim's failure is the jury's (``error`` when a
                 juror's call failed, else ``parse_failure``), excluded as a failure always is

A juror without a verdict for a claim (its reply left it out or could not be read, its call
failed) is left out of that claim's vote and recorded in ``juror_failures`` (claim id
``CLAIM@JUROR``), which the run's failure accounting counts. The row keeps, per claim, each
juror's tier and label and the vote (``jury``), so a reviewer sees where the jurors split.
"""

from __future__ import annotations

from typing import Any

from clinjudge.metrics.jury import JurySubject, majority
from clinjudge.types import TIERS


def jury_row(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The note's row from each juror's row, by juror name, in order (module docstring); the
    rows rate the same claims."""
    first = next(iter(rows.values()))
    tiers = {n: {v["claim_id"]: v for v in r.get("verdicts") or []} for n, r in rows.items()}
    failed = {n: {f["claim_id"]: f for f in r.get("failures") or []} for n, r in rows.items()}
    verdicts, failures, votes = [], [], {}
    for claim in first["claims"]:
        cid = claim["id"]
        said = {n: mine[cid] for n, mine in tiers.items() if cid in mine}
        labels = {n: TIERS[v["tier"]][1] for n, v in said.items()}
        winner, side = majority(labels)
        lost = {n: mine[cid] for n, mine in failed.items() if cid in mine and n not in said}
        votes[cid] = {
            "jurors": {
                **{n: {"tier": v["tier"], "supported": labels[n]} for n, v in said.items()},
                **{n: {"status": f["kind"]} for n, f in lost.items()},
            },
            "supported": winner,
            "voted": len(said),
            "of": len(rows),
        }
        if said and winner is not None:
            verdicts.append(_median_verdict([said[n] for n in side], len(side), len(said)))
        elif not said:
            kind = "error" if any(f["kind"] == "error" for f in lost.values()) else "parse_failure"
            reason = "; ".join(f"{n}: {f['reason']}" for n, f in lost.items()) or "no verdict"
            failures.append({"claim_id": cid, "kind": kind, "reason": f"no juror voted ({reason})"})
    return {
        **{k: v for k, v in first.items() if k not in ("verdicts", "failures", "retry")},
        "verdicts": verdicts,
        "failures": failures,
        "jury": votes,
        "ties": sum(1 for v in votes.values() if v["voted"] and v["supported"] is None),
        "juror_failures": [
            {**f, "claim_id": f"{f['claim_id']}@{n}"}
            for n, mine in failed.items()
            for f in mine.values()
        ],
    }


def _median_verdict(side: list[dict[str, Any]], won: int, voted: int) -> dict[str, Any]:
    chosen = sorted(side, key=lambda v: v["tier"])[(len(side) - 1) // 2]
    return {**chosen, "rationale": f"jury {won} of {voted}: {chosen.get('rationale', '')}"}


def claim_subjects(row: dict[str, Any]) -> list[JurySubject]:
    """The row's claims as the jury's subjects (:func:`clinjudge.metrics.jury.jury_agreement`):
    each juror's label, the jurors without one, the jury's label."""
    out = []
    for vote in (row.get("jury") or {}).values():
        jurors = vote["jurors"]
        labels = {n: j["supported"] for n, j in jurors.items() if "supported" in j}
        lost = [n for n, j in jurors.items() if "supported" not in j]
        out.append(JurySubject(labels, vote["supported"], lost))
    return out
