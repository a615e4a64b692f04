"""``clinjudge agreement`` on a rubric run (issue 39 item 6): criterion label files and their
errors, per-criterion agreement against a hand-computed table, macro F1 and κ at the edges,
seeded bootstrap intervals, the length-bias check, and levels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from clinjudge.agreement.rubric_labels import read_criterion_labels
from clinjudge.errors import ConfigError
from clinjudge.metrics.criterion_agreement import level_agreement, met_agreement
from clinjudge.metrics.length_bias import length_bias
from clinjudge.run_dir import RunDir
from tests.cli_helpers import assert_one_line_error, run

JUDGE = "rubric:checklist.rubric.md"


def grade(cid: str, met: bool | None = None, status: str = "graded", level: int | None = None):
    out = {"id": cid, "text": f"The note documents {cid}.", "points": 1.0, "status": status}
    if status == "graded":
        out |= {"level": level, "top_level": 5} if level is not None else {"met": met}
        out |= {"reason": f"grader on {cid}", "graded_by": "llm"}
    return out


#: The grader's verdicts: (item, criterion) → grade. Every item is its own encounter.
GRADES = {
    "E1/a": [grade("c1", True), grade("c2", True)],
    "E2/a": [grade("c1", True), grade("c2", False)],
    "E3/a": [grade("c1", False), grade("c2", False)],
    "E4/a": [grade("c1", True), grade("c2", status="needs_model")],
    "E5/a": [grade("c1", status="parse_failure"), grade("c2", False)],
    "E6/a": [grade("c1", True), grade("c2", True), grade("c3", True)],
}
#: Labeller A: c1 met everywhere; c2 met on E6 only; a label of an item the run lacks.
LABELS_A = [(item, "c1", "met") for item in GRADES] + [
    (item, "c2", "met" if item == "E6/a" else "not met") for item in GRADES
]
LABELS_A.append(("E7/a", "c1", "met"))


def write_run(root: Path, grades=GRADES, mode: str = "met") -> Path:
    """A rubric run directory as `compare` leaves one: manifest, dataset and the judge's rows."""
    data = root / "data.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": i, "transcript": "[doctor] hi", "note": "word " * (10 * (k + 1))})
            + "\n"
            for k, i in enumerate(grades)
        )
    )
    run_dir = root / "run"
    (run_dir / "runs").mkdir(parents=True)
    load = {"limit": None, "transcript_column": None, "note_column": None}
    load |= {"id_column": None, "strict": False}
    command = {"dataset": str(data), "judges": JUDGE, "load": load}
    command |= {"claims": "auto", "option": [], "systems": None, "system_column": None}
    manifest = {"version": "test", "judges": {JUDGE: {"backend": "llm"}}, "command": command}
    (run_dir / "run.json").write_text(json.dumps(manifest))
    rows = [{"id": i, "mode": mode, "criteria": g} for i, g in grades.items()]
    RunDir(run_dir).rows_path(JUDGE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run_dir


def write_labels(path: Path, labels, labeller: str | None = None) -> Path:
    rows = [{"item": i, "criterion": c, "label": v} for i, c, v in labels]
    if labeller:
        rows = [r | {"labeller": labeller} for r in rows]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_rubric_run_against_two_labellers_matches_the_hand_computed_table(tmp_path):
    run_dir = write_run(tmp_path)
    a = write_labels(tmp_path / "A.jsonl", LABELS_A)
    flipped = [(i, c, "met" if (i, c) == ("E2/a", "c2") else v) for i, c, v in LABELS_A]
    b = tmp_path / "B.csv"
    b.write_text("item,criterion,label\n" + "".join(f"{i},{c},{v}\n" for i, c, v in flipped))
    out = tmp_path / "agree"
    result = run("agreement", run_dir, "--labels", a, "--labels", b, "--out", out)
    assert result.exit_code == 0, result.output
    assert "macro F1" in result.output and "length bias" in result.output
    report = json.loads((out / "agreement.json").read_text())
    assert report["kind"] == "rubric" and (out / "agreement.md").is_file()
    versus_a = report["graders"][0]["against"][0]
    # pairs: c1 on E1 E2 E3 E4 E6 (E3 wrong), c2 on E1 E2 E3 E5 E6 (E1 wrong):
    # TP 5, FN 1, FP 1, TN 3
    assert versus_a["labeller"] == "A" and versus_a["n"] == 10
    assert versus_a["agreement"]["value"] == pytest.approx(0.8)
    assert versus_a["f1_met"] == pytest.approx(10 / 12)
    assert versus_a["f1_not_met"] == pytest.approx(6 / 8)
    assert versus_a["macro_f1"]["value"] == pytest.approx((10 / 12 + 6 / 8) / 2)
    assert versus_a["kappa"]["value"] == pytest.approx((0.8 - 0.52) / 0.48)
    lo, hi = versus_a["kappa"]["ci95"]
    assert lo <= hi
    assert versus_a["excluded"] == {
        "parse_failure": 1,
        "error": 0,
        "needs_model": 1,
        "tie": 0,
        "label_not_in_run": 1,
        "unlabelled": 1,
    }
    per = versus_a["per_criterion"]
    assert per["c1"]["n"] == 5 and per["c1"]["agreement"]["value"] == pytest.approx(0.8)
    assert per["c1"]["human_met"] == 5 and per["c1"]["grader_met"] == 4
    assert per["c2"]["human_met"] == 1 and per["c2"]["grader_met"] == 2
    wrong = {(d["item"], d["criterion"]) for d in versus_a["disagreements"]}
    assert wrong == {("E3/a", "c1"), ("E1/a", "c2")}
    ceiling = report["labellers"][0]
    assert (ceiling["first"], ceiling["second"], ceiling["n"]) == ("A", "B", 13)
    assert ceiling["agreement"]["value"] == pytest.approx(12 / 13)
    assert versus_a["length_bias"]["n"] == 6


def test_levels_against_a_met_rubric_and_malformed_labels_are_one_line_errors(tmp_path):
    run_dir = write_run(tmp_path)
    levels = write_labels(tmp_path / "levels.jsonl", [("E1/a", "c1", 3)])
    result = run("agreement", run_dir, "--labels", levels, "--out", tmp_path / "o")
    assert_one_line_error(result, "levels.jsonl:1: label: level 3, but rubric:checklist")
    bad = write_labels(tmp_path / "bad.jsonl", [("E1/a", "c1", "maybe")])
    result = run("agreement", run_dir, "--labels", bad, "--out", tmp_path / "o")
    assert_one_line_error(result, "bad.jsonl:1: label: 'maybe' is not met, not met or a level")
    stray = write_labels(tmp_path / "stray.jsonl", [("E9/a", "c1", "met")])
    result = run("agreement", run_dir, "--labels", stray, "--out", tmp_path / "o")
    assert_one_line_error(result, "names a criterion the runs graded")


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"criterion": "c1", "label": "met"}\n', "x.jsonl:1: item: missing or empty"),
        ('{"item": "i", "criterion": " ", "label": "met"}\n', "x.jsonl:1: criterion: missing"),
        ('{"item": "i", "criterion": "c"}\n', "x.jsonl:1: label: missing or empty"),
        ('{"item": "i", "criterion": "c", "label": 0}\n', "level 0 is below 1"),
        ('{"item": "i", "criterion": "c", "label": "yes"}\n', "'yes' is not met, not met"),
        ("[1, 2]\n", "x.jsonl:1: not a JSON object"),
        ("{oops\n", "x.jsonl:1: not JSON"),
        ("\n", "x.jsonl: no label in the file"),
        (
            '{"item": "i", "criterion": "c", "label": "met"}\n'
            '{"item": "i", "criterion": "c", "label": "not met"}\n',
            "x.jsonl:2: criterion: 'c' of item 'i' is labelled again by 'x' (first at",
        ),
        (
            '{"item": "i", "criterion": "c", "label": "met"}\n'
            '{"item": "j", "criterion": "c", "label": 4}\n',
            "x.jsonl:2: label: 'x' mixes met / not met labels with levels",
        ),
    ],
)
def test_each_field_of_a_jsonl_label_file_is_checked(tmp_path, content, needle):
    path = tmp_path / "x.jsonl"
    path.write_text(content)
    with pytest.raises(ConfigError, match=None) as caught:
        read_criterion_labels([path])
    assert needle in str(caught.value) and "\n" not in str(caught.value)


