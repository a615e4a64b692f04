"""``agreement.md``: the judges of one or more runs against sentence labels, side by side, with
the reviewers' agreement with each other and the disagreements worst first (SPEC §9)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from clinjudge.report.formatting import is_number, markdown_table, percent, truncate

#: Disagreements listed per judge in the Markdown (agreement.json holds them all).
SHOWN_DISAGREEMENTS = 25
MEASURES = (
    ("precision", "precision"),
    ("recall", "recall"),
    ("F1", "f1"),
    ("κ", "kappa"),
    ("note Spearman", "note_spearman"),
)


def number(value: Any) -> str:
    return f"{value:.2f}" if is_number(value) else "n/a"


def with_interval(entry: dict[str, Any], key: str) -> str:
    lo, hi = (entry.get("ci95") or {}).get(key) or (None, None)
    bounds = f" [{number(lo)}, {number(hi)}]" if is_number(lo) and is_number(hi) else ""
    return number(entry.get(key)) + bounds


def measure_row(name: str, entry: dict[str, Any], tier5: str) -> list[str]:
    return [
        name,
        f"{entry['units']} / {entry['notes']}",
        *(with_interval(entry, key) for _, key in MEASURES),
        f"{number(entry['major_recall'])} ({entry['majors_flagged']}/{entry['majors']})",
        f"{number(entry['accuracy'])} ({number(entry['all_supported_accuracy'])})",
        tier5,
    ]


def tier5_cell(tier5: dict[str, Any] | None) -> str:
    if not tier5:
        return "n/a"
    lo, hi = tier5["ci95"]
    return f"{number(tier5['precision'])} [{number(lo)}, {number(hi)}] of {tier5['claims']}"


def reviewer_name(entry: dict[str, Any]) -> str:
    return f"reviewer {Path(entry['second']).name} vs {Path(entry['first']).name}"


def judge_table(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per run and judge, then one per pair of reviewers (the second read as a judge)."""
    headers = [
        "judge",
        "units / notes",
        *(label for label, _ in MEASURES),
        "major recall",
        "accuracy (all supported)",
        "tier-5 precision",
    ]
    rows = [measure_row(j["id"], j, tier5_cell(j["tier5"])) for j in report["judges"]]
    rows += [measure_row(reviewer_name(r), r["as_judge"], "—") for r in report["reviewers"]]
    return headers, rows


def system_table(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Labelled vs judged positive share per system, one column per judge."""
    judges = report["judges"]
    headers = ["system", *(f"{j['id']}: labelled → judged (units)" for j in judges)]
    rows = []
    for system in sorted({s for j in judges for s in j["systems"]}):
        cells = [system]
        for j in judges:
            v = j["systems"].get(system)
            cells.append(
                f"{percent(v['gold_share'])} → {percent(v['judged_share'])} ({v['units']})"
                if v
                else "—"
            )
        rows.append(cells)
    return headers, rows


def side_by_side(report: dict[str, Any]) -> Iterator[str]:
    yield markdown_table(*judge_table(report))
    if len({(j["units"], j["notes"]) for j in report["judges"]}) > 1:
        yield (
            "\n**The judges were scored on different labelled units** (a run left notes out, or "
            "some calls failed): read the rows side by side with care."
        )
    yield (
        "\nA unit (note sentence) is flagged when a tier 4–5 claim overlaps it; positive = "
        "labelled unsupported or contradicted. 95% intervals resample whole encounters (none "
        "below five). Tier-5 precision: tier-5 claims over units labelled contradicted / tier-5 "
        "claims over labelled units (Wilson interval)."
    )


def per_system(report: dict[str, Any]) -> Iterator[str]:
    headers, rows = system_table(report)
    if not rows:
        return
    ranks = ", ".join(f"{j['id']}: {j['system_rank_agrees']}" for j in report["judges"])
    yield "\n## Per system\n"
    yield markdown_table(headers, rows)
    yield f"\nSystems ranked as the labels rank them — {ranks}."


def reviewers(report: dict[str, Any]) -> Iterator[str]:
    """Reviewer–reviewer agreement, and each judge's on the same units."""
    if not report["reviewers"]:
        return
    yield "\n## Reviewers against each other\n"
    rows = [
        [
            f"{Path(r['second']).name} vs {Path(r['first']).name}",
            f"{r['units']} ({r['encounters']} encounters)",
            percent(r["agreement"]),
            number(r["kappa_binary"]),
            number(r["kappa_3"]),
            f"{r['errors_first']} vs {r['errors_second']}",
            percent(r["severity_agreement"]),
        ]
        for r in report["reviewers"]
    ]
    yield markdown_table(
        ["second vs first", "units", "agreement", "κ", "κ (3 labels)", "errors", "severity agrees"],
        rows,
    )
    yield "\nThe judges against the first reviewer on the same units:\n"
    rows = [
        [j["id"], Path(r["second"]).name, r["units"], number(r["kappa"]), number(r["precision"])]
        + [number(r["recall"])]
        for j in report["judges"]
        for r in j["on_reviewed_units"]
    ]
    yield markdown_table(["judge", "units of", "units", "κ", "precision", "recall"], rows)


def disagreements(report: dict[str, Any]) -> Iterator[str]:
    """Each judge's disagreements with the labels, worst first."""
    yield "\n## Where judge and labels disagree (worst first)\n"
    yield (
        "Missed major errors (contradicted first), then false flags (tier 5 first), then missed "
        f"minor errors; the first {SHOWN_DISAGREEMENTS} per judge (all in agreement.json).\n"
    )
    for j in report["judges"]:
        found: Sequence[dict[str, Any]] = j["disagreements"]
        yield f"\n### {j['id']}: {len(found)} disagreements\n"
        rows = [
            [
                d["kind"],
                f"{d['note_id']} u{d['unit']}",
                truncate(d["text"], 90),
                f"{d['label']}: {truncate(d['reason'], 70)}",
                "; ".join(f"T{c['tier']} {truncate(c['rationale'], 70)}" for c in d["claims"])
                or "—",
            ]
            for d in found[:SHOWN_DISAGREEMENTS]
        ]
        if rows:
            yield markdown_table(["kind", "unit", "text", "label: reviewer", "judge"], rows)


def provenance(report: dict[str, Any]) -> Iterator[str]:
    p = report["provenance"]
    yield "\n## Provenance\n"
    yield f"- clinjudge {p['package_version']}, {p['created']}"
    for r in p["runs"]:
        yield f"- run `{r['name']}`: {r['path']} (run.json sha256 {r['manifest_sha256'][:12]})"
    yield f"- units: {p['units_file']['path']} (sha256 {p['units_file']['sha256'][:12]})"
    for s in p["label_sets"]:
        yield f"- labels `{s['path']}`: {len(s['files'])} files"
        for path, sha in s["files"].items():
            yield f"  - {Path(path).name} sha256 {sha[:12]}"


def agreement_markdown(report: dict[str, Any]) -> str:
    labels = report["labels"]
    head = [
        "# Agreement with sentence labels\n",
        f"{labels['units']} labelled units of {labels['notes']} notes "
        f"({labels['encounters']} encounters); runs: "
        + ", ".join(
            f"`{r['name']}` ({r['matched_notes']} of {r['notes']} notes labelled)"
            for r in report["runs"]
        )
        + ".\n",
    ]
    parts = [*side_by_side(report), *per_system(report), *reviewers(report)]
    parts += [*disagreements(report), *provenance(report)]
    return "\n".join(head + parts) + "\n"
