"""The SOAP judge's LLM path, for real over HTTP: the real ChatOpenAI against a loopback
OpenAI-compatible server scripted per batch of claims (valid, prose, malformed, truncated,
429 then success, persistent 500, timeout). Every claim must end as exactly one of verdict,
parse failure or error, and a cached re-run must cost no model call."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from openai_stub import Delay, HttpError, Reply, rate_limited

from clinjudge.api import ajudge_note, make_setup
from clinjudge.llm import LLMSettings, ResponseCache

FIXTURES = Path(__file__).parent / "fixtures" / "soap"
TRANSCRIPT = (FIXTURES / "transcript.txt").read_text()
NOTE = (FIXTURES / "note.txt").read_text()
CLAIM_IDS = re.compile(r'"id":\s*"(c\d+)"')


def settings(stub, **overrides) -> LLMSettings:
    values = {"model": "stub-judge", "timeout": 2.0, "max_retries": 0}
    values.update(overrides)
    return LLMSettings(base_url=stub.base_url, **values)


def last_user_text(request: dict) -> str:
    return "\n".join(str(m.get("content", "")) for m in request["messages"])


def verdicts_for(request: dict, tier: int = 1) -> str:
    ids = CLAIM_IDS.findall(last_user_text(request))
    return json.dumps(
        {
            "verdicts": [
                {
                    "claim_id": i,
                    "tier": tier,
                    "subtype": "restatement",
                    "rationale": "stated",
                    "evidence": ["my right knee has been hurting"],
                }
                for i in dict.fromkeys(ids)
            ]
        }
    )


async def run(stub, tmp_path, script, *, cache=True, batch_size=2, claims="split", **kw):
    stub.script(script)
    setup = make_setup(
        "inference-aware",
        "llm",
        settings=settings(stub, **kw),
        cache=ResponseCache(tmp_path / "cache.sqlite") if cache else None,
        claims=claims,
    )
    return await ajudge_note(TRANSCRIPT, NOTE, setup=setup, batch_size=batch_size), setup


def first_claim(request: dict) -> str:
    ids = CLAIM_IDS.findall(last_user_text(request))
    return ids[0] if ids else ""


async def test_mixed_replies_every_claim_accounted_for(openai_stub, tmp_path):
    def script(request):
        batch = first_claim(request)
        number = int(batch[1:])
        if number <= 2:
            return Reply(verdicts_for(request))
        if number <= 4:
            return Reply("The claims look fine to me, all supported.")  # prose, no JSON
        if number <= 6:
            return Reply(verdicts_for(request)[:40])  # truncated JSON
        if number <= 8:
            return Reply("Sure! Here you go: " + verdicts_for(request, tier=4) + " Hope it helps.")
        return HttpError(500, "server exploded")

    result, _ = await run(openai_stub, tmp_path, script)
    report = result.report
    n = len(report.claims)
    assert n >= 9
    assert len(report.verdicts) + len(report.failures) == n
    kinds = {f.claim_id: f.kind for f in report.failures}
    verdicts = {v.claim_id: v for v in report.verdicts}
    assert verdicts["c1"].tier == 1 and verdicts["c1"].supported
    assert verdicts["c7"].tier == 4 and not verdicts["c7"].supported  # JSON inside prose
    assert kinds["c3"] == kinds["c4"] == "parse_failure"
    assert kinds["c5"] == kinds["c6"] == "parse_failure"
    assert all(kinds[f"c{i}"] == "error" for i in range(9, n + 1))
    # the rate counts only judged claims
    assert report.hallucination_rate == pytest.approx(
        sum(not v.supported for v in report.verdicts) / len(report.verdicts)
    )
    # evidence quotes are located in the transcript
    ev = verdicts["c1"].evidence[0]
    assert TRANSCRIPT[ev.start : ev.end].lower() == ev.text.lower()


async def test_rate_limit_then_success(openai_stub, tmp_path):
    seen: set[str] = set()

    def script(request):
        batch = first_claim(request)
        if batch not in seen:
            seen.add(batch)
            return rate_limited()
        return Reply(verdicts_for(request))

    result, _ = await run(openai_stub, tmp_path, script, max_retries=2, batch_size=8)
    assert not result.report.failures
    assert len(result.report.verdicts) == len(result.report.claims)


async def test_timeout_is_an_error_not_a_crash(openai_stub, tmp_path):
    result, _ = await run(
        openai_stub, tmp_path, lambda r: Delay(3.0, Reply("{}")), timeout=0.3, batch_size=8
    )
    report = result.report
    assert report.verdicts == []
    assert {f.kind for f in report.failures} == {"error"}
    assert len(report.failures) == len(report.claims)
    assert report.hallucination_rate is None


async def test_lexical_mode_rejects_inference_tiers(openai_stub, tmp_path):
    openai_stub.script(lambda r: Reply(verdicts_for(r, tier=3)))
    setup = make_setup("lexical", "llm", settings=settings(openai_stub), cache=None, claims="split")
    result = await ajudge_note(TRANSCRIPT, NOTE, setup=setup, batch_size=8)
    assert result.report.verdicts == []
    assert all("tier 3" in f.reason for f in result.report.failures)


async def test_cached_rerun_costs_zero_calls_and_calls_per_note_bound(openai_stub, tmp_path):
    def script(request):
        text = last_user_text(request)
        if "read_first" not in text:  # the claim-extraction prompt
            quotes = ["Right knee pain.", "He reports swelling at night.", "He denies chest pain."]
            quotes += ["Lisinopril 10 mg once daily.", "Penicillin."]
            quotes += [f"X-ray of the right knee{'' if i else '.'}" for i in range(1)]
            claims = [{"text": q, "section": "subjective", "quote": q} for q in quotes]
            claims += [
                {"text": f"Claim {i}", "section": "plan", "quote": "Medial meniscus strain"}
                for i in range(6)
            ]
            return Reply(json.dumps({"claims": claims}))
        return Reply(verdicts_for(request))

    first, setup = await run(openai_stub, tmp_path, script, claims="llm", batch_size=8)
    n_claims = len(first.report.claims)
    assert n_claims == 12
    calls = len(openai_stub.requests)
    assert calls <= 1 + math.ceil(n_claims / 8)
    assert first.usage["calls"] == calls
    second, setup2 = await run(openai_stub, tmp_path, script, claims="llm", batch_size=8)
    assert len(openai_stub.requests) == calls  # zero new HTTP requests
    assert setup2.caller.usage.calls == 0 and setup2.caller.usage.cache_hits == calls
    assert [v.model_dump() for v in second.report.verdicts] == [
        v.model_dump() for v in first.report.verdicts
    ]
    refs = {p.name for p in setup.provenance.prompts}
    assert refs == {"soap.inference_aware", "soap.claim_extraction"}
    assert "api_key" not in json.dumps(setup.provenance.model_dump())


async def test_severity_is_the_models_when_valid_else_the_rules(openai_stub, tmp_path):
    """Tier 4–5 verdicts carry the model's severity and harm category when it gives valid
    ones; a missing or unknown value is rated by the offline rules, never a failed verdict."""

    def script(request):
        ids = list(dict.fromkeys(CLAIM_IDS.findall(last_user_text(request))))
        said = [
            {"severity": "minor", "harm_category": "history"},  # valid: kept
            {"severity": "moderate", "harm_category": "gossip"},  # unknown: rules
        ]
        verdicts = [
            {
                "claim_id": i,
                "tier": 4,
                "subtype": "no_basis",
                "rationale": "not said",
                **said[k % 2],
            }
            for k, i in enumerate(ids)
        ]
        return Reply(json.dumps({"verdicts": verdicts}))

    result, _ = await run(openai_stub, tmp_path, script, cache=False, batch_size=2)
    verdicts = result.report.verdicts
    assert verdicts and not result.report.failures
    kept = [v for k, v in enumerate(verdicts) if k % 2 == 0]
    rated = [v for k, v in enumerate(verdicts) if k % 2 == 1]
    assert all((v.severity, v.harm_category) == ("minor", "history") for v in kept)
    assert all(v.severity in ("major", "minor") and v.harm_category != "gossip" for v in rated)
    assert all(v.harm_category is not None for v in rated)
    prompt = last_user_text(openai_stub.requests[0])
    assert '"severity"' in prompt and "harm_category" in prompt
