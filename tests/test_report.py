"""Compare report (JSON, Markdown, PNG plots) and the CLI's per-claim table."""

from __future__ import annotations

import copy
import json
import math

import pytest
from rich.console import Console

from clinjudge.report import render_claim_table, write_compare_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def judge(mode: str, rate: float, n_claims: int, failures: int, errors: int) -> dict:
    hallucinated = round(rate * n_claims)
    return {
        "hallucination_rate": hallucinated / n_claims,
        "ci95": [max(0.0, rate - 0.05), rate + 0.05],
        "n_claims": n_claims,
        "n_hallucinated": hallucinated,
        "n_notes": 4,
        "tiers": {"1": n_claims - hallucinated - 10, "2": 6, "3": 4, "4": hallucinated - 1, "5": 1},
        "subtypes": {"restatement": n_claims - hallucinated, "no_basis": hallucinated},
        "sections": {
            "subjective": {"n_claims": 50, "n_hallucinated": 10, "rate": 0.2},
            "plan": {"n_claims": n_claims - 50, "n_hallucinated": 5, "rate": 5 / (n_claims - 50)},
        },
        "parse_failures": failures,
        "errors": errors,
        "seconds": 12.0,
        "seconds_per_note_median": 3.0,
        "mode": mode,
        "backend": "offline",
    }


@pytest.fixture
def report() -> dict:
    per_item = [
        {
            "id": f"D2N00{i}",
            "lexical": {"hallucination_rate": 0.3 + 0.05 * i, "n_claims": 25},
            "inference-aware": {"hallucination_rate": 0.05 * i, "n_claims": 25},
        }
        for i in range(4)
    ]
    per_item.append({"id": "D2N009", "lexical": {"hallucination_rate": None, "n_claims": 0}})
    flips = [
        {
            "id": "D2N001",
            "claim_id": f"c{i}",
            "section": "plan",
            "text": f"Continue Zestril | 10 mg daily, claim number {i}",
            "verdicts": {
                "lexical": {"tier": 4, "supported": False},
                "inference-aware": {"tier": 2, "supported": True},
            },
        }
        for i in range(25)
    ]
    return {
        "dataset": "aci-demo",
        "n_items": 5,
        "judges": {
            "lexical": judge("lexical", 0.35, 100, failures=2, errors=1),
            "inference-aware": judge("inference-aware", 0.09, 100, failures=0, errors=4),
        },
        "paired": [
            {
                "a": "lexical",
                "b": "inference-aware",
                "n_notes": 4,
                "mean_rate_difference": 0.3,
                "ci95": [0.25, 0.35],
            }
        ],
        "per_item": per_item,
        "flips": flips,
        "provenance": {
            "package_version": "9.9.9",
            "model": "gpt-test",
            "backend": "offline",
            "prompts": [{"name": "soap.lexical", "version": "2", "sha256": "a1b2" * 16}],
            "dataset": {"name": "aci-demo", "sha256": "f00d"},
        },
    }


def assert_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 1024


def test_writes_all_files(tmp_path, report):
    written = write_compare_report(report, tmp_path / "out")
    names = [p.name for p in written]
    assert names == ["report.json", "report.md", "rates.png", "tiers.png", "per_note.png"]
    for path in written:
        assert path.parent == tmp_path / "out" and path.is_file()
    for path in written[2:]:
        assert_png(path)


def test_json_round_trips(tmp_path, report):
    write_compare_report(report, tmp_path)
    text = (tmp_path / "report.json").read_text("utf-8")
    assert json.loads(text) == report
    assert text.startswith('{\n  "dataset"')  # indent 2


def test_json_replaces_nan_and_tuples(tmp_path, report):
    report["paired"][0]["mean_rate_difference"] = math.nan
    report["paired"][0]["ci95"] = (math.nan, math.inf)
    write_compare_report(report, tmp_path)
    loaded = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert loaded["paired"][0]["mean_rate_difference"] is None
    assert loaded["paired"][0]["ci95"] == [None, None]


def test_markdown_content(tmp_path, report):
    write_compare_report(report, tmp_path)
    md = (tmp_path / "report.md").read_text("utf-8")
    for name in ("lexical", "inference-aware"):
        assert f"| {name} | {name} | offline | " in md
    assert "lexical excludes 3 claims (2 parse failures + 1 error)" in md
    assert "inference-aware excludes 4 claims (0 parse failures + 4 errors)" in md
    assert "35.0%" in md and "9.0%" in md and "[30.0%, 40.0%]" in md
    assert "+30.0 pp" in md and "[+25.0 pp, +35.0 pp]" in md
    assert "Showing 20 of 25 claims" in md
    assert "claim number 19" in md and "claim number 20" not in md
    assert "Continue Zestril \\| 10 mg" in md  # pipes escaped inside table cells
    assert "tier 4 hallucinated" in md and "tier 2 supported" in md
    assert "9.9.9" in md and "gpt-test" in md and "soap.lexical" in md and "a1b2a1b2" in md
    assert "![rates](rates.png)" in md and "![per_note](per_note.png)" in md
    assert "| plan |" in md and "| subjective |" in md


def test_missing_data_does_not_crash_and_skips_plots(tmp_path):
    minimal = {
        "dataset": "empty",
        "n_items": 0,
        "judges": {
            "only": {
                "hallucination_rate": None,
                "ci95": [None, None],
                "n_claims": 0,
                "n_hallucinated": 0,
                "parse_failures": 5,
                "errors": 0,
            }
        },
    }
    written = write_compare_report(minimal, tmp_path)
    assert [p.name for p in written] == ["report.json", "report.md"]
    md = (tmp_path / "report.md").read_text("utf-8")
    assert "only excludes 5 claims (5 parse failures + 0 errors)" in md
    assert "| only | n/a | n/a | n/a | n/a |" in md
    assert "![" not in md
    assert json.loads((tmp_path / "report.json").read_text("utf-8")) == minimal