def test_a_csv_label_file_names_its_missing_column_and_reads_labellers(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("item,criteria,label\nE1,c1,met\n")
    with pytest.raises(ConfigError, match=r"x.csv:1: no 'criterion' column"):
        read_criterion_labels([path])
    path.write_text("item,criterion,label,labeller\nE1,c1,met,ann\nE1,c1,Not_Met,bo\nE2,c1,2,bo\n")
    with pytest.raises(ConfigError, match="x.csv:4: label: 'bo' mixes"):
        read_criterion_labels([path])
    path.write_text("item,criterion,label,labeller\nE1,c1,met,ann\nE1,c1,Not_Met,bo\n")
    found = read_criterion_labels([path])
    assert found.labellers == ["ann", "bo"]
    assert found.by_labeller["bo"][("E1", "c1")].value is False


def test_macro_f1_leaves_out_a_class_absent_from_both_sides_and_kappa_says_undefined():
    clusters = [f"e{i}" for i in range(6)]
    everything_met = met_agreement([True] * 6, [True] * 6, clusters)
    assert everything_met["macro_f1"]["value"] == 1.0
    assert everything_met["f1_not_met"] is None
    assert everything_met["kappa"]["value"] is None
    assert "one class" in everything_met["kappa"]["undefined"]
    # "not met" absent from the truth but called once: its F1 is 0, not left out
    one_miss = met_agreement([True] * 6, [True] * 5 + [False], clusters)
    assert one_miss["f1_not_met"] == 0.0
    assert one_miss["macro_f1"]["value"] == pytest.approx((10 / 11 + 0) / 2)
    assert one_miss["kappa"]["value"] == pytest.approx(0.0)


def test_bootstrap_intervals_are_reproducible_with_a_seed_and_need_five_clusters():
    rng = np.random.default_rng(3)
    truth = list(rng.random(60) < 0.5)
    graded = [t if rng.random() < 0.8 else not t for t in truth]
    clusters = [f"e{i // 6}" for i in range(60)]
    first = met_agreement(truth, graded, clusters, resamples=300, seed=7)
    again = met_agreement(truth, graded, clusters, resamples=300, seed=7)
    other = met_agreement(truth, graded, clusters, resamples=300, seed=8)
    assert first["kappa"]["ci95"] == again["kappa"]["ci95"]
    assert first["macro_f1"]["ci95"] == again["macro_f1"]["ci95"]
    assert first["kappa"]["ci95"] != other["kappa"]["ci95"]
    few = met_agreement(truth[:24], graded[:24], clusters[:24])
    assert few["clusters"] == 4 and few["kappa"]["ci95"] is None


def test_levels_exact_within_one_and_quadratic_kappa():
    human = [1, 2, 3, 4, 5, 3]
    grader = [1, 3, 3, 2, 5, 3]
    found = level_agreement(human, grader, [f"e{i}" for i in range(6)])
    assert found["exact"]["value"] == pytest.approx(4 / 6)
    assert found["within_one"]["value"] == pytest.approx(5 / 6)
    # quadratic κ by hand: 1 − Σ(h − g)² / mean over all pairs of (h_i − g_j)²
    observed = sum((h - g) ** 2 for h, g in zip(human, grader, strict=True)) / 6
    chance = sum((h - g) ** 2 for h in human for g in grader) / 36
    assert found["kappa_quadratic"]["value"] == pytest.approx(1 - observed / chance)


def test_length_bias_is_positive_when_the_grader_rewards_words_and_zero_when_not():
    rng = np.random.default_rng(0)
    human = rng.choice([0.25, 0.5, 0.75, 1.0], size=40)
    words = rng.integers(80, 600, size=40)
    clusters = [f"e{i}" for i in range(40)]
    rewarding = np.clip(human + 0.05 * words / 100, 0, 10)
    biased = length_bias(list(rewarding), list(human), list(words), clusters, resamples=300)
    slope = biased["slope_per_100_words"]
    assert slope["value"] == pytest.approx(0.05)
    assert slope["ci95"][0] > 0 and biased["spearman_excess"]["value"] > 0.9
    fair = human + rng.normal(0, 0.02, size=40)
    unbiased = length_bias(list(fair), list(human), list(words), clusters, resamples=300)
    slope = unbiased["slope_per_100_words"]
    assert abs(slope["value"]) < 0.01 and slope["ci95"][0] < 0 < slope["ci95"][1]
    assert unbiased["n"] == 40


def test_length_bias_is_undefined_on_too_few_items_or_collinear_length():
    three = length_bias([0.1, 0.5, 0.9], [0.0, 0.5, 1.0], [100, 200, 300], ["a", "b", "c"])
    assert three["slope_per_100_words"]["value"] is None
    human = [0.0, 0.25, 0.5, 0.75, 1.0]
    collinear = [100 + 400 * h for h in human]
    found = length_bias(human, human, collinear, list("abcde"))
    assert found["slope_per_100_words"]["value"] is None


def test_a_scale_run_is_scored_by_levels_with_the_labellers_ceiling(tmp_path):
    levels = {f"E{k}/a": (k % 5 + 1, (k + 1) % 5 + 1) for k in range(6)}
    grades = {i: [grade("clarity", level=g)] for i, (g, _) in levels.items()}
    run_dir = write_run(tmp_path, grades, mode="scale")
    a = write_labels(tmp_path / "a.jsonl", [(i, "clarity", g) for i, (g, _) in levels.items()])
    b = write_labels(tmp_path / "b.jsonl", [(i, "clarity", str(h)) for i, (_, h) in levels.items()])
    out = tmp_path / "agree"
    result = run("agreement", run_dir, "--labels", a, "--labels", b, "--out", out)
    assert result.exit_code == 0, result.output
    assert "within one" in result.output
    report = json.loads((out / "agreement.json").read_text())
    versus_a, versus_b = report["graders"][0]["against"]
    assert versus_a["exact"]["value"] == 1.0 and versus_a["kappa_quadratic"]["value"] == 1.0
    # b is a's level + 1, wrapping 5 → 1 once: five within one, none exact
    assert versus_b["exact"]["value"] == 0.0
    assert versus_b["within_one"]["value"] == pytest.approx(5 / 6)
    assert report["labellers"][0]["mode"] == "scale"
    assert report["labellers"][0]["within_one"]["value"] == pytest.approx(5 / 6)


def test_sentence_labels_given_for_a_rubric_run_name_the_labels_it_takes(tmp_path):
    run_dir = write_run(tmp_path)
    claims = tmp_path / "claims.jsonl"
    claims.write_text('{"encounter": "E1", "system": "a", "unit": 0, "label": "supported"}\n')
    result = run("agreement", run_dir, "--labels", claims, "--out", tmp_path / "o")
    assert_one_line_error(result, "a rubric judge is scored against criterion labels")
    mixed = write_labels(tmp_path / "A.jsonl", LABELS_A)
    result = run("agreement", run_dir, "--labels", claims, "--labels", mixed, "--out", tmp_path)
    assert_one_line_error(result, "--labels mixes criterion label files with sentence labels")


def test_a_jury_run_counts_its_ties_apart_and_takes_its_mean_level_to_the_nearest():
    from clinjudge.agreement.rubric_labels import CriterionLabel
    from clinjudge.agreement.rubric_runs import RubricJudge
    from clinjudge.agreement.rubric_scores import against_labeller

    tie = {"id": "c1", "status": "tie", "votes": {"voted": 2, "of": 2, "met": 1, "not_met": 1}}
    met = RubricJudge("rubric:j.md", "met", {"x": {"c1": tie, "c2": grade("c2", True)}})
    labels = {(i, c): CriterionLabel(i, c, True, "a") for i, c in (("x", "c1"), ("x", "c2"))}
    versus = against_labeller(met, labels, None, resamples=0, seed=0)
    assert versus["excluded"]["tie"] == 1 and versus["excluded"]["error"] == 0
    levels = {"y": {"c": {"id": "c", "status": "graded", "level": 4.5, "top_level": 5}}}
    scale = RubricJudge("rubric:s.md", "scale", levels)
    versus = against_labeller(
        scale, {("y", "c"): CriterionLabel("y", "c", 5, "a")}, None, resamples=0, seed=0
    )
    assert versus["grader_mean_level"] == 5.0 and not versus["disagreements"]  # 4.5 is level 5
