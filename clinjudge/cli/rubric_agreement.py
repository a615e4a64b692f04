"""``clinjudge agreement`` on rubric runs: each rubric grader of the runs against human criterion
labels, and the labellers against each other (issue 39 item 6;
:mod:`clinjudge.agreement.rubric_scores`)."""

from __future__ import annotations

import json
from pathlib import Path

from clinjudge.cli.common import UsageError, stdout


def run_notes(run) -> dict[str, str] | None:
    """The run's note texts by item id, from the dataset its compare command recorded (``None``
    when it cannot be read: the notes are then not checked against the units)."""
    command = run.manifest.get("command")
    if not command:
        return None
    from clinjudge.cli.compare import load_run_items
    from clinjudge.datasets.loader import DatasetError

    try:
        data = load_run_items(command, require_source=False)
    except (DatasetError, OSError, KeyError, ValueError):
        return None
    return {item.id: item.note for item in data.items}


def rubric_agreement(
    run_dirs: list[Path], labels: list[Path], out: Path, *, resamples: int, seed: int = 0
) -> dict:
    """Score the runs' rubric judges against the label files; write ``agreement.json`` and
    ``agreement.md`` under ``out`` and print the headline table.

    Raises:
        ConfigError: a malformed label file (``FILE:LINE: field: reason``), a run directory
            without a rubric judge, labels of another kind than a judge's verdicts.
    """
    from clinjudge.agreement.rubric_labels import read_criterion_labels
    from clinjudge.agreement.rubric_runs import read_rubric_run
    from clinjudge.agreement.rubric_scores import rubric_agreement_report
    from clinjudge.report.rubric_agreement_markdown import rubric_agreement_markdown

    sets = read_criterion_labels(labels)
    runs = [read_rubric_run(path) for path in run_dirs]
    notes = {str(run.path): run_notes(run) for run in runs}
    report = rubric_agreement_report(runs, sets, notes, resamples=resamples, seed=seed)
    if not any(a["n"] for g in report["graders"] for a in g["against"]):
        items = ", ".join(runs[0].items[:3])
        raise UsageError(
            f"no label of {', '.join(map(str, labels))} names a criterion the runs graded "
            f"(run items: {items}, …): check the item and criterion ids"
        )
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out is a file, not a directory: {out}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "agreement.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    (out / "agreement.md").write_text(rubric_agreement_markdown(report), encoding="utf-8")
    return report


def print_rubric_summary(report: dict, out: Path) -> None:
    from rich.table import Table

    from clinjudge.report.rubric_agreement_markdown import grader_name, headline_rows, length_cell

    headers, rows = headline_rows(report)
    table = Table(title="rubric graders against criterion labels (95% CI over encounters)")
    for header in headers:
        table.add_column(header)
    for row in rows:
        table.add_row(*row)
    stdout.print(table)
    for g in report["graders"]:
        for a in g["against"]:
            stdout.print(
                f"length bias, {grader_name(g)} vs {a['labeller']}: {length_cell(a['length_bias'])}"
            )
    stdout.print(f"wrote {out / 'agreement.json'}, {out / 'agreement.md'}")
