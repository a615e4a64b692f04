"""``clinjudge safety-case``: endpoints, subgroups and release gates over ``compare`` runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clinjudge.cli.common import UsageError, one_line_errors, stdout
from clinjudge.files import atomic_write_text

if TYPE_CHECKING:
    from clinjudge.metadata_join import MetadataJoin


def safety_case(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="compare run directories: one per system, or one run of several systems "
            "(--systems / --system-column; each system gets its own row); a `pairs` report "
            "directory of detect predictions adds the calibration endpoints."
        ),
    ],
    gates: Annotated[Path, typer.Option("--gates", help="Gates TOML, [gates] by endpoint name.")],
    out: Annotated[
        Path, typer.Option(help="Directory for safety-case.json, .md, forest.png, report.html.")
    ],
    judge: Annotated[
        str,
        typer.Option(
            "--judges",
            "--judge",
            help="The SOAP judge whose claims give the hallucination endpoints.",
        ),
    ] = "inference-aware",
    metadata: Annotated[
        str | None,
        typer.Option(
            help="A table (CSV, JSONL, JSON) holding --subgroup-column per encounter, such as "
            "ACI-Bench's *_metadata.csv (or its main CSV, which finds the metadata file beside "
            "it); joined on the column that holds the run's encounter ids."
        ),
    ] = None,
    subgroup_column: Annotated[
        str | None, typer.Option(help="Metadata column to split by (numbers: age bands).")
    ] = None,
    min_n: Annotated[
        int, typer.Option(help="Fewest items a subgroup needs for rates.", min=1)
    ] = 30,
) -> None:
    """The safety case of one or more systems (SPEC §8, §9), from their ``compare`` runs.

    Endpoints per system, pooled over judged claims or facts with Wilson 95% intervals:
    `major_hallucination_rate` and `contradiction_rate` (from `--judge`),
    `critical_omission_rate` (from the `omission` judge). A `max` gate passes when the UPPER
    bound is at or below it; a failing gate says how many clean cases it still needs. Example:

        clinjudge compare notes-a.csv --judges inference-aware,omission --out runs/a

        clinjudge safety-case runs/a runs/b --gates gates.toml --out runs/case
        --metadata clef_taskC_test3_metadata.csv --subgroup-column patient_gender

    (ACI-Bench's metadata table, keyed by encounter_id; a run of several systems —
    `compare --systems gpt4,bart` — gives each system its row, its notes matched to the
    metadata by encounter.) A gates file:

        [gates.major_hallucination_rate]
        max = 0.05

    Exit codes: 0 every system passes every gate, 1 a gate fails, 2 bad input (one line).
    """
    from clinjudge.gates import load_gates
    from clinjudge.report.safety_case import (
        plot_forest,
        safety_case_markdown,
        write_safety_case_html,
    )
    from clinjudge.safety_case import (
        CALIBRATION,
        ENDPOINTS,
        calibration_note,
        load_runs,
        system_case,
    )

    with one_line_errors():
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out is a file, not a directory: {out}")
        gate_list = load_gates(gates)
        known = (*ENDPOINTS, *CALIBRATION)
        unknown = sorted({g.metric for g in gate_list} - set(known))
        if unknown:
            raise UsageError(f"unknown endpoint {unknown[0]!r} in {gates}: use {', '.join(known)}")
        if (subgroup_column is None) != (metadata is None):
            raise UsageError("--subgroup-column and --metadata go together")
        loaded = load_runs(runs, judge)
        joined = _join(metadata, subgroup_column, loaded) if metadata and subgroup_column else None
    groups = joined.by_item if joined else None
    systems = [system_case(r, gate_list, groups, min_n) for r in loaded]
    if joined:
        stdout.print(joined.describe(), style="dim")
    case = {
        "gates_file": str(gates),
        "soap_judge": judge,
        "subgroup": subgroup_column,
        "metadata": joined.as_dict() if joined else None,
        "min_n": min_n,
        "calibration": calibration_note(),
        "systems": systems,
        "passed": all(s["passed"] for s in systems),
    }
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text((out / "safety-case.json"), json.dumps(case, indent=2) + "\n")
    atomic_write_text((out / "safety-case.md"), safety_case_markdown(case))
    plot = plot_forest(case, out)
    page = write_safety_case_html(case, plot, out)
    _print(case)
    written = (out / "safety-case.json", out / "safety-case.md", plot, page)
    files = ", ".join(str(p) for p in written if p)
    stdout.print(f"wrote {files}")
    if not case["passed"]:
        raise typer.Exit(1)


def _join(metadata: str, column: str, runs: list) -> MetadataJoin:
    """``column`` of the metadata table for every item of ``runs`` (joined on the encounter)."""
    from clinjudge.datasets.loader import resolve_source
    from clinjudge.datasets.readers import read_records
    from clinjudge.metadata_join import join_metadata

    path = resolve_source(metadata)[1]
    if path.is_dir():
        raise UsageError(f"--metadata is a directory, not a table: {metadata}")
    rows = [r.fields for r in read_records(path) if r.problem is None]
    sibling = path.with_name(f"{path.stem}_metadata.csv")
    if not any(column in row for row in rows) and sibling.is_file():
        # an ACI-Bench CSV: its age, gender and complaint stand in the *_metadata.csv beside it
        rows = [r.fields for r in read_records(sibling) if r.problem is None]
    items = [i for r in runs for i in (*r.per_item, *r.excluded_ids)]
    systems = sorted({s for r in runs for s in r.run_systems}, key=len, reverse=True)
    return join_metadata(rows, column, items, systems)


def _print(case: dict) -> None:
    from rich.table import Table

    from clinjudge.report.formatting import percent, percent_interval

    table = Table(title="Safety case", header_style="bold")
    for column in ("system", "endpoint", "rate", "95% CI", "n", "gate", "result"):
        table.add_column(column)
    for s in case["systems"]:
        for g in s["gates"]:
            e = s["endpoints"].get(g["endpoint"])
            if e is None:
                table.add_row(s["system"], g["endpoint"], "n/a", "", "", "", "FAIL (not measured)")
                continue
            result = "pass" if g["passed"] else f"FAIL (needs {g['clean_cases_needed']} clean)"
            table.add_row(
                s["system"],
                g["endpoint"],
                percent(e["value"], 2),
                percent_interval(e["ci95"], 2),
                str(e["n"]),
                f"≤ {g['limit']:g}",
                result,
            )
    stdout.print(table)
    stdout.print(EXPLAINED)


#: What the printed numbers are (the table's footnote).
EXPLAINED = (
    "n: judged claims (major hallucinations, contradictions) or critical facts (critical "
    "omissions), pooled over each run's notes; 95% Wilson intervals. A gate passes when the "
    "upper bound is at or below it; 'needs N clean': claims or facts without the event to add "
    "before it would. Subgroups and calibration: safety-case.md."
)
