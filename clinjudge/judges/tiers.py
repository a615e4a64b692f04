"""The five tiers and their sub-types (SPEC §1 "Five tiers"), as plain rules.

Tier 1 restatement · tier 2 paraphrase / terminology / trade_generic / abbreviation ·
tier 3 inference → supported; tier 4 no_basis · tier 5 contradiction → hallucinated.
The lexical mode (stage 1) knows only tiers 1, 4 and 5.
"""

from __future__ import annotations

from clinjudge.types import TIERS_BY_MODE, Mode, Subtype

SUBTYPES_BY_TIER: dict[int, tuple[Subtype, ...]] = {
    1: ("restatement",),
    2: ("paraphrase", "terminology", "trade_generic", "abbreviation"),
    3: ("inference",),
    4: ("no_basis",),
    5: ("contradiction",),
}


def tier_allowed(mode: Mode, tier: int) -> bool:
    """Whether ``tier`` exists in ``mode`` (lexical: 1, 4, 5; inference-aware: 1–5)."""
    return tier in TIERS_BY_MODE[mode]


def normalize_subtype(tier: int, subtype: str | None) -> Subtype:
    """The sub-type if it belongs to ``tier``, else the tier's default (its first sub-type).

    The tier is the verdict; a sub-type that disagrees with it is a labelling slip, so the tier
    wins and the sub-type is re-derived — the verdict itself is never changed here.
    """
    allowed = SUBTYPES_BY_TIER[tier]
    cleaned = (subtype or "").strip().lower().replace("-", "_").replace(" ", "_")
    if cleaned in ("trade/generic", "tradegeneric"):
        cleaned = "trade_generic"
    return cleaned if cleaned in allowed else allowed[0]  # type: ignore[return-value]
