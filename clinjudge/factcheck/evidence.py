"""What the rater reads for a claim (SPEC §3 step 4): ``--option factcheck.evidence``.

- ``per_claim`` (the default, SAFE): the passages the claim's own queries retrieved — at most
  ``k``, merged round robin over its queries;
- ``pooled``: every passage retrieved for the answer's relevant claims, one block shared by all
  its ratings — the claims in order, each claim's passages in rank order, a passage retrieved
  twice kept once. Each rating call then begins with the same bytes (instructions, the pool)
  and ends with its claim, so a server reuses the prefix (issue 38); each claim also reads the
  other claims' evidence, a larger pool than SAFE's.

A claim's reported ``evidence`` is what its own queries retrieved, followed, when pooled, by
the pool passages the rater cited that its own queries did not find.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from clinjudge.search.base import Passage

EvidenceMode = Literal["per_claim", "pooled"]
EVIDENCE_MODES: tuple[str, ...] = ("per_claim", "pooled")


def pool_evidence(per_claim: Iterable[list[Passage]]) -> list[Passage]:
    """The shared block of ``pooled`` (module docstring): first appearance order, no repeats."""
    pool: list[Passage] = []
    seen: set[tuple[str, str]] = set()
    for passages in per_claim:
        for p in passages:
            if (p.id, p.text) not in seen:
                seen.add((p.id, p.text))
                pool.append(p)
    return pool


def reported_evidence(own: list[Passage], read: list[Passage], cited: list[str]) -> list[Passage]:
    """A claim's reported evidence (module docstring): its own passages, then the passages of
    ``read`` it cited that are not among them."""
    mine = {(p.id, p.text) for p in own}
    wanted = set(cited)
    return own + [p for p in read if p.id in wanted and (p.id, p.text) not in mine]
