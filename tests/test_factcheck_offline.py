"""The offline fact-checker end to end (SPEC §3): labelling rules, a wrong dose not supported, a
correct claim supported, meta and context claims never checked, rates and their denominators, a
row's own evidence, a failing search recorded per claim, and the evaluator's report fields."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.factcheck.decompose import decompose, label_claim
from clinjudge.factcheck.models import AnswerResult
from clinjudge.factcheck.queries import offline_queries
from clinjudge.factcheck.setup import build_factcheck
from clinjudge.graphs.factcheck import FactcheckContext, build_graph, check_answer, merge_rankings
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.search import Passage, SearchError, make_search

FIXTURES = Path(__file__).parent / "fixtures" / "factcheck"
CORPUS = FIXTURES / "corpus.jsonl"
ANSWER = (
    "Aspirin 650 mg daily is recommended for secondary prevention of stroke. "
    "Metformin is the first-line drug for type 2 diabetes. "
    "You have had a cough for three days. "
    "Please consult your doctor before changing any medication."
)


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture(scope="module")
def result(kb) -> AnswerResult:
    setup = build_factcheck("offline", knowledge=kb, corpus=CORPUS, k=3)
    return asyncio.run(
        check_answer(build_graph(), FactcheckContext(setup), answer_id="a1", answer=ANSWER)
    )


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Consult your doctor before starting any new medication.", "meta"),
        ("I hope this helps!", "meta"),
        ("Is it safe to take ibuprofen?", "meta"),
        ("You have had a cough for three days.", "context"),
        ("You should take amoxicillin 500 mg three times daily.", "relevant"),
        ("Emergency laparotomy carries a high mortality.", "relevant"),
        ("The weather was pleasant that afternoon.", "meta"),
    ],
)
def test_labelling_rules(kb, text, label):
    assert label_claim(text, kb)[0] == label


def test_echo_of_the_question_is_meta(kb):
    question = "Does aspirin prevent stroke?"
    assert label_claim("Aspirin prevent stroke.", kb, question)[0] == "meta"
    assert label_claim("Aspirin does not prevent stroke in children.", kb, question)[0] == (
        "relevant"
    )


def test_claims_keep_their_spans(kb):
    for claim in decompose(ANSWER, kb):
        assert ANSWER[claim.start : claim.end] == claim.text


def test_queries_are_claim_plus_key_concepts(kb):
    queries = offline_queries("Zestril 10 mg daily lowers blood pressure.", kb)
    assert queries[0] == "Zestril 10 mg daily lowers blood pressure."
    assert "lisinopril" in queries[1].lower() and "zestril" in queries[1].lower()


def test_wrong_dose_not_supported_correct_claim_supported(result):
    by_id = {c.id: c for c in result.claims}
    dose, metformin = by_id["c1"], by_id["c2"]
    assert dose.verdict == "not_supported" and "650 mg" in dose.rationale
    assert metformin.verdict == "supported" and metformin.checkable is True
    assert dose.evidence[0].id == "aspirin-secondary"  # the passage on the very subject
    assert dose.checkable is True  # the evidence addressed it: it is wrong, not unchecked
    assert dose.queries and dose.queries[0].startswith("Aspirin 650 mg")


def test_meta_and_context_claims_are_not_checked(result):
    unchecked = [c for c in result.claims if c.label != "relevant"]
    assert {c.label for c in unchecked} == {"context", "meta"}
    assert all(c.verdict is None and not c.queries and not c.evidence for c in unchecked)


def test_rates_and_denominators(result):
    assert (result.n_claims, result.n_relevant, result.n_rated, result.n_excluded) == (4, 2, 2, 0)
    assert result.unsupported_rate == 0.5 and result.checkable_rate == 1.0
    low, high = result.ci95
    assert 0 < low < 0.5 < high < 1


def test_unrelated_evidence_is_not_checkable(kb):
    setup = build_factcheck(
        "offline",
        knowledge=kb,
        search_backend=make_search(corpus=CORPUS),
        k=2,
    )
    result = asyncio.run(
        check_answer(
            build_graph(),
            FactcheckContext(setup),
            answer_id="x",
            answer="Levothyroxine treats hypothyroidism.",
        )
    )
    claim = result.claims[0]
    assert claim.verdict == "not_supported" and claim.checkable is False
    assert result.checkable_rate == 0.0


class FailingSearch:
    name = "failing"

    def describe(self) -> dict:
        return {"backend": self.name}

    async def search(self, query: str, k: int) -> list[Passage]:
        raise SearchError("stub: HTTP 503 after 4 attempts")


def test_search_failure_is_a_per_claim_error(kb):
    setup = build_factcheck("offline", knowledge=kb, search_backend=FailingSearch())
    result = asyncio.run(
        check_answer(build_graph(), FactcheckContext(setup), answer_id="e", answer=ANSWER)
    )
    relevant = [c for c in result.claims if c.label == "relevant"]
    assert all(c.failure and c.failure.kind == "error" for c in relevant)
    assert "HTTP 503" in relevant[0].failure.reason
    assert (result.n_relevant, result.n_excluded, result.n_rated) == (2, 2, 0)
    assert result.unsupported_rate is None and result.errors == 2


def test_merge_rankings_round_robin():
    a = [Passage(id="1", text="x"), Passage(id="2", text="y")]
    b = [Passage(id="3", text="z"), Passage(id="1", text="x")]
    assert [p.id for p in merge_rankings([a, b], 3)] == ["1", "3", "2"]


def test_evaluator_row_evidence_and_report_fields(kb):
    rows = [json.loads(line) for line in (FIXTURES / "medhallu_sample.jsonl").open()]
    evaluator = build_evaluator("factcheck", BuildOptions(backend="offline", knowledge=kb))
    assert (evaluator.name, evaluator.kind, evaluator.needs_source) == (
        "factcheck",
        "factcheck",
        False,
    )
    row = rows[2]  # emergency laparotomy: the hallucination invents a nutritional mechanism
    items = [
        Item(
            id=f"{label}",
            transcript="",
            note=row[column],
            meta={"question": row["Question"], "evidence": json.dumps(row["Knowledge"])},
        )
        for label, column in (("truth", "Ground Truth"), ("hallucinated", "Hallucinated Answer"))
    ]
    out = [asyncio.run(evaluator.evaluate(item)) for item in items]
    assert out[0]["id"] == "truth" and out[0]["claims"][0]["evidence"]
    assert out[0]["claims"][0]["evidence"][0]["source"] == "corpus"  # the row's own passages
    assert not evaluator._context.searches  # the row corpus is dropped after use
    scores = evaluator.item_scores(out[1])
    assert set(scores) >= {"unsupported_rate", "n_claims", "checkable_rate"}
    assert scores["n_claims"] == len(out[1]["claims"])
    summary = evaluator.summarize(out)
    assert summary["kind"] == "factcheck" and summary["n_answers"] == 2
    assert summary["headline"]["unsupported_rate"]["n"] == summary["n_rated"]
    truth_score, halluc_score = evaluator.score(out[0]), evaluator.score(out[1])
    assert truth_score is not None and halluc_score is not None
    assert truth_score > halluc_score  # the mechanism the hallucination invents is unsupported
    spans = evaluator.flagged_spans(out[1])
    assert spans and all(0 <= a < b <= len(items[1].note) for a, b in spans)
    lines = evaluator.verdict_lines(out[1])
    assert len(lines) == len(out[1]["claims"]) and lines[0]["judge"] == "factcheck"
