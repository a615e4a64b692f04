"""Markdown summary of a judge comparison (DESIGN "Users", job 3; rates and tiers per SPEC §1,
paired differences per SPEC §4).

Input is the compare ``report`` dict (see :mod:`clinjudge.report.compare`); every key may be
missing — a missing part renders as "n/a" or is left out, never as an exception.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, get_args

from clinjudge.report.cost_table import cost_section
from clinjudge.report.flagged_claims import flagged_section
from clinjudge.report.formatting import (
    is_number,
    markdown_table,
    no_interval,
    percent,
    percent_interval,
    signed_points,
    truncate,
)
from clinjudge.report.provenance_markdown import provenance_section, seconds
from clinjudge.report.rubric_lines import rubric_section
from clinjudge.types import TIERS, Subtype

SOAP_ORDER = ("subjective", "objective", "assessment", "plan")
MAX_FLIPS = 20
MAX_NOTE_DIFFERENCES = 10


def render_compare_markdown(
    report: dict[str, Any], images: Sequence[str] = (), flagged: Sequence[dict[str, Any]] = ()
) -> str:
    """The whole ``report.md``: judges, exclusions, tiers, sub-types, sections, paired
    differences, largest per-note differences, flipped claims, provenance; ``images`` are PNG
    file names (relative to the Markdown file) embedded after the judge table; ``flagged`` the
    run's flagged claims (:mod:`clinjudge.report.flagged_claims`)."""
    judges: dict[str, dict[str, Any]] = report.get("judges") or {}
    soap = soap_judges(judges)
    others = {name: j for name, j in judges.items() if name not in soap}
    parts = [
        f"# clinjudge compare — {report.get('dataset', 'unknown dataset')}",
        f"{report.get('n_items', 'n/a')} items; judges: {', '.join(judges) or 'none'}.",
        *_skipped_section(report.get("skipped_items") or []),
        *(_judges_section(soap) if soap or not others else ()),
        *_scores_section(others),
        *rubric_section(judges, report.get("usage")),
        *(f"![{name.removesuffix('.png')}]({name})" for name in images),
        *_tiers_section(soap),
        *_subtypes_section(soap),
        *_sections_section(soap),
        *_systems_section(report.get("systems") or {}),
        *_paired_section(report.get("paired") or []),
        *_note_differences_section(report.get("per_item") or [], list(soap)),
        *_flips_section(report.get("flips") or [], list(soap)),
        *flagged_section(list(flagged)),
        *cost_section(report.get("cost")),
        *provenance_section(report),
    ]
    return "\n\n".join(parts) + "\n"


def _skipped_section(skipped: list[dict[str, Any]]) -> Iterator[str]:
    """The rows of the dataset that were not judged, and why."""
    if not skipped:
        return
    rows = (
        "1 row of the dataset was"
        if len(skipped) == 1
        else f"{len(skipped)} rows of the dataset were"
    )
    yield f"**{rows} skipped** (not judged, in no rate):"
    yield "\n".join(
        f"- {s['row']}" + (f", id {s['id']}" if s.get("id") else "") + f": {s['reason']}"
        for s in skipped
    )


