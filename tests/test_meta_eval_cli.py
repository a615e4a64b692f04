"""``clinjudge meta-eval`` end to end: the offline lexical judge over hand-made pairs cut from a
bundled note (tests/fixtures/meta_eval), report files and keys, resume, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

from clinjudge.inject.pairs import read_pairs

PAIRS = Path(__file__).parent / "fixtures" / "meta_eval" / "pairs.jsonl"


@pytest.fixture(scope="module")
def lexical_run(tmp_path_factory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("meta") / "lexical"
    result = run("meta-eval", PAIRS, "--judge", "lexical", "--backend", "offline", "--out", out)
    return out, result


def test_fixture_pairs_are_valid_single_edits():
    pairs = read_pairs(PAIRS)
    assert [p.kind for p in pairs].count("error") == 3
    for p in pairs:
        a, b = p.original_span
        c, d = p.edited_span
        assert p.original[a:b] == p.before and p.edited[c:d] == p.after
        assert p.original[:a] + p.after + p.original[b:] == p.edited


def test_offline_lexical_run_writes_the_documented_report(lexical_run):
    out, result = lexical_run
    assert result.exit_code == 0, result.output
    assert "injected errors" in result.stdout and "detection rate" in result.stdout
    report = json.loads((out / "report.json").read_text())
    assert {"pairs", "judges", "overall", "by_type", "provenance", "usage", "seconds"} <= set(
        report
    )
    assert report["pairs"]["n"] == 5 and report["pairs"]["by_kind"] == {"error": 3, "rewrite": 2}
    assert set(report["by_type"]) == {
        "dose_change",
        "laterality_flip",
        "added_drug",
        "generic_to_brand",
        "term_to_abbreviation",
    }
    for block in report["by_type"].values():
        rate = "detection_rate" if block["kind"] == "error" else "false_flag_rate"
        for key in ("n", rate, "ci95", "auroc", "auroc_ci95", "win", "tie", "loss", "excluded"):
            assert key in block
    # the lexical judge flags the wrong side and the added drug; a right->left flip is new
    assert report["by_type"]["laterality_flip"]["detection_rate"] == 1.0
    assert report["by_type"]["laterality_flip"]["differential_rate"] == 1.0
    assert report["overall"]["errors"]["n"] == 3 and report["overall"]["rewrites"]["n"] == 2
    # the lexical judge flags Lisinopril (the transcript says Zestril): the brand rewrite
    # clears that flag, so the original scores lower -> AUROC 0 on that pair
    assert report["by_type"]["generic_to_brand"]["auroc"] == 0.0
    assert report["provenance"]["judges"]["lexical"]["backend"] == "offline"
    for name in ("report.md", "pairs_scored.jsonl", "detection.png", "auroc.png"):
        assert (out / name).is_file(), name
    scored = (out / "pairs_scored.jsonl").read_text().splitlines()
    assert len(scored) == 5 and all(json.loads(x)["judge"] == "lexical" for x in scored)
    # what judging cost (issue 38): offline, no call; the console and report.md show it
    cost = report["cost"]["judges"]["lexical"]
    assert cost["calls"] == 0 and cost["items"] > 0 and cost["seconds"] > 0
    assert "## Cost" in (out / "report.md").read_text()
    assert "Cost: no model call (offline judges)" in " ".join(result.stdout.split())


def test_rerun_resumes_without_judging_again(lexical_run):
    out, _ = lexical_run
    rows_before = (out / "runs" / "lexical.jsonl").read_text()
    result = run("meta-eval", PAIRS, "--judge", "lexical", "--backend", "offline", "--out", out)
    assert result.exit_code == 0, result.output
    assert (out / "runs" / "lexical.jsonl").read_text() == rows_before
    report = json.loads((out / "report.json").read_text())
    assert report["resumed_items"] == {"lexical": 10}


def test_limit_takes_the_first_pairs(tmp_path):
    result = run("meta-eval", PAIRS, "--judge", "lexical", "--backend", "offline", "--limit", 2,
                 "--out", tmp_path / "two")  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "two" / "report.json").read_text())
    assert report["pairs"]["n"] == 2 and list(report["by_type"]) == ["dose_change",
                                                                     "laterality_flip"]  # fmt: skip


def test_missing_pair_file(tmp_path):
    result = run("meta-eval", tmp_path / "nope.jsonl", "--judge", "lexical", "--out", tmp_path)
    assert_one_line_error(result, "pair file not found")


def test_bad_jsonl_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(PAIRS.read_text().splitlines()[0] + "\n{not json\n", encoding="utf-8")
    result = run("meta-eval", bad, "--judge", "lexical", "--out", tmp_path / "o")
    assert_one_line_error(result, "line 2: invalid JSON")


def test_unknown_judge(tmp_path):
    result = run("meta-eval", PAIRS, "--judge", "lexical,oracle", "--out", tmp_path / "o")
    assert_one_line_error(result, "unknown judge 'oracle'")


def test_a_judge_needing_a_source_with_pairs_without_one(tmp_path):
    line = json.loads(PAIRS.read_text().splitlines()[0])
    line["source"] = ""
    empty = tmp_path / "nosource.jsonl"
    empty.write_text(json.dumps(line) + "\n", encoding="utf-8")
    result = run("meta-eval", empty, "--judge", "lexical", "--backend", "offline",
                 "--out", tmp_path / "o")  # fmt: skip
    assert_one_line_error(result, "no source text")
