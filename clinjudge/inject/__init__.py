"""clinjudge.inject: mechanical perturbations of real notes — single injected errors and single
legitimate rewrites, each recording its changed span (SPEC §5 offline injectors; SPEC §1 tiers).

    >>> from clinjudge.inject import PERTURBERS
    >>> p = PERTURBERS["dose_change"](note, transcript, seed=0, source_id="D2N001")
    >>> p.before, p.after, p.note[p.start:p.end] == p.after

Every perturber returns ``None`` when it does not apply, is deterministic given its seed, and
changes exactly one place of the note. No LangGraph, no network.
"""

from __future__ import annotations

import random

from clinjudge.inject.errors import (
    added_drug,
    dose_change,
    frequency_change,
    laterality_flip,
    negation_flip,
)
from clinjudge.inject.rewrites import generic_to_brand, lay_to_clinical, term_to_abbreviation
from clinjudge.inject.types import Edit, Perturbation, PerturbationKind, Perturber, spans_touch
from clinjudge.knowledge.base import KnowledgeBase

#: Every mechanical perturbation type, errors first.
PERTURBERS: dict[str, Perturber] = {
    p.type: p
    for p in (
        dose_change,
        frequency_change,
        added_drug,
        negation_flip,
        laterality_flip,
        generic_to_brand,
        lay_to_clinical,
        term_to_abbreviation,
    )
}
ERROR_TYPES: tuple[str, ...] = tuple(t for t, p in PERTURBERS.items() if p.kind == "error")
REWRITE_TYPES: tuple[str, ...] = tuple(t for t, p in PERTURBERS.items() if p.kind == "rewrite")


def perturb(
    note: str,
    transcript: str,
    type: str,
    *,
    seed: int | random.Random = 0,
    kb: KnowledgeBase | None = None,
    source_id: str = "",
) -> Perturbation | None:
    """Apply the perturbation ``type`` (a key of :data:`PERTURBERS`) to ``note``."""
    if type not in PERTURBERS:
        raise KeyError(f"unknown perturbation type {type!r}: use one of {', '.join(PERTURBERS)}")
    return PERTURBERS[type](note, transcript, seed=seed, kb=kb, source_id=source_id)


__all__ = [
    "ERROR_TYPES",
    "PERTURBERS",
    "REWRITE_TYPES",
    "Edit",
    "Perturbation",
    "PerturbationKind",
    "Perturber",
    "perturb",
    "spans_touch",
    "added_drug",
    "dose_change",
    "frequency_change",
    "generic_to_brand",
    "laterality_flip",
    "lay_to_clinical",
    "negation_flip",
    "term_to_abbreviation",
]
