"""The fact-checker's LLM backend for real over HTTP: the real ChatOpenAI against the loopback
OpenAI-compatible stub, scripted per prompt (decompose / queries / rate). Checks the call budget
(≤ 3 per relevant claim), that a malformed rating is a counted, excluded parse failure, that an
unusable decomposition falls back to the offline one (recorded), and unaligned quotes."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from openai_stub import HttpError

from clinjudge.factcheck.setup import build_factcheck
from clinjudge.graphs.factcheck import FactcheckContext, build_graph, check_answer
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings

CORPUS = Path(__file__).parent / "fixtures" / "factcheck" / "corpus.jsonl"
ANSWER = (
    "Aspirin 650 mg daily is recommended for secondary prevention of stroke. "
    "Metformin is the first-line drug for type 2 diabetes. Please consult your doctor."
)
DECOMPOSITION = {
    "claims": [
        {
            "text": "Aspirin 650 mg daily is recommended for secondary prevention of stroke.",
            "quote": "Aspirin 650 mg daily is recommended for secondary prevention of stroke.",
            "label": "relevant",
        },
        {
            "text": "Metformin is the first-line drug for type 2 diabetes.",
            "quote": "Metformin is the first-line drug for type 2 diabetes.",
            "label": "relevant",
        },
        {"text": "Consult your doctor.", "quote": "Please consult your doctor.", "label": "meta"},
    ]
}


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def prompt_text(request: dict) -> str:
    return "\n".join(str(m.get("content", "")) for m in request["messages"])


def claim_of(text: str) -> str:
    return text.split("## Claim", 1)[1]


def script(decomposition=None, bad_rating_for: str | None = None):
    def reply(request: dict):
        text = prompt_text(request)
        if "prepare a medical answer for fact-checking" in text:
            return decomposition if decomposition is not None else json.dumps(DECOMPOSITION)
        if "You write search queries" in text:
            claim = claim_of(text)
            topic = "aspirin stroke dose" if "Aspirin" in claim else "metformin diabetes"
            return json.dumps({"queries": [topic, topic + " guideline"]})
        if "strict medical fact-checker" in text:
            claim = claim_of(text).split("## Evidence", 1)[0]
            if bad_rating_for and bad_rating_for in claim:
                return 'Verdict: {"addressed": true, "verdict": "maybe"'  # invalid, truncated
            ids = re.findall(r"^\[([^\]]+)\]", text, re.M)
            verdict = "not_supported" if "650" in claim else "supported"
            return json.dumps(
                {"addressed": True, "verdict": verdict, "evidence_ids": ids[:1], "rationale": "r"}
            )
        return HttpError(400, "unexpected prompt")

    return reply


def check(stub, kb, **kw):
    settings = LLMSettings(model="stub-fc", base_url=stub.base_url, api_key="x", max_retries=0)
    setup = build_factcheck("llm", settings=settings, knowledge=kb, corpus=CORPUS, k=2)
    stub.script(script(**kw))
    result = asyncio.run(
        check_answer(build_graph(), FactcheckContext(setup), answer_id="a", answer=ANSWER)
    )
    return result, setup


def test_llm_path_verdicts_evidence_and_call_budget(openai_stub, kb):
    result, setup = check(openai_stub, kb)
    by_text = {c.text: c for c in result.claims}
    dose = by_text[DECOMPOSITION["claims"][0]["text"]]
    assert dose.verdict == "not_supported" and dose.checkable is True
    assert dose.queries == ["aspirin stroke dose", "aspirin stroke dose guideline"]
    assert dose.evidence[0].id == "aspirin-secondary" and dose.cited == ["aspirin-secondary"]
    assert ANSWER[dose.start : dose.end] == DECOMPOSITION["claims"][0]["quote"]
    assert by_text["Metformin is the first-line drug for type 2 diabetes."].verdict == "supported"
    meta = by_text["Consult your doctor."]
    assert meta.label == "meta" and meta.verdict is None and not meta.queries
    assert result.unsupported_rate == 0.5 and result.n_relevant == 2
    calls = setup.caller.usage.calls
    assert calls == 1 + 2 * 2 == len(openai_stub.requests)
    assert calls / result.n_relevant <= 3
    assert setup.provenance["model"] == "stub-fc"
    assert [p["name"] for p in setup.provenance["prompts"]] == [
        "factcheck.decompose",
        "factcheck.queries",
        "factcheck.rate",
    ]


def test_malformed_rating_is_an_excluded_parse_failure(openai_stub, kb):
    result, setup = check(openai_stub, kb, bad_rating_for="Metformin")
    failed = [c for c in result.claims if c.failure is not None]
    assert len(failed) == 1 and failed[0].failure.kind == "parse_failure"
    assert failed[0].verdict is None and failed[0].text.startswith("Metformin")
    assert (result.n_rated, result.n_excluded, result.parse_failures) == (1, 1, 1)
    assert result.unsupported_rate == 1.0  # 1 not supported / 1 rated; the failure is excluded
    assert setup.caller.usage.parse_failures == 1
    assert setup.caller.usage.calls == 1 + 2 * 2 + 1  # one re-ask for the malformed rating


def test_unusable_decomposition_falls_back_to_offline(openai_stub, kb):
    result, _ = check(openai_stub, kb, decomposition="I cannot split this answer.")
    info = result.decomposition
    assert info["method"] == "offline" and info["failure"]["kind"] == "parse_failure"
    assert [c.label for c in result.claims] == ["relevant", "relevant", "meta"]
    assert all(c.verdict is not None for c in result.claims if c.label == "relevant")


def test_unaligned_quote_is_dropped_and_counted(openai_stub, kb):
    bad = json.loads(json.dumps(DECOMPOSITION))
    bad["claims"][1]["quote"] = "Insulin cures every disease instantly."
    result, _ = check(openai_stub, kb, decomposition=json.dumps(bad))
    assert result.decomposition["unaligned"] == 1
    assert len(result.claims) == 2