def test_a_plot_that_fails_costs_no_other_file(tmp_path, report, monkeypatch, capsys):
    import clinjudge.report.compare_plots as plots

    def broken(*_args):
        raise ValueError("'yerr' must not contain negative values")

    monkeypatch.setattr(plots, "plot_rates", broken)
    written = write_compare_report(report, tmp_path)
    assert [p.name for p in written] == ["report.json", "report.md"]
    assert "plots not drawn: ValueError: 'yerr'" in capsys.readouterr().err


def test_every_claim_supported_draws_its_rates(tmp_path, report):
    """0 of 11 hallucinated: the error bar is [0, upper bound], never negative (rounding put
    the Wilson lower bound of 0/11 at 2.8e-17, and matplotlib refused the plot)."""
    for judge in report["judges"].values():
        judge["n_claims"], judge["n_hallucinated"], judge["hallucination_rate"] = 11, 0, 0.0
    written = write_compare_report(report, tmp_path)
    assert "rates.png" in [p.name for p in written]


def test_a_judge_that_judged_nothing_shows_no_interval(tmp_path):
    """Every call failed: rate n/a, and no "[0.0%, 100.0%]" (the Wilson interval of 0 of 0)."""
    dead = {
        "hallucination_rate": None,
        "ci95": [0.0, 1.0],
        "major_rate": None,
        "major_ci95": [0.0, 1.0],
        "n_claims": 0,
        "n_hallucinated": 0,
        "parse_failures": 0,
        "errors": 142,
    }
    write_compare_report({"dataset": "d", "n_items": 3, "judges": {"llm": dead}}, tmp_path)
    md = (tmp_path / "report.md").read_text("utf-8")
    assert "| llm | n/a | n/a | n/a | n/a | 0 | n/a | n/a | 0 |" in md and "100.0%" not in md


def test_empty_report(tmp_path):
    written = write_compare_report({}, tmp_path)
    assert [p.name for p in written] == ["report.json", "report.md"]
    assert "No judge results." in (tmp_path / "report.md").read_text("utf-8")


def test_per_note_plot_needs_two_judges_with_rates(tmp_path, report):
    one_judge = copy.deepcopy(report)
    del one_judge["judges"]["inference-aware"]
    names = [p.name for p in write_compare_report(one_judge, tmp_path / "a")]
    assert "per_note.png" not in names and "rates.png" in names
    no_items = copy.deepcopy(report)
    no_items["per_item"] = []
    names = [p.name for p in write_compare_report(no_items, tmp_path / "b")]
    assert "per_note.png" not in names and "tiers.png" in names


def test_tiers_plot_skipped_without_tiers(tmp_path, report):
    for j in report["judges"].values():
        j["tiers"] = {}
    names = [p.name for p in write_compare_report(report, tmp_path)]
    assert "tiers.png" not in names and "rates.png" in names


# --- claim table -------------------------------------------------------------------------------


CLAIMS = [
    {
        "id": "c1",
        "text": "Takes Zestril 10 mg daily. " * 10,
        "section": "subjective",
        "start": 0,
        "end": 26,
        "tier": 2,
        "supported": True,
        "subtype": "trade_generic",
        "rationale": "Zestril is lisinopril.",
        "evidence": [{"source": "transcript", "start": 5, "end": 30, "text": "lisinopril ten"}],
        "knowledge": [{"concept_id": "RX:29046", "preferred": "lisinopril"}],
    },
    {
        "id": "c2",
        "text": "Left knee pain.",
        "section": "assessment",
        "start": 30,
        "end": 45,
        "tier": 5,
        "supported": False,
        "subtype": "contradiction",
        "rationale": "Transcript says right knee.",
        "evidence": [],
        "knowledge": [],
    },
    {
        "id": "c3",
        "text": "Follow up in 2 weeks.",
        "section": "plan",
        "start": 50,
        "end": 71,
        "tier": None,
        "supported": None,
        "subtype": None,
        "rationale": "",
        "evidence": [],
        "knowledge": [],
        "failure": "unparseable model output",
    },
]


def render(table) -> str:
    console = Console(record=True, width=250, color_system=None)
    console.print(table)
    return console.export_text()


def test_claim_table_columns_and_rows():
    table = render_claim_table(CLAIMS)
    headers = [c.header for c in table.columns]
    assert headers == ["id", "section", "tier", "verdict", "claim", "why", "evidence", "knowledge"]
    assert table.row_count == 3
    text = render(table)
    assert "2 (trade_generic)" in text and "supported" in text
    assert "5 (contradiction)" in text and "hallucinated" in text
    assert '"lisinopril ten"' in text and "lisinopril [RX:29046]" in text
    assert "not judged: unparseable model output" in text
    assert "3 claims: 1 supported, 1 hallucinated, 1 not judged" in text


def test_claim_table_truncates_long_text():
    text = render(render_claim_table(CLAIMS[:1]))
    assert "…" in text
    assert text.count("Zestril") < 10


def test_claim_table_empty():
    table = render_claim_table([])
    assert table.row_count == 0
    assert "0 claims" in render(table)


def test_a_failed_claim_reads_as_a_failure_not_a_dict():
    from clinjudge.report.claim_table import failure_text

    text = failure_text({"kind": "error", "reason": "APIConnectionError: Connection error."})
    assert text == "call failed: APIConnectionError: Connection error."
    assert failure_text({"kind": "parse_failure", "reason": "no JSON"}).startswith("reply unread")
    assert failure_text(None) == "not judged: unknown failure"
