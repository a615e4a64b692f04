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


#: Fewer notes than this give a per-note Spearman of no meaning (two notes give ±1).
MIN_NOTES_FOR_SPEARMAN = 5
DEFINITIONS = (
    "A unit (note sentence) is flagged when a tier 4–5 claim overlaps it; positive = labelled "
    "unsupported or contradicted. 95% intervals resample whole encounters (none below five). "
    f"Note Spearman: per-note flagged shares against labelled shares (none below "
    f"{MIN_NOTES_FOR_SPEARMAN} notes). Tier-5 precision: tier-5 claims over units labelled "
    "contradicted / tier-5 claims over labelled units (Wilson interval)."
)


def number(value: Any) -> str:
    return f"{value:.2f}" if is_number(value) else "n/a"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def set_name(path: str) -> str:
    """A label set as a reader knows it: a file by its stem (``reviewer_b``), a directory by
    its parent and name (``claim-labels/labels``)."""
    p = Path(path)
    return p.stem if p.suffix == ".jsonl" else f"{p.parent.name}/{p.name}"


def with_interval(entry: dict[str, Any], key: str) -> str:
    lo, hi = (entry.get("ci95") or {}).get(key) or (None, None)
    bounds = f" [{number(lo)}, {number(hi)}]" if is_number(lo) and is_number(hi) else ""
    return number(entry.get(key)) + bounds


def measure_cell(entry: dict[str, Any], key: str) -> str:
    if key == "note_spearman" and entry["notes"] < MIN_NOTES_FOR_SPEARMAN:
        return "n too small"
    return with_interval(entry, key)


def measure_row(name: str, entry: dict[str, Any], tier5: str) -> list[str]:
    return [
        name,
        f"{entry['units']} / {entry['notes']}",
        *(measure_cell(entry, key) for _, key in MEASURES),
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
    return f"reviewer {set_name(entry['second'])} vs {set_name(entry['first'])}"


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
    yield "\n" + DEFINITIONS


def rank_line(report: dict[str, Any]) -> str:
    ranks = ", ".join(f"{j['id']}: {j['system_rank_agrees']}" for j in report["judges"])
    return f"Systems ranked as the labels rank them — {ranks}."


def per_system(report: dict[str, Any]) -> Iterator[str]:
    headers, rows = system_table(report)
    if not rows:
        return
    yield "\n## Per system\n"
    yield markdown_table(headers, rows)
    yield "\n" + rank_line(report)


def reviewer_table(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Each second reviewer against the first, on the units both labelled."""
    headers = ["second vs first", "units", "agreement", "κ", "κ (3 labels)"]
    headers += ["errors (second vs first)", "severity agrees"]
    rows = [
        [
            f"{set_name(r['second'])} vs {set_name(r['first'])}",
            f"{r['units']} ({plural(r['encounters'], 'encounter')})",
            percent(r["agreement"]),
            number(r["kappa_binary"]),
            number(r["kappa_3"]),
            f"{r['errors_second']} vs {r['errors_first']}",
            percent(r["severity_agreement"]),
        ]
        for r in report["reviewers"]
    ]
    return headers, rows


def reviewed_table(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Each judge against the first reviewer, on the units a second reviewer also labelled
    (so a judge's κ is read beside the reviewers' own)."""
    headers = ["judge", "against", "on the units also labelled by"]
    headers += ["units", "κ", "precision", "recall"]
    first = {r["second"]: r["first"] for r in report["reviewers"]}
    rows = [
        [
            j["id"],
            set_name(first.get(r["second"], first_set(report))),
            set_name(r["second"]),
            str(r["units"]),
            number(r["kappa"]),
            number(r["precision"]),
            number(r["recall"]),
        ]
        for j in report["judges"]
        for r in j["on_reviewed_units"]
    ]
    return headers, rows


def reviewers(report: dict[str, Any]) -> Iterator[str]:
    """Reviewer–reviewer agreement, and each judge's on the same units."""
    if not report["reviewers"]:
        return
    yield "\n## Reviewers against each other\n"
    yield markdown_table(*reviewer_table(report))
    yield "\nThe judges against the first reviewer, on the units the second also labelled:\n"
    yield markdown_table(*reviewed_table(report))


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
                f"{d['label']}: {truncate(d['reason'], 70)}" if d["reason"] else d["label"],
                "; ".join(f"T{c['tier']} {truncate(c['rationale'], 70)}" for c in d["claims"])
                or "—",
            ]
            for d in found[:SHOWN_DISAGREEMENTS]
        ]
        if rows:
            yield markdown_table(["kind", "unit", "text", "label: reason", "judge"], rows)


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


def first_set(report: dict[str, Any]) -> str:
    sets = (report.get("provenance") or {}).get("label_sets") or []
    return sets[0]["path"] if sets else "labels"


def agreement_markdown(report: dict[str, Any]) -> str:
    labels = report["labels"]
    head = [
        "# Agreement with sentence labels\n",
        "Runs: "
        + ", ".join(
            f"`{r['name']}` ({r['matched_notes']} of {r['notes']} notes labelled)"
            for r in report["runs"]
        )
        + f"; each row is scored on the labelled units of those notes (its `units / notes`). "
        f"The label sets hold {labels['units']} labelled units of "
        f"{plural(labels['notes'], 'note')} ({plural(labels['encounters'], 'encounter')}); the "
        f"reference label of a unit is the first set's: {set_name(first_set(report))}.\n",
    ]
    if stray := labels.get("labels_without_unit"):
        head.append(
            f"{plural(stray, 'label')} of the label sets name no text unit of the units file "
            "(another units file, or a mistyped encounter, system or unit): not scored.\n"
        )
    parts = [*side_by_side(report), *per_system(report), *reviewers(report)]
    parts += [*disagreements(report), *provenance(report)]
    return "\n".join(head + parts) + "\n"
