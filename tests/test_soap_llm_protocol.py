"""What a small local model needs from the SOAP judge's LLM path, over real HTTP against the
loopback stub: a schema that admits only the batch's claim ids, claims a reply missed asked
again in smaller batches down to one, the per-claim protocol, claims cut by the splitter on
every backend, and one request at a time to a server that answers one at a time."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from pathlib import Path

from openai_stub import Delay, Reply, llama_cpp_server
from pydantic import BaseModel

from clinjudge.api import ajudge_note, make_setup
from clinjudge.grounding.evidence import exchange_passages, transcript_index
from clinjudge.judges.llm_judge import verdict_schema
from clinjudge.judges.note_context import (
    closest_lines,
    look_first,
    numbered_transcript,
    turn_evidence,
)
from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller
from clinjudge.prompts import Prompt
from clinjudge.text.claims import split_claims
from clinjudge.text.sections import segment_note
from clinjudge.text.transcript import parse_transcript

FIXTURES = Path(__file__).parent / "fixtures" / "soap"
TRANSCRIPT = (FIXTURES / "transcript.txt").read_text()
NOTE = (FIXTURES / "note.txt").read_text()
CLAIM_IDS = re.compile(r'"id":\s*"(c\d+)"')


def settings(stub, **overrides) -> LLMSettings:
    values = {"model": "stub-judge", "timeout": 5.0, "max_retries": 0}
    values.update(overrides)
    return LLMSettings(base_url=stub.base_url, **values)


def asked_ids(request: dict) -> list[str]:
    text = request["messages"][0]["content"]
    return list(dict.fromkeys(CLAIM_IDS.findall(text.split("<claims>")[-1])))


def verdict(claim_id: str, tier: int = 1) -> dict:
    return {"claim_id": claim_id, "tier": tier, "subtype": None, "rationale": "said"}


async def judge(stub, tmp_path, script, **kw):
    stub.script(script)
    setup = make_setup(
        "inference-aware",
        "llm",
        settings=settings(stub),
        cache=ResponseCache(tmp_path / "cache.sqlite"),
        **kw,
    )
    return await ajudge_note(TRANSCRIPT, NOTE, setup=setup, batch_size=4), setup


def test_the_schema_admits_only_the_batch_ids_each_once_and_the_modes_tiers() -> None:
    schema = verdict_schema(("c1", "c2", "c3"), "lexical")
    item = schema["$defs"]["LLMVerdictItem"]["properties"]
    assert item["claim_id"]["enum"] == ["c1", "c2", "c3"]
    assert item["tier"]["enum"] == [1, 4, 5]
    assert schema["properties"]["verdicts"]["minItems"] == 3
    assert schema["properties"]["verdicts"]["maxItems"] == 3
    assert verdict_schema(("c1",), "inference-aware")["$defs"]["LLMVerdictItem"]["properties"][
        "tier"
    ]["enum"] == [1, 2, 3, 4, 5]


async def test_claims_a_reply_misses_are_asked_again_down_to_one(openai_stub, tmp_path):
    """A small model answers only the first claim of each batch: every claim still gets its
    verdict, by re-asks of the missed ones in halves (4 → 2 → 1)."""
    seen: list[list[str]] = []

    def first_only(request: dict) -> Reply:
        ids = asked_ids(request)
        seen.append(ids)
        return Reply(json.dumps({"verdicts": [verdict(ids[0])]}))

    result, setup = await judge(openai_stub, tmp_path, llama_cpp_server(first_only))
    report = result.report
    n = len(report.claims)
    assert n >= 8
    assert not report.failures and len(report.verdicts) == n
    assert max(map(len, seen)) == 4 and min(map(len, seen)) == 1
    first = openai_stub.requests[0]
    assert first["response_format"]["type"] == "json_schema"  # then json_object (llama.cpp)
    asked = [r for r in openai_stub.requests if r["response_format"]["type"] == "json_object"]
    ids = asked[0]["response_format"]["schema"]["$defs"]["LLMVerdictItem"]["properties"]
    assert ids["claim_id"]["enum"] == asked_ids(asked[0])
    assert setup.caller.usage.output_modes == {"json_object": len(seen)}


async def test_a_claim_no_call_can_answer_stays_a_recorded_parse_failure(openai_stub, tmp_path):
    def never_c2(request: dict) -> Reply:
        ids = [i for i in asked_ids(request) if i != "c2"]
        return Reply(json.dumps({"verdicts": [verdict(i) for i in ids]}))

    result, _ = await judge(openai_stub, tmp_path, never_c2)
    failures = {f.claim_id: f for f in result.report.failures}
    assert list(failures) == ["c2"]
    assert failures["c2"].kind == "parse_failure"
    assert "no verdict" in failures["c2"].reason
    alone = [r for r in openai_stub.requests if asked_ids(r) == ["c2"]]
    assert len(alone) == 1  # asked alone once, then recorded (not asked forever)


async def test_the_shared_claim_protocol_asks_each_claim_after_the_notes_prefix(
    openai_stub, tmp_path
):
    """Every call of a note opens with the same bytes (instructions, numbered transcript) and
    ends with its claim and the lines closest to it; the answer is a label, with a reason and
    turns for a flag."""
    labels = {"c1": "stated", "c2": "inferred", "c3": "unsupported", "c4": "contradicted"}

    def one_label(request: dict) -> Reply:
        text = request["messages"][0]["content"]
        claim = text.split("<sentence>")[1].split("</sentence>")[0]
        index = [c.text for c in claims].index(claim)
        label = labels.get(f"c{index + 1}", "maybe")  # c5 on: a label that does not exist
        if label in ("unsupported", "contradicted"):
            return Reply(json.dumps({"label": label, "reason": "said otherwise", "turns": [2, 99]}))
        return Reply(json.dumps({"label": label}))

    claims = split_claims(segment_note(NOTE))
    result, setup = await judge(openai_stub, tmp_path, one_label, protocol="claim-shared")
    verdicts = {v.claim_id: v for v in result.report.verdicts}
    assert verdicts["c1"].tier in (1, 2) and verdicts["c1"].supported
    assert verdicts["c1"].evidence == [] and verdicts["c1"].rationale == "per-claim check: stated"
    assert verdicts["c2"].tier == 3 and verdicts["c3"].tier == 4 and verdicts["c4"].tier == 5
    assert verdicts["c3"].severity in ("major", "minor")  # rated by the offline rules
    turn_2 = parse_transcript(TRANSCRIPT).turns[1]
    assert [(e.start, e.end) for e in verdicts["c4"].evidence] == [(turn_2.start, turn_2.end)]
    assert "said otherwise" in verdicts["c4"].rationale
    assert {f.claim_id for f in result.report.failures} == {
        f"c{i}" for i in range(5, len(claims) + 1)
    }
    assert len(openai_stub.requests) == 4 + 2 * (len(claims) - 4)  # a re-ask per bad reply
    first_asks = [
        r["messages"][0]["content"] for r in openai_stub.requests if len(r["messages"]) == 1
    ]
    prefixes = {text.split("<sentence>")[0] for text in first_asks}
    assert len(prefixes) == 1  # one prefix for every claim of the note
    prefix = prefixes.pop()
    assert "\nT1 " in prefix and "<conversation_parts>" not in prefix
    assert all(len(t) - len(prefix) < 0.2 * len(t) for t in first_asks)
    schema = openai_stub.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["label"]["enum"] == [
        "stated",
        "inferred",
        "unsupported",
        "contradicted",
    ]
    assert schema["required"] == ["label"]
    assert setup.provenance.verifier == {"protocol": "claim-shared"}
    assert [p.name for p in setup.provenance.prompts] == ["soap.shared_claim_inference_aware"]


async def test_the_per_claim_protocol_asks_each_claim_alone_with_its_exchanges(
    openai_stub, tmp_path
):
    labels = {"c1": "stated", "c2": "inferred", "c3": "unsupported", "c4": "contradicted"}

    def one_label(request: dict) -> Reply:
        text = request["messages"][0]["content"]
        claim = text.split("<sentence>")[1].split("</sentence>")[0]
        index = [c.text for c in claims].index(claim)
        label = labels.get(f"c{index + 1}", "maybe")  # c5 on: a label that does not exist
        return Reply(json.dumps({"label": label, "quote": "my right knee"}))

    claims = split_claims(segment_note(NOTE))
    result, setup = await judge(openai_stub, tmp_path, one_label, protocol="claim")
    verdicts = {v.claim_id: v for v in result.report.verdicts}
    assert verdicts["c1"].tier in (1, 2) and verdicts["c1"].supported
    assert verdicts["c2"].tier == 3 and verdicts["c3"].tier == 4 and verdicts["c4"].tier == 5
    assert verdicts["c3"].severity in ("major", "minor")  # rated by the offline rules
    assert {f.claim_id for f in result.report.failures} == {
        f"c{i}" for i in range(5, len(claims) + 1)
    }
    assert len(openai_stub.requests) == 4 + 2 * (len(claims) - 4)  # a re-ask per bad reply
    first = openai_stub.requests[0]
    assert "<conversation_parts>" in first["messages"][0]["content"]
    assert first["response_format"]["json_schema"]["schema"]["properties"]["label"]["enum"] == [
        "stated",
        "inferred",
        "unsupported",
        "contradicted",
    ]
    assert setup.provenance.verifier == {"protocol": "claim"}
    assert [p.name for p in setup.provenance.prompts] == ["soap.claim_inference_aware"]


async def test_auto_claims_are_the_splitters_on_the_llm_backend(openai_stub, tmp_path):
    def all_verdicts(request: dict) -> Reply:
        return Reply(json.dumps({"verdicts": [verdict(i) for i in asked_ids(request)]}))

    result, setup = await judge(openai_stub, tmp_path, all_verdicts)
    expected = split_claims(segment_note(NOTE))
    assert [c.text for c in result.report.claims] == [c.text for c in expected]
    assert all("claim_extraction" not in r["messages"][0]["content"] for r in openai_stub.requests)
    assert [p.name for p in setup.provenance.prompts] == ["soap.inference_aware"]


def test_exchange_passages_show_the_question_a_denial_answers() -> None:
    transcript = parse_transcript(
        "[doctor] how long has the knee hurt ?\n"
        "[patient] about two weeks now .\n"
        "[doctor] any fever or chills ?\n"
        "[patient] no , none of that .\n"
        "[doctor] okay . let's get an x-ray of the knee .\n"
    )
    index = transcript_index(transcript, dense=False)
    lines = exchange_passages(transcript, index, "denies fever or chills", k=1)
    assert lines[0] == "[patient] about two weeks now ."
    assert lines[1] == "[doctor] any fever or chills ?"
    assert lines[2] == "[patient] no , none of that ."


def test_the_closest_lines_carry_their_turn_and_the_question_a_denial_answers() -> None:
    transcript = parse_transcript(
        "[doctor] how long has the knee hurt ?\n"
        "[patient] about two weeks now .\n"
        "[doctor] any fever or chills ?\n"
        "[patient] no , none of that .\n"
    )
    index = transcript_index(transcript, dense=False)
    assert numbered_transcript(transcript).splitlines()[2] == "T3 doctor: any fever or chills ?"
    lines = closest_lines(index, transcript, "denies fever or chills", k=1).splitlines()
    assert lines == ["T2 patient: about two weeks now .", "T3 doctor: any fever or chills ?"]
    assert look_first(index, "denies fever or chills", k=1) == [2, 3]
    spans = turn_evidence(transcript, [4, 4, 0, 9])  # each once; no turn 0 or 9
    assert [e.text for e in spans] == ["no , none of that ."]
    assert closest_lines(index, transcript, "zzz", k=1) == "none"


def test_a_claims_other_names_are_brief() -> None:
    from clinjudge.judges.knowledge_context import KnowledgeLookup
    from clinjudge.knowledge.base import KnowledgeBase

    lookup = KnowledgeLookup(KnowledgeBase.default())
    entries = lookup.entries("Takes Zestril 10 mg daily.")
    brief = lookup.brief(entries, most=3)
    (line,) = [x for x in brief.splitlines() if x.startswith("Zestril = ")]
    names = line.removeprefix("Zestril = ").split(", ")
    assert len(names) <= 3 and "lisinopril" in {n.lower() for n in names}
    assert len(brief) < len("\n".join(lookup.describe(e) for e in entries))


PROMPT = Prompt(name="t", version="1", text="Judge {{x}}", sha256="b" * 64)


class Out(BaseModel):
    verdicts: list


async def test_max_concurrent_calls_holds_over_every_caller_of_an_endpoint(openai_stub) -> None:
    """Two judges' callers on one local server: never more than one request in flight."""
    in_flight = [0, 0]  # now, most
    lock = threading.Lock()

    def slow(request: dict) -> Delay:
        with lock:
            in_flight[0] += 1
            in_flight[1] = max(in_flight)
        time.sleep(0.15)
        with lock:
            in_flight[0] -= 1
        return Delay(0, Reply(json.dumps({"verdicts": []})))

    openai_stub.script(slow)
    s = settings(openai_stub, max_concurrent_calls=1)
    a, b = (StructuredCaller.from_settings(s) for _ in range(2))

    results = await asyncio.gather(
        *(c.call(PROMPT, {"x": i}, Out, key="k") for i, c in enumerate([a, b, a, b]))
    )
    assert all(isinstance(r, Out) for r in results)
    assert in_flight[1] == 1 and len(openai_stub.requests) == 4
