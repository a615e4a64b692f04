"""Dataset-level numbers of one or more SOAP judges over the same notes (SPEC §1, §8).

Per judge: hallucination rate = tier 4–5 claims / judged claims pooled over notes, with a 95%
Wilson interval (SPEC §8); claims lost to parse failures or call errors are excluded and counted.
Between judges: the mean per-note rate difference with a paired percentile bootstrap interval,
and the claims whose verdict flips (same claim ids on both sides).
"""

from __future__ import annotations

import math
import statistics
from itertools import combinations

from clinjudge.metrics.intervals import paired_bootstrap_diff, wilson_interval
from clinjudge.types import NoteReport


def judge_summary(reports: list[NoteReport]) -> dict:
    """Pooled counts and rate of one judge over its notes; ``seconds`` sums the notes' own
    judging times (stable when a run is resumed)."""
    tiers = {str(t): 0 for t in range(1, 6)}
    subtypes: dict[str, int] = {}
    sections: dict[str, dict] = {}
    judged = hallucinated = major = parse_failures = errors = 0
    for report in reports:
        claims = {c.id: c for c in report.claims}
        for v in report.verdicts:
            tiers[str(v.tier)] += 1
            subtypes[v.subtype] = subtypes.get(v.subtype, 0) + 1
            s = sections.setdefault(
                claims[v.claim_id].section, {"n_claims": 0, "n_hallucinated": 0}
            )
            s["n_claims"] += 1
            s["n_hallucinated"] += 0 if v.supported else 1
        judged += report.n_judged
        hallucinated += report.n_hallucinated
        major += report.n_major
        parse_failures += report.parse_failures
        errors += report.errors
    for s in sections.values():
        s["rate"] = s["n_hallucinated"] / s["n_claims"] if s["n_claims"] else None
    first = reports[0] if reports else None
    return {
        "hallucination_rate": hallucinated / judged if judged else None,
        "ci95": list(wilson_interval(hallucinated, judged)),
        "n_claims": judged,
        "n_hallucinated": hallucinated,
        "major_rate": major / judged if judged else None,
        "major_ci95": list(wilson_interval(major, judged)),
        "n_major": major,
        "n_notes": len(reports),
        "tiers": tiers,
        "subtypes": dict(sorted(subtypes.items())),
        "sections": dict(sorted(sections.items())),
        "parse_failures": parse_failures,
        "errors": errors,
        "excluded_claims": parse_failures + errors,
        "seconds": round(sum(r.seconds for r in reports), 3),
        "seconds_per_note_median": statistics.median([r.seconds for r in reports])
        if reports
        else None,
        "mode": first.mode if first else None,
        "backend": first.backend if first else None,
    }


def paired_rates(runs: dict[str, list[NoteReport]], *, seed: int = 0) -> list[dict]:
    """For every two judges: the mean per-note hallucination-rate difference (a − b) over the
    notes both rated, with a paired percentile bootstrap 95% interval (SPEC §4)."""
    by_id = {name: {r.note_id: r for r in reports} for name, reports in runs.items()}
    ids = list(dict.fromkeys(r.note_id for reports in runs.values() for r in reports))
    paired = []
    for a, b in combinations(runs, 2):
        rates_a = [by_id[a][i].hallucination_rate if i in by_id[a] else None for i in ids]
        rates_b = [by_id[b][i].hallucination_rate if i in by_id[b] else None for i in ids]
        diff = paired_bootstrap_diff(rates_a, rates_b, seed=seed)
        paired.append(
            {
                "a": a,
                "b": b,
                "n_notes": diff.n,
                "mean_rate_difference": None if math.isnan(diff.mean) else diff.mean,
                "ci95": [None if math.isnan(x) else x for x in diff.ci],
            }
        )
    return paired


def verdict_flips(runs: dict[str, list[NoteReport]]) -> list[dict]:
    """Claims judged by every judge whose supported/hallucinated verdicts differ."""
    names = list(runs)
    if len(names) < 2:
        return []
    verdicts = {
        name: {(r.note_id, v.claim_id): v for r in reports for v in r.verdicts}
        for name, reports in runs.items()
    }
    flips = []
    for report in runs[names[0]]:
        for claim in report.claims:
            key = (report.note_id, claim.id)
            if not all(key in verdicts[n] for n in names):
                continue
            outcomes = {n: verdicts[n][key] for n in names}
            if len({v.supported for v in outcomes.values()}) > 1:
                flips.append(
                    {
                        "id": report.note_id,
                        "claim_id": claim.id,
                        "section": claim.section,
                        "text": claim.text,
                        "verdicts": {
                            n: {"tier": v.tier, "supported": v.supported, "subtype": v.subtype}
                            for n, v in outcomes.items()
                        },
                    }
                )
    return flips
