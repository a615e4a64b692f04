"""Where a judge and the sentence labels disagree (SPEC §9 "Agreement"): the misses (a unit
labelled unsupported or contradicted that the judge cleared) and the false flags (a unit
labelled supported that a tier 4–5 claim overlaps), grouped by kind and listed worst first.

Kinds are read from text by regular expressions, first match wins: a miss by the label's
``reason`` and ``span``, a false flag by the rationale of its first flagging claim.

Worst first: missed ``major`` errors (contradicted before unsupported), then false flags
(those of a tier-5 claim first), then missed ``minor`` errors; within a group, in unit order.
Pure functions; no I/O.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence

from clinjudge.metrics.unit_agreement import JudgedClaim, flagging_claims
from clinjudge.metrics.unit_labels import UnitResult

MISS_KINDS = [  # (kind, pattern over the label's reason + span), first match wins
    (
        "name / age / demographic",
        r"\bname|surname|\bage\b|year[- ]old|\bsex\b|occupation|demograph",
    ),
    ("speaker", r"speaker|who said|said by|attribut|patient (?:said|asked)|doctor (?:said|asked)"),
    (
        "symptom status (denied ↔ reported)",
        r"\bden(?:y|ies|ied)\b|affirm|negat|reported .* as|"
        r"not deni|opposite|said yes|said no|endorse",
    ),
    (
        "value / frequency / dose",
        r"frequen|\bdose|\bdaily|weekly|twice|once|\bmg\b|value|number|"
        r"\bunit|reading|level",
    ),
    ("side / body site", r"\bside\b|\bleft\b|\bright\b|\bsite\b|location|laterality|body part"),
    ("vital signs", r"vital|blood pressure|heart rate|temperature|pulse|oxygen|saturation|\bbp\b"),
    ("exam finding", r"exam|auscultat|palpat|inspect|finding|tender|range of motion|normal"),
    (
        "counselling / plan / follow-up",
        r"counsel|educat|advis|instruct|plan|referr|follow|"
        r"discuss|recommend|return|schedul|order",
    ),
    ("history / medication", r"history|medication|drug|prescri|surgery|allerg"),
    ("timing", r"\btim|week|month|year|day|duration|ago|since"),
]
FLAG_KINDS = [  # (kind, pattern over the flagging verdict's rationale)
    ("medication not named", r"^medication '"),
    ("procedure/test not named", r"^procedure/test"),
    ("diagnosis not stated or inferable", r"^diagnosis '"),
    ("citation", r"^cites a source"),
    ("value not stated", r"^value .* not stated|has no equivalent"),
    ("value disagrees", r"disagrees with what the visit says"),
    ("affirmed ↔ denied", r"^claim (?:affirms|denies)"),
    ("left ↔ right", r"contradicts '(?:left|right)"),
    ("speaker: the clinician's words given to the patient", r"^the doctor, not the patient"),
    ("corrected later in the visit", r"^the visit corrects"),
    ("no basis (wording)", r"^nothing in the visit supports|^the visit does not say this word"),
    ("exam never voiced", r"^the visit (?:voices no examination|reads out no vital)"),
    ("combiner: words the visit never says", r"^never said in the visit"),
    ("combiner: words missing near the claim", r"^the passages that match it"),
    ("combiner: exam never voiced", r"^an examination finding the visit never voices"),
    ("combiner: statement not made", r"^the visit does not say this"),
]
#: The kind of a false flag whose rationale matches no pattern (a model's own words).
OTHER_FLAG = "llm / other"


def kind_of(text: str, kinds: Sequence[tuple[str, str]], default: str = "other") -> str:
    """The first kind whose pattern matches ``text`` (case-insensitive), else ``default``."""
    for name, pattern in kinds:
        if re.search(pattern, text, re.I):
            return name
    return default


def misses(results: Sequence[UnitResult]) -> list[UnitResult]:
    """Units labelled unsupported or contradicted that the judge cleared."""
    return [r for r in results if r.unit.positive and r.call == "cleared"]


def false_flags(results: Sequence[UnitResult]) -> list[UnitResult]:
    """Units labelled supported that the judge flagged."""
    return [r for r in results if not r.unit.positive and r.flagged]


def misses_by_kind(results: Sequence[UnitResult]) -> dict[str, list[UnitResult]]:
    """:func:`misses` grouped by :data:`MISS_KINDS` over the label's reason and span."""
    groups: dict[str, list[UnitResult]] = defaultdict(list)
    for r in misses(results):
        groups[kind_of(f"{r.unit.reason} {r.unit.span}", MISS_KINDS)].append(r)
    return dict(groups)


def false_flags_by_kind(
    results: Sequence[UnitResult], claims: Mapping[str, Sequence[JudgedClaim]]
) -> dict[str, list[tuple[UnitResult, str]]]:
    """:func:`false_flags` with their first flagging rationale, grouped by :data:`FLAG_KINDS`."""
    groups: dict[str, list[tuple[UnitResult, str]]] = defaultdict(list)
    for r in false_flags(results):
        why = flagging_claims(r, claims)[0].rationale
        groups[kind_of(why, FLAG_KINDS, default=OTHER_FLAG)].append((r, why))
    return dict(groups)


def disagreement_list(
    results: Sequence[UnitResult], claims: Mapping[str, Sequence[JudgedClaim]]
) -> list[dict[str, object]]:
    """Every miss and false flag, worst first (module docstring), each with the unit, its label
    and the reviewer's reason, the judge's call and the claims (tier, rationale) over the unit."""
    rows = []
    for r in misses(results) + false_flags(results):
        u = r.unit
        flags = flagging_claims(r, claims)
        rows.append(
            {
                "rank": _rank(r, flags),
                "kind": "false flag" if r.flagged else f"missed {u.severity or 'unrated'} error",
                "group": (
                    kind_of(flags[0].rationale, FLAG_KINDS, default=OTHER_FLAG)
                    if r.flagged
                    else kind_of(f"{u.reason} {u.span}", MISS_KINDS)
                ),
                "note_id": u.note_id,
                "system": u.system,
                "unit": u.unit,
                "text": u.text,
                "label": u.label,
                "severity": u.severity,
                "span": u.span,
                "reason": u.reason,
                "call": r.call,
                "claims": [
                    {
                        "text": c.text,
                        "tier": c.tier,
                        "severity": c.severity,
                        "rationale": c.rationale,
                    }
                    for c in flags
                ],
            }
        )
    return sorted(rows, key=lambda row: row["rank"])  # type: ignore[arg-type,return-value]


def _rank(result: UnitResult, flags: Sequence[JudgedClaim]) -> int:
    """0 missed major contradicted, 1 missed major unsupported, 2 false flag with a tier-5
    claim, 3 other false flag, 4 missed minor error (module docstring)."""
    if result.flagged:
        return 2 if any(c.tier == 5 for c in flags) else 3
    if result.unit.major:
        return 0 if result.unit.label == "contradicted" else 1
    return 4
