"""SPEC §2 score formulas on hand-built answer sets, and how a result's counts add up."""

from __future__ import annotations

import pytest

from clinjudge.cef.result import AnswerRecord, CefQuestion, assemble_result
from clinjudge.cef.scores import cef_scores, conciseness, harmonic, overall, token_count

SOURCE = " ".join(f"w{i}" for i in range(100))  # 100 word tokens
SUMMARY = " ".join(f"w{i}" for i in range(25))  # 25 word tokens


def test_scores_from_hand_built_answers():
    source = ["YES"] * 6 + ["IDK"] * 3 + ["NO"]  # 10 source questions
    summary = ["YES"] * 3 + ["IDK"]  # 4 summary questions
    s = cef_scores(source, summary, source=SOURCE, summary=SUMMARY)
    assert s.coverage == pytest.approx(70.0)  # 100 − 30% IDK
    assert s.conformity == pytest.approx(90.0)  # 100 − 10% NO
    assert s.consistency == pytest.approx(75.0)  # 100 − 25% IDK
    assert s.conciseness == pytest.approx(75.0)  # 100 × (1 − 25/100): shorter is higher
    h = 2 * 70 * 75 / (70 + 75)
    assert s.overall == pytest.approx((70 + 90 + 75 + h) / 4)


def test_a_summary_no_answer_does_not_lower_consistency():
    # consistency counts only IDK (unsupported); NO answers of S-questions are not omissions
    s = cef_scores(["YES"], ["NO", "YES"], source=SOURCE, summary=SUMMARY)
    assert s.consistency == 100.0


def test_note_task_omits_conciseness_and_averages_three():
    s = cef_scores(["YES", "IDK"], ["YES"], source=SOURCE, summary=SOURCE * 3, task="note")
    assert s.conciseness is None
    assert s.overall == pytest.approx((50 + 100 + 100) / 3)


def test_a_side_without_answers_gives_none_not_zero_or_hundred():
    s = cef_scores([], ["YES"], source=SOURCE, summary=SUMMARY)
    assert s.coverage is None and s.conformity is None
    assert s.consistency == 100.0
    assert s.overall is None


def test_conciseness_is_a_token_reduction_and_can_be_negative():
    assert token_count("Left hip pain, 20 mg.") == 5
    assert conciseness("a b c d", "a") == pytest.approx(75.0)
    assert conciseness("a b", "a b c d") == pytest.approx(-100.0)
    assert conciseness("", "a") is None


def test_harmonic_is_zero_unless_both_positive():
    assert harmonic(80.0, 0.0) == 0.0
    assert harmonic(80.0, -20.0) == 0.0
    assert harmonic(50.0, 50.0) == pytest.approx(50.0)
    assert overall(100.0, 100.0, 100.0, -50.0, "summary") == pytest.approx(75.0)


def _q(qid, side, status="asked"):
    return CefQuestion(id=qid, side=side, question=f"q {qid}?", status=status)


def test_result_statuses_and_counts_add_up():
    questions = [
        _q("d1", "source"),
        _q("d2", "source"),
        _q("d3", "source"),
        _q("d4", "source", "dropped_label"),
        _q("d5", "source"),
        _q("d6", "source"),
        _q("s1", "summary"),
        _q("s2", "summary"),
    ]
    own = [
        AnswerRecord(id="d1", answer="YES"),
        AnswerRecord(id="d2", answer="YES"),
        AnswerRecord(id="d3", answer="NO"),  # not YES in its own text: dropped
        AnswerRecord(id="d5", answer="YES"),
        AnswerRecord(id="d6", answer="YES"),
        AnswerRecord(id="s1", answer="YES"),
        AnswerRecord(id="s2", kind="parse_failure", detail="unreadable"),  # dropped too
    ]
    cross = [
        AnswerRecord(id="d1", answer="IDK"),
        AnswerRecord(id="d2", answer="YES"),
        AnswerRecord(id="d5", kind="parse_failure", detail="unreadable answer 'Maybe'"),
        AnswerRecord(id="d6", kind="error", detail="HTTP 500"),
        AnswerRecord(id="s1", answer="IDK"),
    ]
    r = assemble_result(
        questions=questions,
        own=own,
        cross=cross,
        source=SOURCE,
        summary=SUMMARY,
        task="summary",
        backend="test",
        n_source=6,
        n_summary=2,
    )
    status = {q.id: q.status for q in r.questions}
    assert status == {
        "d1": "asked",
        "d2": "asked",
        "d3": "dropped_self",
        "d4": "dropped_label",
        "d5": "parse_failure",
        "d6": "error",
        "s1": "asked",
        "s2": "dropped_self",
    }
    assert r.n_source_questions == 2 and r.n_summary_questions == 1
    assert r.coverage == 50.0 and r.conformity == 100.0 and r.consistency == 0.0
    assert (r.parse_failures, r.errors) == (1, 1)
    assert r.lost_to_errors
    for side, asked in (("source", r.n_source_questions), ("summary", r.n_summary_questions)):
        excluded = sum(
            1 for q in r.questions if q.side == side and q.status in ("parse_failure", "error")
        )
        total = (
            getattr(r, f"dropped_label_{side}")
            + getattr(r, f"dropped_self_{side}")
            + excluded
            + asked
        )
        assert total == getattr(r, f"generated_{side}")
    assert r.answers_source == {"YES": 1, "NO": 0, "IDK": 1}
    assert [q.id for q in r.omitted()] == ["d1"]
    assert [q.id for q in r.unsupported()] == ["s1"]
