"""Every offline injector of the injection pipeline by name (SPEC §5 "offline (no LLM) injectors
for the mechanical types"): the mechanical perturbers of :data:`clinjudge.inject.PERTURBERS` plus
the knowledge-based ones added for the pipeline (:mod:`.swaps`, :mod:`.fabrication`,
:mod:`.values`, :mod:`.certainty`, :mod:`.diagnoses`, :mod:`.citations`, :mod:`.omission`).
The error taxonomy (:mod:`.taxonomy`) maps each error/rewrite type onto the names here.
"""

from __future__ import annotations

from clinjudge.inject import PERTURBERS
from clinjudge.inject.certainty import hedge_removal
from clinjudge.inject.citations import fabricated_citation
from clinjudge.inject.declined import declined_plan, plan_rewording
from clinjudge.inject.diagnoses import diagnosis_swap
from clinjudge.inject.fabrication import fabricated_history
from clinjudge.inject.omission import critical_omission
from clinjudge.inject.superseded import correction_rewording, superseded_statement
from clinjudge.inject.swaps import drug_swap, duration_change
from clinjudge.inject.time_shift import time_rewording, time_shift
from clinjudge.inject.types import Perturber
from clinjudge.inject.values import value_change
from clinjudge.inject.voice import attribution_swap, voice_rewrite

#: Injector name → perturber; the names are what ``taxonomy.toml`` lists under ``injectors``.
INJECTORS: dict[str, Perturber] = {
    **PERTURBERS,
    **{
        p.type: p
        for p in (
            drug_swap,
            duration_change,
            fabricated_history,
            value_change,
            hedge_removal,
            diagnosis_swap,
            fabricated_citation,
            critical_omission,
            attribution_swap,
            voice_rewrite,
            time_shift,
            time_rewording,
            superseded_statement,
            correction_rewording,
            declined_plan,
            plan_rewording,
        )
    },
}

__all__ = ["INJECTORS"]
