"""What every SOAP claim verifier shares: its interface over the per-note material it reads
(:class:`~clinjudge.grounding.note_input.NoteInput`).

A verifier turns a batch of claims into exactly one outcome per claim — a `Verdict`, a
`ParseFailure` or a `CallError` (SPEC §1 "Outputs": parse failures are never counted as either
verdict). The graph does not know which verifier it runs; reports name the backend.
"""

from __future__ import annotations

from typing import Protocol

from clinjudge.grounding.note_input import NoteInput
from clinjudge.types import Backend, CallError, Claim, Mode, Outcome, ParseFailure


class ClaimVerifier(Protocol):
    mode: Mode
    backend: Backend

    async def verify(self, claims: list[Claim], note: NoteInput) -> list[Outcome]:
        """One outcome per claim, in the order of ``claims``."""
        ...


def ensure_complete(claims: list[Claim], outcomes: list[Outcome]) -> list[Outcome]:
    """Order outcomes like ``claims``; a claim without an outcome becomes a `ParseFailure`.

    Guarantees the invariant the reports rely on: every claim is exactly one of verdict,
    parse failure or error.
    """
    by_id: dict[str, Outcome] = {}
    for outcome in outcomes:
        by_id.setdefault(outcome.claim_id, outcome)
    ordered: list[Outcome] = []
    for claim in claims:
        found = by_id.get(claim.id)
        if found is None:
            found = ParseFailure(claim_id=claim.id, reason="no verdict returned for this claim")
        ordered.append(found)
    return ordered


def failure_for_all(
    claims: list[Claim], failure: ParseFailure | CallError
) -> list[ParseFailure | CallError]:
    """The same batch-level failure, re-keyed to every claim of the batch."""
    return [failure.model_copy(update={"claim_id": c.id}) for c in claims]
