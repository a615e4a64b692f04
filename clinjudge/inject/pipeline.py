"""The offline injection pipeline and the acceptance statistics of any injection run (SPEC §5).

Offline, for one item and one taxonomy type: every offline injector of the type lists its
candidate edits; a seeded choice (``random.Random(f"{seed}:{source_id}:{type}")``, so the pick
does not depend on which other items or types run) takes one injector among those that apply,
then one of its candidates; the edit goes through the same shape check as a model's
(:func:`clinjudge.inject.shape.check_shape` against the type's limits). An edit that fails it is
discarded with the violated limits as the reason. Pair ids are ``<source_id>:<type>``.

Every attempt — kept or not — is one :class:`InjectionOutcome` with a final ``status``:

* ``accepted`` — a pair was made;
* ``not_applicable`` — no injector applies (offline) / both models said no (llm);
* ``disagreed`` — the two applicability models disagree (llm): stopped, nothing injected;
* ``shape_rejected`` / ``validator_rejected`` / ``parse_failure`` — the last attempt failed the
  shape check / the validator / could not be parsed (after the one regeneration, llm);
* ``error`` — a model call failed (transport); retried by the next run, not counted as done.

Acceptance rate = accepted / (attempted − not_applicable − disagreed − error): of the attempts
where an edit was tried, how many were kept; the statistics say how many were excluded.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field

from clinjudge.datasets.items import Item
from clinjudge.inject.injectors import INJECTORS
from clinjudge.inject.pairs import PairRecord
from clinjudge.inject.shape import check_shape
from clinjudge.inject.taxonomy import InjectionType
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.metrics.intervals import wilson_interval

Status = Literal[
    "accepted",
    "not_applicable",
    "disagreed",
    "shape_rejected",
    "validator_rejected",
    "parse_failure",
    "error",
]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
#: Statuses that leave no edit to judge: excluded from the acceptance rate's denominator.
NOT_TRIED = ("not_applicable", "disagreed", "error")


def pair_id_of(source_id: str, type_id: str) -> str:
    """The stable id of the pair of an item and a type: ``<source_id>:<type>``."""
    return f"{source_id}:{type_id}"


class InjectionOutcome(BaseModel):
    """What became of one (item, type) attempt; ``pair`` is set iff ``status == "accepted"``."""

    pair_id: str
    source_id: str
    type: str
    kind: Literal["error", "rewrite"]
    backend: Literal["offline", "llm"]
    status: Status
    reason: str = ""
    #: Injection attempts made (0 when stopped before injecting); 2 = regenerated once.
    attempts: int = 0
    #: Per failed attempt: ``{"attempt", "stage", "status", "reason"}``.
    failures: list[dict[str, Any]] = Field(default_factory=list)
    #: The two applicability answers (llm), or the applicable injectors (offline).
    applicability: dict[str, Any] = Field(default_factory=dict)
    pair: PairRecord | None = None

    @property
    def regenerated(self) -> bool:
        return self.attempts > 1

    def row(self) -> dict[str, Any]:
        """The JSONL row (``note_id`` is the key the resumable runner reads)."""
        return {"note_id": self.pair_id, **self.model_dump(mode="json")}


def inject_offline(
    item: Item, t: InjectionType, *, seed: int = 0, kb: KnowledgeBase | None = None
) -> InjectionOutcome:
    """One offline attempt of type ``t`` on ``item`` (module docstring)."""
    pid = pair_id_of(item.id, t.id)
    base = {"pair_id": pid, "source_id": item.id, "type": t.id, "kind": t.kind}
    if not t.injectors:
        raise ValueError(f"type {t.id!r} has no offline injector")
    found = {
        name: INJECTORS[name].candidates(item.note, item.transcript, kb=kb, source_id=item.id)
        for name in t.injectors
    }
    applicable = {name: len(c) for name, c in found.items() if c}
    if not applicable:
        return InjectionOutcome(
            **base,
            backend="offline",
            status="not_applicable",
            reason=f"no candidate edit of {', '.join(t.injectors)}",
        )
    rng = random.Random(f"{seed}:{item.id}:{t.id}")
    injector = rng.choice(sorted(applicable))
    p = rng.choice(found[injector])
    check = check_shape(p.original_note, p.note, t.limits)
    outcome = {**base, "backend": "offline", "attempts": 1, "applicability": applicable}
    if not check.ok:
        failure = {"attempt": 1, "stage": "shape", "status": "shape_rejected"}
        return InjectionOutcome(
            **outcome,
            status="shape_rejected",
            reason=f"{injector}: {check.reason()}",
            failures=[{**failure, "reason": check.reason()}],
        )
    pair = PairRecord.from_perturbation(
        p,
        pair_id=pid,
        source=item.transcript,
        shape=check.record(),
        meta={"injector": injector, "item": item.meta},
    ).model_copy(update={"type": t.id})
    return InjectionOutcome(**outcome, status="accepted", pair=pair)


def acceptance_stats(outcomes: list[InjectionOutcome], types: list[str]) -> dict[str, Any]:
    """Per type and in total: attempted, each status, regenerated, and the acceptance rate
    with its 95% Wilson interval over the attempts where an edit was tried (module docstring)."""

    def summary(rows: list[InjectionOutcome]) -> dict[str, Any]:
        counts = Counter(o.status for o in rows)
        tried = len(rows) - sum(counts[s] for s in NOT_TRIED)
        lo, hi = wilson_interval(counts["accepted"], tried)
        return {
            "attempted": len(rows),
            **{s: counts[s] for s in STATUSES},
            "regenerated": sum(o.regenerated for o in rows),
            "acceptance_rate": counts["accepted"] / tried if tried else None,
            "ci95": [lo, hi],
            "n_tried": tried,
            "excluded": {s: counts[s] for s in NOT_TRIED},
        }

    by_type = {t: summary([o for o in outcomes if o.type == t]) for t in types}
    return {"per_type": by_type, "total": summary([o for o in outcomes if o.type in types])}
