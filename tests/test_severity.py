"""Harm category and severity of hallucinated claims (SPEC §9), offline rules: what a claim is
about, which errors count as major, and that judges attach both to tier 4–5 verdicts only."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.judges.compare import judge_summary
from clinjudge.judges.harm import harm_category
from clinjudge.judges.severity import rate_harm, severity
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.types import Verdict

FIXTURES = Path(__file__).parent / "fixtures" / "soap"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.mark.parametrize(
    ("text", "section", "category"),
    [
        ("She is allergic to penicillin.", "subjective", "allergy"),
        ("Start metformin 500 mg twice daily.", "plan", "dose_frequency"),
        ("Continue lisinopril.", "plan", "medication"),
        ("The x-ray of the right knee shows no fracture.", "objective", "test_result"),
        ("Tenderness over the medial joint line.", "objective", "exam_finding"),
        ("Follow up in 2 weeks.", "plan", "plan_follow_up"),
        ("He works as a teacher and lives with his wife.", "subjective", "demographic_social"),
    ],
)
def test_what_a_claim_is_about(kb, text, section, category):
    assert harm_category(text, section, kb) == category


def test_seasonal_allergies_are_not_an_allergy_to_a_treatment(kb):
    assert harm_category("She has seasonal allergies.", "subjective", kb) != "allergy"


def test_major_means_it_could_change_care():
    assert severity(4, "medication") == "major" and severity(4, "test_result") == "major"
    assert severity(4, "exam_finding") == "minor" and severity(4, "demographic_social") == "minor"
    assert severity(5, "history") == "major"  # a contradicted history
    assert severity(5, "demographic_social") == "minor"


def test_only_hallucinated_verdicts_are_rated(kb):
    def verdict(tier: int, subtype: str) -> Verdict:
        return Verdict(claim_id="c1", tier=tier, subtype=subtype, rationale="", backend="offline")

    kept = rate_harm(verdict(1, "restatement"), "Continue lisinopril.", "plan", kb)
    assert kept.severity is None and kept.harm_category is None
    flagged = rate_harm(verdict(4, "no_basis"), "Continue lisinopril.", "plan", kb)
    assert (flagged.severity, flagged.harm_category) == ("major", "medication")


def test_the_offline_judge_reports_major_hallucinations(kb):
    transcript = (FIXTURES / "transcript.txt").read_text()
    note = (
        (FIXTURES / "note.txt").read_text().replace("right knee with mild", "left knee with mild")
    )
    judge = build_evaluator("inference-aware", BuildOptions(backend="offline", knowledge=kb))
    row = asyncio.run(judge.evaluate(Item(id="e1", transcript=transcript, note=note)))
    report = judge.report(row)
    flagged = [v for v in report.verdicts if not v.supported]
    assert flagged and all(v.severity in ("major", "minor") and v.harm_category for v in flagged)
    assert all(v.severity is None for v in report.verdicts if v.supported)
    side = next(v for v in flagged if v.tier == 5)
    assert side.severity == "major"
    summary = judge_summary([report])
    assert summary["n_major"] == report.n_major >= 1
    assert summary["major_rate"] == pytest.approx(report.n_major / report.n_judged)


@pytest.mark.parametrize(
    ("text", "section", "expected"),
    [
        ("Follow up in 4 weeks.", "plan", "major"),  # follow-up that was never arranged
        ("He was referred to cardiology.", "plan", "major"),
        ("Follow up as needed.", "plan", "minor"),
        ("Grade 2/6 systolic murmur at the apex.", "objective", "major"),  # abnormal, invented
        ("No murmurs, rubs or gallops.", "objective", "minor"),  # an invented normal exam
    ],
)
def test_invented_follow_up_and_abnormal_findings_are_major_names_and_normal_exams_minor(
    kb, text, section, expected
):
    verdict = rate_harm(
        Verdict(claim_id="c", tier=4, subtype="no_basis", rationale="x", backend="offline"),
        text,
        section,
        kb,
    )
    assert verdict.severity == expected, verdict.harm_category


def test_the_lexical_judges_severity_is_that_of_the_words_it_misses(kb):
    """Issue 37, item 5: a near-verbatim sentence the lexical judge flags only for everyday
    wording is minor, whatever it mentions; one missing a drug name is rated by that name."""
    transcript = (
        "[doctor] how is your depression ?\n[patient] i'm doing really well with it .\n"
        "[doctor] and your blood pressure medicine ?\n[patient] i take the lisinopril .\n"
    )
    note = "Regarding her depression, she is doing well overall.\nShe also takes metoprolol daily."
    judge = build_evaluator("lexical", BuildOptions(backend="offline", knowledge=kb))
    row = asyncio.run(judge.evaluate(Item(id="e1", transcript=transcript, note=note)))
    report = judge.report(row)
    text_of = {c.id: c.text for c in report.claims}
    by_text = {text_of[v.claim_id]: v for v in report.verdicts}
    wording = by_text["Regarding her depression, she is doing well overall."]
    assert wording.tier == 4 and wording.severity == "minor"
    assert "only in other everyday words" in wording.rationale
    drug = by_text["She also takes metoprolol daily."]
    assert drug.tier >= 4 and drug.severity == "major" and "metoprolol" in drug.rationale


@pytest.mark.parametrize(
    ("rationale", "category"),
    [
        ("never said in the visit: 'Baker'", "demographic_social"),  # the name is the flag
        ("never said in the visit: '28-year-old'", "demographic_social"),
        ("the visit denies it: 'chest pain'", "history"),  # a symptom in the opening line
        ("nothing in the visit supports this", "history"),
    ],
)
def test_an_opening_line_is_filed_by_the_words_its_flag_quotes(kb, rationale, category):
    """Issue 37, item 5: an opening line is a demographic error only when what is wrong is the
    name or the age; its presenting complaint is the patient's history."""
    text = "Diane Baker is a 28-year-old female who presents with chest pain."
    verdict = rate_harm(
        Verdict(claim_id="c", tier=4, subtype="no_basis", rationale=rationale, backend="offline"),
        text,
        "subjective",
        kb,
    )
    assert verdict.harm_category == category
    if category == "demographic_social":
        assert verdict.severity == "minor"
