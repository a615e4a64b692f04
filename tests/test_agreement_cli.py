"""``clinjudge agreement`` (SPEC §9): a compare run's SOAP judge against hand-written sentence
labels of two aci-demo notes (``tests/fixtures/agreement``: 16 labelled units, a run whose claims
are placed by hand, a second reviewer of D2N005), every number checked against the confusion
counts worked out by hand in the comments; reviewer–reviewer κ; the exit-2 cases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

from clinjudge.metrics.unit_agreement import JudgedClaim, encounter_bootstrap, tier5_precision
from clinjudge.metrics.unit_labels import LabelledUnit, UnitResult

FIXTURE = Path(__file__).parent / "fixtures" / "agreement"
RUN, LABELS, SECOND = FIXTURE / "run", FIXTURE / "labels", FIXTURE / "second"


def agreement(tmp_path: Path, *args: object) -> dict:
    result = run("agreement", *args, "--out", tmp_path / "out", "--resamples", 200)
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / "out" / "agreement.json").read_text())


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    return agreement(tmp_path_factory.mktemp("agr"), RUN, "--labels", LABELS, "--labels", SECOND)


def test_judge_numbers_equal_the_hand_computed_ones(report):
    # 16 labelled units; D2N005 u16's only claim has no verdict: unjudged, excluded.
    # TP D2N005 u6 u17, D2N007 u3; FP D2N005 u3 u10; FN D2N005 u12 u18, D2N007 u4; TN 7.
    j = report["judges"][0]
    assert j["id"] == "run:lexical"
    assert (j["units"], j["excluded_units"]) == (15, 1)
    assert (j["tp"], j["fp"], j["fn"], j["tn"]) == (3, 2, 3, 7)
    assert j["precision"] == pytest.approx(3 / 5)
    assert j["recall"] == pytest.approx(3 / 6)
    assert j["f1"] == pytest.approx(6 / 11)
    assert j["accuracy"] == pytest.approx(10 / 15)
    # p_o = 10/15, p_e = 0.4·(1/3) + 0.6·(2/3) = 8/15 → κ = (2/15)/(7/15)
    assert j["kappa"] == pytest.approx(2 / 7)
    assert (j["majors"], j["majors_flagged"], j["major_recall"]) == (4, 2, 0.5)
    assert j["all_supported_accuracy"] == pytest.approx(9 / 15)
    # per-note shares: D2N005 4/11 labelled vs 4/11 judged, D2N007 2/4 vs 1/4 → ranks reversed
    assert j["note_spearman"] == pytest.approx(-1.0)
    assert j["systems"] == {
        "reference": {"units": 15, "gold_share": 0.4, "judged_share": pytest.approx(1 / 3)}
    }
    # two tier-5 claims: over u17 (contradicted) and u10 (supported)
    assert {k: j["tier5"][k] for k in ("claims", "contradicted", "supported", "precision")} == {
        "claims": 2,
        "contradicted": 1,
        "supported": 1,
        "precision": 0.5,
    }
    # flags called major: u6, u10, u17; labelled-major flagged units u6, u17 both called major
    assert j["severity"]["major_recall"] == 1.0
    assert j["severity"]["major_precision"] == pytest.approx(2 / 3)
    assert j["ci95"]["kappa"] == [None, None]  # 2 encounters: too few to resample


def test_disagreements_come_worst_first_with_the_rationales(report):
    found = report["judges"][0]["disagreements"]
    order = [(d["note_id"], d["unit"], d["kind"]) for d in found]
    assert order == [
        ("D2N005/reference", 18, "missed major error"),  # contradicted
        ("D2N007/reference", 4, "missed major error"),  # unsupported
        ("D2N005/reference", 10, "false flag"),  # by a tier-5 claim
        ("D2N005/reference", 3, "false flag"),  # by a tier-4 claim
        ("D2N005/reference", 12, "missed minor error"),
    ]
    assert found[0]["reason"] == "return in three weeks in the visit"
    assert found[2]["claims"][0]["rationale"] == "claim affirms tenderness the patient denied"
    assert found[2]["group"] == "affirmed ↔ denied"
    assert report["judges"][0]["false_flag_kinds"] == {
        "no basis (wording)": 1,
        "affirmed ↔ denied": 1,
    }


def test_two_label_files_give_reviewer_reviewer_kappa(report):
    # 12 units of D2N005; they differ on u3 and u12 (binary) and on u17's severity.
    (r,) = report["reviewers"]
    assert (r["units"], r["errors_first"], r["errors_second"]) == (12, 5, 5)
    assert r["agreement"] == pytest.approx(10 / 12)
    # p_e = (5/12)² + (7/12)² = 74/144 → κ = (120 − 74)/(144 − 74)
    assert r["kappa_binary"] == pytest.approx(46 / 70)
    # three labels: p_e = (7² + 3² + 2²)/144 = 62/144 → κ = (120 − 62)/(144 − 62)
    assert r["kappa_3"] == pytest.approx(58 / 82)
    assert r["severity_agreement"] == pytest.approx(3 / 4)
    assert r["as_judge"]["precision"] == pytest.approx(4 / 5)
    # the judge on the same units (u16 unjudged): TP 2, FP 2, FN 2, TN 5 → κ = 12/56
    (same,) = report["judges"][0]["on_reviewed_units"]
    assert same["units"] == 11
    assert same["kappa"] == pytest.approx(3 / 14)


def test_several_runs_are_one_table_side_by_side(tmp_path):
    shutil.copytree(RUN, tmp_path / "hosted")
    found = agreement(tmp_path, RUN, tmp_path / "hosted", "--labels", LABELS)
    assert [j["id"] for j in found["judges"]] == ["run:lexical", "hosted:lexical"]
    assert found["judges"][0]["kappa"] == found["judges"][1]["kappa"]
    assert found["runs"][0]["notes_checked_against_units"] is True
    shas = found["provenance"]["label_sets"][0]["files"]
    assert sorted(Path(p).name for p in shas) == ["D2N005.jsonl", "D2N007.jsonl"]
    table = (tmp_path / "out" / "agreement.md").read_text()
    assert "| run:lexical | 15 / 2 | 0.60" in table and "| hosted:lexical | 15 / 2 | 0.60" in table
    assert "different labelled units" not in table
    page = (tmp_path / "out" / "agreement.html").read_text()
    assert page.count("<summary>") == 2 and "missed major error" in page
    rows = (tmp_path / "hosted" / "runs" / "lexical.jsonl").read_text().splitlines()
    (tmp_path / "hosted" / "runs" / "lexical.jsonl").write_text(rows[0] + "\n")  # D2N005 only
    found = agreement(tmp_path, RUN, tmp_path / "hosted", "--labels", LABELS)
    assert [j["notes"] for j in found["judges"]] == [2, 1]
    assert "different labelled units" in (tmp_path / "out" / "agreement.md").read_text()


def test_items_named_encounter_slash_system_match_their_labelled_note(tmp_path):
    """A run of ``compare --system-column`` names items ``ENCOUNTER/system``; with no dataset
    recorded the notes are scored unchecked."""
    shutil.copytree(RUN, tmp_path / "systems")
    rows = (tmp_path / "systems" / "runs" / "lexical.jsonl").read_text()
    for encounter in ("D2N005", "D2N007"):
        rows = rows.replace(f'"id": "{encounter}"', f'"id": "{encounter}/reference"')
    (tmp_path / "systems" / "runs" / "lexical.jsonl").write_text(rows)
    manifest = json.loads((tmp_path / "systems" / "run.json").read_text())
    del manifest["command"]
    (tmp_path / "systems" / "run.json").write_text(json.dumps(manifest))
    found = agreement(tmp_path, tmp_path / "systems", "--labels", LABELS, "--system", "gpt4")
    assert (found["judges"][0]["tp"], found["judges"][0]["kappa"]) == (3, pytest.approx(2 / 7))
    assert found["runs"][0]["notes_checked_against_units"] is False


def test_no_run_directory_exits_2(tmp_path):
    result = run("agreement", tmp_path / "nope", "--labels", LABELS, "--out", tmp_path / "o")
    assert_one_line_error(result, "no such run directory")


def test_labels_matching_no_note_exit_2(tmp_path):
    result = run("agreement", RUN, "--labels", LABELS, "--system", "gpt4", "--out", tmp_path)
    assert_one_line_error(result, "none of its 2 notes (D2N005, D2N007, …) has labels")


def test_a_malformed_label_line_is_named_with_file_and_line(tmp_path):
    bad = tmp_path / "labels.jsonl"
    good = (LABELS / "D2N007.jsonl").read_text().splitlines()[0]
    bad.write_text(good + "\n" + good.replace('"supported"', '"fine"') + "\n")
    args = ("--units", FIXTURE / "units.jsonl", "--out", tmp_path / "o")
    result = run("agreement", RUN, "--labels", bad, *args)
    assert_one_line_error(result, f"{bad}:2: label 'fine' is not one of")
    bad.write_text(good + "\n{not json\n")
    assert_one_line_error(run("agreement", RUN, "--labels", bad, *args), f"{bad}:2: not JSON")


def test_a_run_note_other_than_the_labelled_one_exits_2(tmp_path):
    lines = (FIXTURE / "units.jsonl").read_text().splitlines()
    lines[1] = lines[1].replace("Right middle finger pain.", "Left middle finger pain.")
    (tmp_path / "units.jsonl").write_text("\n".join(lines) + "\n")
    result = run(
        "agreement", RUN, "--labels", LABELS, "--units", tmp_path / "units.jsonl", "--out", tmp_path
    )
    assert_one_line_error(result, "note 'D2N005' is not the labelled note 'D2N005/reference'")


def unit(encounter: str, number: int, start: int, end: int, label: str) -> LabelledUnit:
    note = f"{encounter}/x"
    return LabelledUnit(note, encounter, "x", number, start, end, "", label)  # type: ignore[arg-type]


def test_a_tier5_claim_over_two_units_takes_the_worst_label():
    results = [
        UnitResult(unit("E1", 1, 0, 10, "supported"), "flagged"),
        UnitResult(unit("E1", 2, 10, 20, "contradicted"), "flagged"),
        UnitResult(unit("E1", 3, 20, 30, "unsupported"), "flagged"),
    ]
    claims = {
        "E1/x": [
            JudgedClaim(5, 15, True, tier=5),  # supported + contradicted → contradicted
            JudgedClaim(21, 25, True, tier=5),  # unsupported
            JudgedClaim(40, 45, True, tier=5),  # over no labelled unit: not counted
        ]
    }
    found = tier5_precision(results, claims)
    assert found is not None
    assert (found["claims"], found["contradicted"], found["unsupported"]) == (2, 1, 1)


def test_encounter_intervals_need_five_encounters():
    results = [
        UnitResult(unit(f"E{i}", 1, 0, 5, "unsupported" if i % 2 else "supported"), "flagged")
        for i in range(5)
    ]
    assert encounter_bootstrap(results, ("precision",), n=50)["precision"][0] is not None
    assert encounter_bootstrap(results[:4], ("precision",), n=50)["precision"] == (None, None)


def test_labels_naming_no_unit_are_counted_in_the_console_and_the_report(tmp_path):
    labels = tmp_path / "labels"
    shutil.copytree(LABELS, labels)
    row = json.loads((LABELS / "D2N007.jsonl").read_text().splitlines()[0])
    stray = [{**row, "unit": 9000}, {**row, "encounter": "D2N999"}]
    with (labels / "D2N007.jsonl").open("a") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in stray)
    args = ("--units", FIXTURE / "units.jsonl", "--out", tmp_path / "out", "--resamples", 200)
    result = run("agreement", RUN, "--labels", labels, *args)
    assert result.exit_code == 0, result.output
    assert "2 label(s) name no text unit" in result.output
    report = json.loads((tmp_path / "out" / "agreement.json").read_text())
    assert report["labels"]["labels_without_unit"] == 2
    assert (
        "2 labels of the label sets name no text unit"
        in (tmp_path / "out" / "agreement.md").read_text()
    )


def test_a_directory_of_another_kind_is_named_with_the_command_that_reads_it(tmp_path):
    meta = tmp_path / "meta"
    meta.mkdir()
    (meta / "pairs_scored.jsonl").write_text("")
    result = run("agreement", meta, "--labels", LABELS, "--out", tmp_path / "o")
    assert_one_line_error(result, "a meta-eval directory (written by clinjudge meta-eval)")
    assert_one_line_error(run("report", meta), "clinjudge meta-eval` command resumes it")
    assert_one_line_error(run("label", meta, "--reviewer", "a"), "not a compare run")
