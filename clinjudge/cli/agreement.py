"""``clinjudge agreement``: the SOAP judges of compare runs scored against sentence labels, and
the reviewers against each other (SPEC §9; :mod:`clinjudge.agreement`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from clinjudge.cli.common import UsageError, one_line_errors, stdout


def criterion_labels(labels: list[Path], units: Path | None) -> bool:
    """Whether ``--labels`` are criterion labels (a rubric run's) rather than sentence labels.

    Raises:
        UsageError: a mix of both, or ``--units`` given with criterion labels.
    """
    from clinjudge.agreement.rubric_labels import is_criterion_label_file

    kinds = {is_criterion_label_file(p) for p in labels}
    if len(kinds) > 1:
        raise UsageError("--labels mixes criterion label files with sentence labels: give one kind")
    if kinds == {True} and units is not None:
        raise UsageError("--units is for the sentence labels of SOAP runs, not criterion labels")
    return kinds == {True}


def _check_run_dir(path: Path) -> None:
    """A positional argument that is a label file or directory, or another command's
    directory, is named as such."""
    from clinjudge.run_kind import require_kind

    require_kind(path, ("compare",), "`clinjudge agreement`")
    if path.is_dir() and not (path / "run.json").exists() and any(path.glob("*.jsonl")):
        raise UsageError(
            f"{path}: not a run directory (no run.json) but holds JSONL files; give label "
            "sets as --labels PATH, once per reviewer"
        )
    if path.is_file():
        raise UsageError(f"{path}: a file, not a run directory; labels go after --labels")


def agreement(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="One or more directories written by `clinjudge compare` (several: one "
            "table side by side, e.g. offline, local model and hosted model on the same notes)."
        ),
    ],
    labels: Annotated[
        list[Path],
        typer.Option(
            "--labels",
            help="A reviewer's labels: a claim-labels JSONL file or a directory of them "
            "(repeat --labels for each reviewer; the first labelling a unit is the reference); "
            "for rubric runs a criterion label file, .csv or .jsonl (see Rubric runs below).",
        ),
    ],
    out: Annotated[
        Path, typer.Option(help="Directory for agreement.json, agreement.md and agreement.html.")
    ],
    units: Annotated[
        Path | None,
        typer.Option(
            help="The units.jsonl of the labelled notes (default: the first units.jsonl beside "
            "a --labels path or in the directory above it)."
        ),
    ] = None,
    system: Annotated[
        str,
        typer.Option(help="System of the run's notes whose ids name none (ENCOUNTER alone)."),
    ] = "reference",
    resamples: Annotated[
        int, typer.Option(help="Encounter-bootstrap resamples for the 95% intervals.", min=100)
    ] = 1000,
) -> None:
    """Score every SOAP judge of the runs against sentence labels, or every rubric judge
    against criterion labels; write agreement.json and agreement.md (and for SOAP runs
    agreement.html, a page of the report viewer); package version, runs with their manifest
    hashes, label files with their SHA-256 recorded.

    Example: `clinjudge compare notes.jsonl --system-column system --id-column encounter
    --judges lexical --out runs/lab`, then `clinjudge agreement runs/lab --labels
    claim-labels/labels --labels claim-labels/second-annotator --out runs/lab-agreement`.

    Exit codes: 0 done; 2 bad input (no run directory, a malformed label line: its file and
    line — for criterion labels also the field; no units file; no note of a run that has
    labels; no criterion label naming a criterion the run graded).

    **Units.** A unit is one sentence of a note, identified by `encounter`, `system` and `unit`
    (its number within the note), with `start`/`end`, the character span `[start, end)` it
    covers in the note's text, and `text`; `units.jsonl` (the claim-labels layout: one line per
    unit, `kind` text or header, headers never labelled) holds them. A note is
    `ENCOUNTER/system`.

    **Labels** (the shared claim-labels JSONL, one object per line): `encounter`, `system`,
    `unit`, `label` (supported | unsupported | contradicted), `severity` (major | minor; null
    when supported), and optionally `span`, `evidence`, `reason` (the reviewer's rationale,
    shown with the disagreements). Each `--labels` is one reviewer: a JSONL file or a directory
    of them. A unit's reference label is the first reviewer's that labels it; a later reviewer
    labelling the same unit is compared with it (κ, agreement, and the judge's measures computed
    for the reviewer).

    **Matching.** A run item `ENCOUNTER/system` (`compare --system-column system`) is that
    labelled note; an item id without `/system` is the note of `--system` (default reference).
    When the run's dataset can be read, every labelled unit's text is checked against the run's
    note at its span.

    **Scores** per judge: a unit is flagged when a tier 4–5 claim overlaps its span; positive =
    unsupported or contradicted; precision, recall, F1, accuracy and Cohen's κ over units with
    95% intervals resampling whole encounters, recall of major errors, labelled vs judged share
    per system, per-note Spearman, tier-5 precision against `contradicted`, and the
    disagreements worst first (missed major errors, then false flags with the judge's rationale,
    then missed minor ones).

    **Rubric runs** (`compare --judges rubric:FILE`; chosen when every --labels is a criterion
    label file). A label file is CSV with a header, or JSONL, one row per criterion of an item:
    `item` (the run's item id), `criterion` (its id), `label` (met | not met, or a level 1..N
    for a scale rubric), optionally `labeller` (default: the file's name) and `comment`. Each
    rubric judge against each labeller, over the (item, criterion) pairs both graded: agreement,
    macro F1 (mean F1 of met and of not met, as HealthBench scores its grader against
    physicians) and Cohen's κ — for levels: exact, within-one, quadratic-weighted κ — with 95%
    intervals resampling encounters (the item id before `/`); beside them the criteria left out
    (parse failures, call errors, needs a model, labels not in the run, unlabelled); per
    criterion agreement; the length bias (the grader's item score regressed on the labeller's
    item score and the note's length: β per 100 words, 0 = none); the disagreements. Two
    labellers: each against the grader, and the second against the first (the ceiling).
    Example: `clinjudge agreement runs/rv --labels a.csv --labels b.csv --out runs/rv-agree`.
    """
    with one_line_errors():
        for path in run_dirs:
            _check_run_dir(path)
        rubric = criterion_labels(labels, units)
        if rubric:
            from clinjudge.cli.rubric_agreement import rubric_agreement

            found = rubric_agreement(run_dirs, labels, out, resamples=resamples)
    if rubric:
        from clinjudge.cli.rubric_agreement import print_rubric_summary

        print_rubric_summary(found, out)
        return
    with one_line_errors():
        from clinjudge.agreement.labels import (
            find_units,
            labelled_notes,
            read_label_set,
            read_units,
        )
        from clinjudge.agreement.runs import check_notes, match_notes, read_run
        from clinjudge.agreement.scores import agreement_report
        from clinjudge.cli.rubric_agreement import run_notes
        from clinjudge.report.agreement_markdown import agreement_markdown
        from clinjudge.report.agreement_page import write_agreement_html

        runs = [read_run(path) for path in run_dirs]
        sets = [read_label_set(path) for path in labels]
        units_file = units or find_units(labels)
        if units_file is None:
            raise UsageError(
                "no units.jsonl beside the --labels paths: give the labelled notes' units "
                "with --units"
            )
        notes = labelled_notes(sets, read_units(units_file))
        if not notes.units:
            raise UsageError(
                f"no label of {', '.join(map(str, labels))} names a unit of {units_file}"
            )
        checked = {}
        for run in runs:
            matched = match_notes(run, notes.units, system, labels)
            texts = run_notes(run)
            if texts is not None:
                check_notes(run, matched, texts, notes.units)
            checked[run.path] = texts is not None
        report = agreement_report(
            runs, sets, units_file, notes, system=system, checked=checked, resamples=resamples
        )
        if out.exists() and not out.is_dir():
            raise UsageError(f"--out is a file, not a directory: {out}")
        out.mkdir(parents=True, exist_ok=True)
        (out / "agreement.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
        (out / "agreement.md").write_text(agreement_markdown(report), encoding="utf-8")
        write_agreement_html(report, out)
    print_summary(report, out)


def print_summary(report: dict, out: Path) -> None:
    from rich.table import Table

    from clinjudge.report.agreement_markdown import number

    table = Table(title=f"{report['labels']['units']} labelled units")
    for header in ("judge", "units", "precision", "recall", "F1", "κ", "major recall"):
        table.add_column(header)
    rows = [(j["id"], j) for j in report["judges"]]
    rows += [(f"reviewer {Path(r['second']).name}", r["as_judge"]) for r in report["reviewers"]]
    for name, e in rows:
        cells = [number(e[k]) for k in ("precision", "recall", "f1", "kappa", "major_recall")]
        table.add_row(name, str(e["units"]), *cells)
    stdout.print(table)
    if stray := report["labels"].get("labels_without_unit"):
        stdout.print(
            f"{stray} label(s) name no text unit of the units file (another units file, or a "
            "mistyped encounter, system or unit): not scored",
            style="yellow",
        )
    files = ", ".join(str(out / f"agreement.{ext}") for ext in ("json", "md", "html"))
    stdout.print(f"wrote {files}")
