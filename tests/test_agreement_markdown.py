"""How ``agreement.md`` names and orders what it shows (a blind second labelling of D2N188
read the first version and found the errors cell in the first reviewer's order under a
"second vs first" header, reviewers named after their folder, and a Spearman of ±1 from two
notes)."""

from __future__ import annotations

from clinjudge.report.agreement_markdown import (
    measure_cell,
    reviewed_table,
    reviewer_table,
    set_name,
)


def test_a_label_set_is_named_by_its_file_stem_or_its_folder_and_parent():
    assert set_name("/runs/mine/labels/reviewer_b.jsonl") == "reviewer_b"
    assert set_name("/data/aci-bench/claim-labels/labels") == "claim-labels/labels"


def test_the_errors_cell_reads_in_the_order_of_its_header():
    report = {
        "reviewers": [
            {"first": "/d/claim-labels/labels", "second": "/r/labels/b.jsonl", "units": 27,
             "encounters": 1, "agreement": 0.963, "kappa_binary": 0.92, "kappa_3": 0.93,
             "errors_first": 10, "errors_second": 9, "severity_agreement": 0.889}
        ],
        "judges": [
            {"id": "run:lexical", "on_reviewed_units": [
                {"second": "/r/labels/b.jsonl", "units": 27, "kappa": 0.21, "precision": 0.45,
                 "recall": 0.9}]}
        ],
        "provenance": {"label_sets": [{"path": "/d/claim-labels/labels"}]},
    }  # fmt: skip
    headers, rows = reviewer_table(report)
    column = headers.index("errors (second vs first)")
    assert rows[0][0] == "b vs claim-labels/labels"
    assert rows[0][column] == "9 vs 10"
    assert rows[0][1] == "27 (1 encounter)"
    headers, rows = reviewed_table(report)
    assert rows[0][:3] == ["run:lexical", "claim-labels/labels", "b"]


def test_a_per_note_spearman_needs_five_notes():
    entry = {"notes": 2, "note_spearman": -1.0, "ci95": {}}
    assert measure_cell(entry, "note_spearman") == "n too small"
    assert measure_cell({**entry, "notes": 5}, "note_spearman") == "-1.00"
    assert measure_cell(entry | {"kappa": 0.5}, "kappa") == "0.50"
