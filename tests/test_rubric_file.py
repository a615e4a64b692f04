"""Rubric files (issue 39 item 1): what loads, and every malformed field refused in one line
that names the field and the fix; per-item criteria; the HealthBench score with negative
points, clipping and the critical gate; levels; the bootstrap over items."""

from __future__ import annotations

import pytest

from clinjudge.errors import ConfigError
from clinjudge.rubric.aggregate import summarize
from clinjudge.rubric.grades import graded_level, graded_met, needs_model
from clinjudge.rubric.loading import item_criteria, load_rubric
from clinjudge.rubric.model import Criterion
from clinjudge.rubric.scoring import healthbench_score, item_score

GOOD = """---
name: discharge-check
version: 2
reads: [transcript, note]
criteria:
  - id: allergy
    text: The note states the penicillin allergy.
    points: 5
    critical: true
    tags: {axis: completeness}
  - id: dose
    fact: metformin 500 mg twice daily
    points: 3
  - id: invented
    fact: no chest pain
    kind: contradicts
    points: -4
---
Read the note as a clinician would.
"""


def write(tmp_path, text: str, name: str = "r.md"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_markdown_rubric_loads_with_its_guidance_hash_and_fact_wording(tmp_path):
    rubric = load_rubric(write(tmp_path, GOOD))
    assert (rubric.name, rubric.version, rubric.mode) == ("discharge-check", "2", "met")
    assert rubric.guidance == "Read the note as a clinician would."
    assert len(rubric.sha256) == 64
    allergy, dose, invented = rubric.criteria
    assert allergy.tags == ("axis:completeness",) and allergy.critical
    assert dose.text == "The note documents metformin 500 mg twice daily."
    assert dose.fact_kind == "documents" and invented.fact_kind == "contradicts"
    assert invented.text == "The note contradicts no chest pain."


def test_a_yaml_rubric_loads_and_a_scale_takes_levels(tmp_path):
    text = (
        "name: quality\nmode: scale\nreads: answer\n"
        "scale: {1: wrong, 2: poor, 3: fair, 4: good, 5: exact}\n"
        "criteria:\n  - {id: accuracy, text: The answer is accurate}\n"
    )
    rubric = load_rubric(write(tmp_path, text, "q.yaml"))
    assert rubric.reads == ("answer",) and rubric.top_level == 5
    assert rubric.levels_of(rubric.criteria[0])[5] == "exact"


MALFORMED = [
    ("version: 1\ncriteria: [{id: a, text: x}]\n", "name", "give the rubric a name"),
    ("name: r\ncriteria: [{id: a, text: x, points: lots}]\n", "criteria[0].points", "number"),
    ("name: r\ncriteria: [{id: a, text: x, pionts: 2}]\n", "criteria[0].pionts", "spelling"),
    ("name: r\nmode: stars\ncriteria: [{id: a, text: x}]\n", "mode", "mode: met"),
    ("name: r\nreads: [transcript]\ncriteria: [{id: a, text: x}]\n", "reads", "'note'"),
    ("name: r\nreads: [xray]\ncriteria: [{id: a, text: x}]\n", "reads", "unknown column"),
    ("name: r\ncriteria: [{id: a}]\n", "criteria[0]", "needs 'text'"),
    ("name: r\ncriteria: [{id: a, text: x, kind: contradicts}]\n", "criteria[0]", "'fact'"),
    (
        "name: r\ncriteria: [{id: a, text: x, kind: maybe, fact: y}]\n",
        "criteria[0].kind",
        "documents",
    ),
    ("name: r\ncriteria: [{id: a, text: x}, {id: a, text: y}]\n", "used twice", "unique"),
    ("name: r\ncriteria: [{id: a, text: x, critical: perhaps}]\n", "criteria[0].critical", "true"),
    ("name: r\nmode: scale\ncriteria: [{id: a, text: x}]\n", "no levels", "'scale'"),
    (
        "name: r\nscale: {1: bad, 3: good}\nmode: scale\ncriteria: [{id: a, text: x}]\n",
        "scale",
        "1..N",
    ),
    (
        "name: r\ncriteria: [{id: a, text: x}]\naggregate: {n_resamples: 5}\n",
        "aggregate.n_resamples",
        "100",
    ),
    ("name: r\n", "criteria", "criteria"),
    ("name: r\ncriteria: [{id: a, text: x}]\nprompt: nowhere.md\n", "prompt", "no such file"),
    ("name: [r\n", "YAML at line", "syntax"),
    ("- just\n- a list\n", "YAML mapping", "name:"),
]


@pytest.mark.parametrize(("text", "field", "fix"), MALFORMED)
def test_a_malformed_rubric_is_one_line_naming_the_field_and_the_fix(tmp_path, text, field, fix):
    with pytest.raises(ConfigError) as caught:
        load_rubric(write(tmp_path, text, "r.yaml"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"rubric {tmp_path / 'r.yaml'}")
    assert field in message and fix in message, message


def test_a_markdown_file_without_front_matter_and_a_missing_file_are_one_line(tmp_path):
    with pytest.raises(ConfigError, match="no YAML front matter"):
        load_rubric(write(tmp_path, "# just prose\n"))
    with pytest.raises(ConfigError, match="cannot read it"):
        load_rubric(tmp_path / "absent.md")


def test_criteria_of_an_item_come_from_its_column_and_are_checked(tmp_path):
    rubric = load_rubric(write(tmp_path, "name: r\ncriteria_column: rubric\n", "r.yaml"))
    found = item_criteria(rubric, '[{"id": "c1", "fact": "cough", "points": 2}]', "v1")
    assert [c.id for c in found] == ["c1"] and found[0].points == 2
    assert item_criteria(rubric, [{"id": "c2", "text": "x"}], "v1")[0].id == "c2"
    for bad, what in (
        ("[{", "not JSON"),
        ('{"id": "c1"}', "expected a JSON list"),
        ('[{"id": "c1", "text": "x", "points": "many"}]', "criterion 0: points"),
        ('[{"id": "c1", "text": "x"}, {"id": "c1", "text": "y"}]', "used twice"),
    ):
        with pytest.raises(ConfigError) as caught:
            item_criteria(rubric, bad, "v1")
        assert what in str(caught.value) and "item 'v1', column 'rubric'" in str(caught.value)


def met(cid: str, points: float, is_met: bool, critical: bool = False) -> dict:
    c = Criterion(id=cid, text=cid, points=points, critical=critical)
    return graded_met(c, is_met, reason="", turns=[], note_span=[-1, -1], graded_by="llm")


def test_healthbench_score_counts_negative_points_and_clips_to_zero_and_one():
    assert healthbench_score([met("a", 5, True), met("b", 5, False)]) == 0.5
    # an error met takes points away: (5 - 4) / 5
    assert healthbench_score([met("a", 5, True), met("e", -4, True)]) == pytest.approx(0.2)
    assert healthbench_score([met("a", 5, False), met("e", -4, True)]) == 0.0  # clipped at 0
    assert healthbench_score([met("e", -4, False)]) is None  # no positive points
    # an error not met gives nothing; the score never passes 1
    assert healthbench_score([met("a", 5, True), met("e", -4, False)]) == 1.0


def test_ungraded_criteria_do_not_count_and_are_counted(tmp_path):
    rubric = load_rubric(write(tmp_path, GOOD))
    grades = [met("a", 5, True), needs_model(Criterion(id="b", text="b", points=5))]
    row = item_score(rubric, grades)
    assert row["score"] == 1.0 and (row["n_graded"], row["n_needs_model"]) == (1, 1)
    assert row["graded_by"] == {"llm": 1}


def test_a_failed_critical_criterion_gates_the_item_to_zero(tmp_path):
    rubric = load_rubric(write(tmp_path, GOOD))
    row = item_score(rubric, [met("a", 5, True), met("b", 5, False, critical=True)])
    assert row["raw_score"] == 0.5 and row["score"] == 0.0 and row["gate_failed"] == ["b"]
    errs = item_score(rubric, [met("a", 5, True), met("e", -2, True, critical=True)])
    assert errs["gate_failed"] == ["e"] and errs["score"] == 0.0
    off = load_rubric(
        write(tmp_path, GOOD.replace("reads:", "aggregate: {critical_gate: false}\nreads:"))
    )
    assert item_score(off, [met("a", 5, True), met("b", 5, False, critical=True)])["score"] == 0.5


def test_levels_average_and_map_to_zero_one(tmp_path):
    text = (
        "name: q\nmode: scale\nscale: {1: a, 2: b, 3: c, 4: d, 5: e}\n"
        "criteria: [{id: x, text: x}, {id: y, text: y}]\n"
    )
    rubric = load_rubric(write(tmp_path, text, "q.yaml"))
    x, y = rubric.criteria
    row = item_score(
        rubric,
        [graded_level(x, 5, 5, reason="", turns=[]), graded_level(y, 2, 5, reason="", turns=[])],
    )
    assert row["mean_level"] == 3.5 and row["score"] == pytest.approx(0.625)


def test_the_bootstrap_interval_over_items_holds_the_mean_and_needs_five_items(tmp_path):
    rubric = load_rubric(write(tmp_path, GOOD))

    def row(i: int, score: float) -> dict:
        grades = [met("a", 1, score > 0.5)]
        return {"id": str(i), "criteria": grades, **item_score(rubric, grades), "score": score}

    rows = [row(i, s) for i, s in enumerate([0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.0, 0.9])]
    head = summarize(rubric, rows)["headline"]["score"]
    assert head["value"] == pytest.approx(sum(r["score"] for r in rows) / 8) and head["n"] == 8
    low, high = head["ci95"]
    assert 0.0 <= low < head["value"] < high <= 1.0
    assert summarize(rubric, rows)["headline"]["score"]["ci95"] == head["ci95"]  # seeded
    assert summarize(rubric, rows[:4])["headline"]["score"]["ci95"] is None
