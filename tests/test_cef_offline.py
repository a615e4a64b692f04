"""The offline CEF backend on a real MTS-Dialog pair (tests/fixtures/cef): facts of a dialogue
and of prose, N/N' selection, the verdict → answer mapping, and whole runs whose omissions,
contradictions and unsupported statements show up where they should."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clinjudge.cef.offline import answer_from_verdict
from clinjudge.cef.questions import is_question, question_core, select_facts, text_facts
from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.normalize import content_tokens
from clinjudge.types import Verdict

FIXTURES = Path(__file__).parent / "fixtures" / "cef"
DIALOGUE = (FIXTURES / "dialogue.txt").read_text()
AUTOMATIC = (FIXTURES / "automatic_summary.txt").read_text()
REFERENCE = (FIXTURES / "reference_summary.txt").read_text()


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture(scope="module")
def cef(kb):
    return build_evaluator("cef", BuildOptions(backend="offline", knowledge=kb))


def run(cef, summary: str, source: str = DIALOGUE) -> dict:
    return asyncio.run(cef.evaluate(Item(id="t", transcript=source, note=summary)))


def test_dialogue_facts_read_questions_with_their_answers(kb):
    facts = text_facts(DIALOGUE, kb)
    texts = [f.text for f in facts]
    # "Any new skin lesions on your legs ...?" / "No." → a denied fact about the patient
    assert "No new skin lesions on the patient's legs from the swelling." in texts
    assert "No sort of headaches." in texts
    # a question alone asserts nothing; an unanswered last question gives no fact
    assert not any(t.rstrip().endswith("?") for t in texts)
    assert not any("thyroid" in t for t in texts)
    for f in facts:
        assert 0 <= f.start < f.end <= len(DIALOGUE)


def test_prose_facts_are_claims_with_spans(kb):
    facts = text_facts(REFERENCE, kb)
    assert facts[0].text == "Patient is hard of hearing."
    for f in facts:  # a claim, or one item of a claim's list, spanning the whole claim
        claim = REFERENCE[f.start : f.end]
        assert f.text == claim or set(content_tokens(f.text)) < set(content_tokens(claim))
    listed = [f.text for f in facts if f.start == REFERENCE.index("Presently, denies chest")]
    assert listed == ["Presently, denies chest pain.", "Presently, denies shortness of breath."]


def test_selection_takes_n_facts_spread_over_the_text(kb):
    facts = [f for f in text_facts(REFERENCE, kb) if f.eligible]
    assert len(facts) == 13  # 11 claims, two of them lists of two findings
    chosen = select_facts(facts, 3)
    assert len(chosen) == 3
    starts = [f.start for f in chosen]
    assert starts == sorted(starts)
    third = len(REFERENCE) / 3
    assert starts[0] < third and starts[-1] > third  # one bin per third, not the first three
    assert select_facts(facts, 50) == facts
    assert select_facts(facts, 0) == []


@pytest.mark.parametrize(
    ("tier", "answer"), [(1, "YES"), (2, "YES"), (3, "YES"), (4, "IDK"), (5, "NO")]
)
def test_verdict_tiers_map_to_answers(tier, answer):
    verdict = Verdict(
        claim_id="d1", tier=tier, subtype="restatement", rationale="", backend="offline"
    )
    assert answer_from_verdict(verdict) == answer


def test_fuller_summary_covers_more_of_the_source(cef):
    short, full = run(cef, AUTOMATIC), run(cef, REFERENCE)
    assert full["coverage"] > short["coverage"] + 30
    asked = [q for q in short["questions"] if q["status"] == "asked"]
    assert len(asked) == short["n_source_questions"] + short["n_summary_questions"]
    hip = next(q for q in asked if "hip pain" in q["fact"] and q["side"] == "source")
    assert hip["own_answer"] == "YES" and hip["cross_answer"] == "YES"
    for q in short["questions"]:  # every question knows its span in its own text
        text = DIALOGUE if q["side"] == "source" else AUTOMATIC
        assert q["span"] is not None and 0 <= q["span"][0] < q["span"][1] <= len(text)


def test_contradiction_is_no_and_lowers_conformity(cef):
    row = run(cef, "The patient reports headaches and new skin lesions on the legs.")
    lesion = next(
        q for q in row["questions"] if "skin lesions" in q["fact"] and q["side"] == "source"
    )
    assert lesion["cross_answer"] == "NO"
    assert row["conformity"] < 100.0


def test_unsupported_statement_is_idk_and_its_span_is_flagged(cef):
    summary = "Left hip pain and shoulder pain. She takes metformin 500 mg twice daily."
    row = run(cef, summary)  # hip pain, shoulder pain (one list), metformin
    assert row["n_summary_questions"] == 3
    assert row["consistency"] == pytest.approx(100 * 2 / 3)
    start = summary.index("She takes")
    assert cef.flagged_spans(row) == [(start, len(summary))]
    lines = cef.verdict_lines(row)
    assert {line["judge"] for line in lines} == {"cef"}
    assert len(lines) == len(row["questions"])


def test_note_task_and_question_counts_are_configurable(kb):
    cef = build_evaluator(
        "cef",
        BuildOptions(
            backend="offline", knowledge=kb, options={"n_source": 3, "n_summary": 1, "task": "note"}
        ),
    )
    row = run(cef, REFERENCE)
    assert row["generated_source"] == 3 and row["generated_summary"] == 1
    assert (row["n_source"], row["n_summary"], row["task"]) == (3, 1, "note")
    assert row["conciseness"] is None
    parts = [row["coverage"], row["conformity"], row["consistency"]]
    assert row["overall"] == pytest.approx(sum(parts) / 3)


def test_summary_without_checkable_statement_scores_none(cef):
    row = run(cef, "Thank you.")
    assert row["n_summary_questions"] == 0
    assert row["consistency"] is None and row["overall"] is None
    summary = cef.summarize([row, run(cef, AUTOMATIC)])
    assert summary["headline"]["consistency"]["n"] == 1
    assert summary["headline"]["consistency"]["excluded"] == 1
    assert summary["headline"]["coverage"]["n"] == 2


@pytest.mark.parametrize(
    ("question", "core"),
    [
        ("Any new skin lesions on your legs?", "new skin lesions on the patient's legs"),
        ("How about problems with urination?", "problems with urination"),
        ("You have chronic depression right?", "the patient have chronic depression"),
        ("Is it on the right?", "on the right"),  # a side, not a tag question
        ("Have you been experiencing any confusion?", "confusion"),
        ("Do you have a history of tobacco use?", "a history of tobacco use"),
        (
            "Did you notice any change in your bowel movement?",
            "change in the patient's bowel movement",
        ),
    ],
)
def test_question_core_states_what_is_asked(question, core):
    assert question_core(question) == core


@pytest.mark.parametrize(
    ("sentence", "asks"),
    [
        ("Any sort of headaches", True),  # ASR dropped the "?"
        ("Do you smoke", True),
        ("How bad is it?", True),
        ("Had my son in August.", False),
        ("When I was twenty, I broke my leg.", False),
    ],
)
def test_is_question(sentence, asks):
    assert is_question(sentence) is asks