def soap_judges(judges: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The SOAP claim judges of a report (``kind`` "soap", or no kind: older reports)."""
    return {name: j for name, j in judges.items() if j.get("kind", "soap") == "soap"}


def _scores_section(judges: dict[str, dict[str, Any]]) -> Iterator[str]:
    """Headline numbers of the judges that are not SOAP claim judges (CEF, fact-checking)."""
    if not judges:
        return
    yield "## Scores"
    rows = []
    for name, j in judges.items():
        for metric, h in (j.get("headline") or {}).items():
            h = h if isinstance(h, dict) else {"value": h}
            rows.append(
                [
                    name,
                    metric,
                    _score(metric, h.get("value")),
                    _score_interval(metric, h.get("ci95")) if h.get("ci95") else no_interval(h),
                    _count(h.get("n")),
                    _count(h.get("excluded")) if "excluded" in h else "",
                ]
            )
    headers = ["judge", "score", "value", "95% CI", "n", "excluded"]
    yield markdown_table(headers, rows) if rows else "No scores."
    yield (
        "Rates are shares (shown as percentages); CEF scores are on 0–100. Each judge's section "
        "of report.json says what every number's denominator holds and what it excludes."
    )


def _score(metric: str, value: Any) -> str:
    if not is_number(value):
        return "n/a"
    return percent(value) if "rate" in metric else f"{value:.1f}"


def _score_interval(metric: str, ci: Any) -> str:
    if not isinstance(ci, list | tuple) or len(ci) != 2 or not all(is_number(x) for x in ci):
        return "n/a"
    return f"{_score(metric, ci[0])}–{_score(metric, ci[1])}"


def exclusion_sentence(judges: dict[str, dict[str, Any]]) -> str:
    """How many claims each rate leaves out (SPEC §1: parse failures count as neither verdict)."""
    clauses = []
    for name, j in judges.items():
        failures, errors = int(j.get("parse_failures") or 0), int(j.get("errors") or 0)
        clauses.append(
            f"{name} excludes {_plural(failures + errors, 'claim')} "
            f"({_plural(failures, 'parse failure')} + {_plural(errors, 'error')})"
        )
    return (
        "Each hallucination rate is tier 4–5 claims / judged claims; claims that could not be "
        "judged are in neither count: " + ("; ".join(clauses) or "no judges") + "."
    )


def _judges_section(judges: dict[str, dict[str, Any]]) -> Iterator[str]:
    yield "## Judges"
    rows = [
        [
            name,
            j.get("mode", "n/a"),
            j.get("backend", "n/a"),
            percent(j.get("hallucination_rate")),
            _rate_interval(j.get("hallucination_rate"), j.get("ci95")),
            _count(j.get("n_hallucinated")),
            percent(j.get("major_rate")),
            _rate_interval(j.get("major_rate"), j.get("major_ci95")),
            _count(j.get("n_claims")),
            _count(j.get("n_notes")),
            _count(j.get("parse_failures")),
            _count(j.get("errors")),
            seconds(j.get("seconds_per_note_median")),
        ]
        for name, j in judges.items()
    ]
    headers = [
        "judge",
        "mode",
        "backend",
        "hallucination rate",
        "95% CI",
        "hallucinated",
        "major rate",
        "95% CI (major)",
        "claims",
        "notes",
        "parse failures",
        "errors",
        "s/note (median)",
    ]
    yield markdown_table(headers, rows) if rows else "No judge results."
    yield exclusion_sentence(judges)


def _tiers_section(judges: dict[str, dict[str, Any]]) -> Iterator[str]:
    rows = []
    for name, j in judges.items():
        tiers = {str(k): int(v) for k, v in (j.get("tiers") or {}).items()}
        total = sum(tiers.values())
        cells = [
            f"{tiers.get(str(t), 0)} ({percent(_ratio(tiers.get(str(t), 0), total))})"
            for t in TIERS
        ]
        rows.append([name, *cells, total])
    if not any(row[-1] for row in rows):
        return
    yield "## Tiers"
    yield markdown_table(["judge", *(f"tier {t}" for t in TIERS), "judged"], rows)
    yield (
        "Tiers: "
        + "; ".join(
            f"{t} {name} ({'supported' if ok else 'hallucinated'})"
            for t, (name, ok) in TIERS.items()
        )
        + "."
    )


def _subtypes_section(judges: dict[str, dict[str, Any]]) -> Iterator[str]:
    found = _union(j.get("subtypes") or {} for j in judges.values())
    subtypes = [s for s in get_args(Subtype) if s in found] + [
        s for s in found if s not in get_args(Subtype)
    ]
    if not subtypes:
        return
    yield "## Sub-types"
    rows = [
        [name, *(_count((j.get("subtypes") or {}).get(s, 0)) for s in subtypes)]
        for name, j in judges.items()
    ]
    yield markdown_table(["judge", *subtypes], rows)


def _sections_section(judges: dict[str, dict[str, Any]]) -> Iterator[str]:
    found = _union(j.get("sections") or {} for j in judges.values())
    sections = [s for s in SOAP_ORDER if s in found] + [s for s in found if s not in SOAP_ORDER]
    if not sections:
        return
    yield "## Rates by note section"
    rows = []
    for section in sections:
        cells = []
        for j in judges.values():
            s = (j.get("sections") or {}).get(section)
            cells.append(
                f"{percent(s.get('rate'))} ({_count(s.get('n_hallucinated'))}/"
                f"{_count(s.get('n_claims'))})"
                if isinstance(s, dict)
                else "—"
            )
        rows.append([section, *cells])
    yield markdown_table(["section", *judges], rows)


def _systems_section(systems: dict[str, Any]) -> Iterator[str]:
    if not systems:
        return
    yield "## Systems"
    yield "Each judge's headline numbers over each system's notes alone, with their intervals."
    rows = [
        [
            name,
            system,
            _count(h.get("n_notes")),
            "; ".join(
                f"{metric} {_score(metric, v.get('value'))} "
                f"[{_score_interval(metric, v.get('ci95'))}] (n {_count(v.get('n'))})"
                for metric, v in h.items()
                if isinstance(v, dict)
            ),
        ]
        for name, per in systems["by_system"].items()
        for system, h in per.items()
    ]
    yield markdown_table(["judge", "system", "notes", "headline"], rows)
    yield "## Paired differences between systems"
    yield (
        "Per encounter, system a's measure minus system b's, averaged over the encounters both "
        "have a judged note for; 95% percentile bootstrap interval over encounters (none below "
        "5 encounters). An interval excluding 0 separates the two systems on that judge."
    )
    rows = [
        [
            p["judge"],
            p["measure"],
            p["a"],
            p["b"],
            _count(p["n_encounters"]),
            _signed(p["measure"], p["mean_difference"]),
            p["note"] or _signed_interval(p["measure"], p["ci95"]),
        ]
        for p in systems["pairs"]
    ]
    headers = ["judge", "measure", "a", "b", "encounters", "mean (a − b)", "95% CI"]
    yield markdown_table(headers, rows)


def _signed_interval(measure: str, ci: Any) -> str:
    if not ci:
        return "n/a"
    return f"[{_signed(measure, ci[0])}, {_signed(measure, ci[1])}]"


def _signed(measure: str, value: Any) -> str:
    if not is_number(value):
        return "n/a"
    return signed_points(value) if "rate" in measure else f"{value:+.3f}"


def _paired_section(paired: list[dict[str, Any]]) -> Iterator[str]:
    if not paired:
        return
    yield "## Paired differences"
    yield (
        "Per-note hallucination rate of judge a minus judge b, averaged over the notes both "
        "judged; 95% percentile bootstrap interval over notes. Positive: a flags more."
    )
    rows = [
        [
            p.get("a", "?"),
            p.get("b", "?"),
            _count(p.get("n_notes")),
            signed_points(p.get("mean_rate_difference")),
            _points_interval(p.get("ci95")),
        ]
        for p in paired
    ]
    yield markdown_table(["a", "b", "notes", "mean difference (a − b)", "95% CI"], rows)


def _note_differences_section(per_item: list[dict[str, Any]], judges: list[str]) -> Iterator[str]:
    if len(judges) < 2:
        return
    a, b = judges[:2]
    diffs = []
    for row in per_item:
        rate_a = (row.get(a) or {}).get("hallucination_rate")
        rate_b = (row.get(b) or {}).get("hallucination_rate")
        if is_number(rate_a) and is_number(rate_b):
            diffs.append((abs(rate_a - rate_b), row.get("id", "?"), rate_a, rate_b, row))
    if not diffs:
        return
    diffs.sort(key=lambda d: (-d[0], str(d[1])))
    yield f"## Notes where {a} and {b} differ most"
    rows = [
        [
            note_id,
            f"{percent(rate_a)} ({_count((row.get(a) or {}).get('n_claims'))} claims)",
            f"{percent(rate_b)} ({_count((row.get(b) or {}).get('n_claims'))} claims)",
            signed_points(rate_a - rate_b),
        ]
        for _, note_id, rate_a, rate_b, row in diffs[:MAX_NOTE_DIFFERENCES]
    ]
    yield markdown_table(["note", a, b, f"{a} − {b}"], rows)


def _flips_section(flips: list[dict[str, Any]], judges: list[str]) -> Iterator[str]:
    if not flips:
        return
    shown = min(len(flips), MAX_FLIPS)
    yield "## Claims that flip between judges"
    yield f"Showing {shown} of {len(flips)} claims whose verdict differs between judges."
    rows = []
    for flip in flips[:MAX_FLIPS]:
        verdicts = flip.get("verdicts") or {}
        names = [j for j in judges if j in verdicts] + [j for j in verdicts if j not in judges]
        rows.append(
            [
                flip.get("id", "?"),
                flip.get("claim_id", "?"),
                flip.get("section", "?"),
                "; ".join(f"{j}: {_verdict(verdicts[j])}" for j in names),
                truncate(flip.get("text", ""), 140),
            ]
        )
    yield markdown_table(["note", "claim", "section", "verdicts", "claim text"], rows)


def _verdict(v: Any) -> str:
    if not isinstance(v, dict) or v.get("tier") is None:
        return "not judged"
    label = "supported" if v.get("supported") else "hallucinated"
    return f"tier {v['tier']} {label}"


def _union(mappings: Any) -> list[str]:
    seen: dict[str, None] = {}
    for m in mappings:
        seen.update(dict.fromkeys(str(k) for k in m))
    return list(seen)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _ratio(k: int, n: int) -> float | None:
    return k / n if n else None


def _count(value: Any) -> str:
    return str(int(value)) if is_number(value) else "n/a"


def _points_interval(interval: Any) -> str:
    if not interval or len(interval) != 2 or not all(is_number(v) for v in interval):
        return "n/a"
    return f"[{signed_points(interval[0])}, {signed_points(interval[1])}]"


def _rate_interval(rate: float | None, interval) -> str:  # noqa: ANN001 - a [low, high] pair
    """A rate's interval, ``"n/a"`` when there is no rate (no claim judged: the Wilson
    interval of 0 of 0 is [0, 1], which would read as a result)."""
    return "n/a" if rate is None else percent_interval(interval)
