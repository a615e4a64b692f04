"""Per-note results: SPEC §1 "Outputs" — tiers, verdicts, and the claims they belong to."""

from __future__ import annotations

from clinjudge.types import (
    Backend,
    CallError,
    Claim,
    Mode,
    NoteReport,
    Outcome,
    ParseFailure,
    Verdict,
)


def build_note_report(
    *,
    note_id: str,
    mode: Mode,
    backend: Backend,
    claims: list[Claim],
    outcomes: list[Outcome],
    seconds: float = 0.0,
) -> NoteReport:
    """Order outcomes by claim and split them into verdicts and failures.

    Raises ``ValueError`` if a claim has no outcome or more than one: every claim is exactly one
    of verdict, parse failure or error.
    """
    by_id: dict[str, Outcome] = {}
    for outcome in outcomes:
        if outcome.claim_id in by_id:
            raise ValueError(f"claim {outcome.claim_id} has more than one outcome")
        by_id[outcome.claim_id] = outcome
    missing = [c.id for c in claims if c.id not in by_id]
    extra = set(by_id) - {c.id for c in claims}
    if missing or extra:
        raise ValueError(
            f"outcomes do not match claims: missing {missing}, unknown {sorted(extra)}"
        )
    verdicts: list[Verdict] = []
    failures: list[ParseFailure | CallError] = []
    for claim in claims:
        outcome = by_id[claim.id]
        if isinstance(outcome, Verdict):
            verdicts.append(outcome)
        else:
            failures.append(outcome)
    return NoteReport(
        note_id=note_id,
        mode=mode,
        backend=backend,
        claims=claims,
        verdicts=verdicts,
        failures=failures,
        seconds=seconds,
    )


def claim_rows(report: NoteReport) -> list[dict]:
    """One dict per claim with the fields of ``clinjudge judge --json``'s ``claims`` list.

    Claims without a verdict carry ``tier``/``supported``/``subtype`` ``None`` and a ``failure``
    dict (kind and reason) instead.
    """
    verdicts = {v.claim_id: v for v in report.verdicts}
    failures = {f.claim_id: f for f in report.failures}
    rows = []
    for claim in report.claims:
        row: dict = claim.model_dump()
        verdict = verdicts.get(claim.id)
        if verdict is not None:
            row.update(
                tier=verdict.tier,
                supported=verdict.supported,
                subtype=verdict.subtype,
                rationale=verdict.rationale,
                severity=verdict.severity,
                harm_category=verdict.harm_category,
                evidence=[e.model_dump() for e in verdict.evidence],
                knowledge=[k.model_dump() for k in verdict.knowledge],
                failure=None,
            )
        else:
            failure = failures[claim.id]
            row.update(
                tier=None,
                supported=None,
                subtype=None,
                rationale="",
                severity=None,
                harm_category=None,
                evidence=[],
                knowledge=[],
                failure={"kind": failure.kind, "reason": failure.reason},
            )
        rows.append(row)
    return rows


def note_summary(report: NoteReport) -> dict:
    """The note-level numbers of ``judge --json`` (rate excludes parse failures and errors)."""
    return {
        "note_id": report.note_id,
        "mode": report.mode,
        "backend": report.backend,
        "hallucination_rate": report.hallucination_rate,
        "n_claims": len(report.claims),
        "n_judged": report.n_judged,
        "n_hallucinated": report.n_hallucinated,
        "major_rate": report.major_rate,
        "n_major": report.n_major,
        "parse_failures": report.parse_failures,
        "errors": report.errors,
        "tiers": {str(t): n for t, n in report.tier_counts().items()},
    }
