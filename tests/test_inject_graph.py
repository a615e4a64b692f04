"""The LLM injection graph (clinjudge.graphs.inject, SPEC §5) for real over HTTP: the real
ChatOpenAI against the loopback OpenAI-compatible stub, scripted per model and prompt —
agreement, disagreement (no injection call), malformed injection JSON (parse failure →
regenerate once → discard), validator rejection then a regenerated success, shape rejection,
and a resumable dataset run."""

from __future__ import annotations

import json

import pytest
from openai_stub import Reply

from clinjudge.datasets.items import Dataset, Item
from clinjudge.errors import ConfigError
from clinjudge.graphs.inject import InjectContext, arun_injection, build_graph
from clinjudge.inject.model_roles import InjectSettings, build_inject_models
from clinjudge.inject.outputs import InjectFiles, run_provenance
from clinjudge.inject.pairs import read_pairs
from clinjudge.inject.taxonomy import load_taxonomy
from clinjudge.llm import LLMSettings

NOTE = "HPI\n\nRight knee pain for 3 days.\n\nPLAN\n\nStart meloxicam 15 mg once daily.\n"
SOURCE = (
    "[patient] my right knee hurts , three days now .\n[doctor] meloxicam 15 milligrams daily ."
)
EDITED = NOTE.replace("15 mg", "30 mg")
GOOD = {
    "rationale": "the dose is doubled",
    "original_span": "15 mg",
    "replacement": "30 mg",
    "consequence": "twice the intended NSAID dose",
    "edited_text": EDITED.rstrip("\n"),  # models drop the final newline: restored
}
OK = {"type_matches": True, "clinically_significant": True, "fluent": True, "single_error": True}


def text_of(request: dict) -> str:
    return "\n".join(str(m.get("content", "")) for m in request["messages"])


def role_of(request: dict) -> str:
    text = text_of(request)
    if "Decide whether" in text:
        return f"applicability_{request['model'][-1]}"
    if "Insert exactly ONE" in text:
        return "injector"
    if "checking one edit" in text:
        return "validator"
    return "unknown"


def scripted(stub, **replies):
    """Answer each role from ``replies[role]``: a list consumed in order (last one repeats)."""
    queues = {role: list(r) for role, r in replies.items()}

    def reply(request):
        queue = queues[role_of(request)]
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        return Reply(item if isinstance(item, str) else json.dumps(item))

    stub.script(reply)


def models_for(stub):
    settings = LLMSettings(
        model="model-a", base_url=stub.base_url, api_key="x", timeout=5.0, max_retries=0
    )
    return build_inject_models(settings, InjectSettings(model_b="model-b"))


def roles(stub) -> list[str]:
    return [role_of(r) for r in stub.requests]


async def run_one(stub, type_id="dosage"):
    state = await build_graph().ainvoke(
        {
            "pair_id": f"n1:{type_id}",
            "source_id": "n1",
            "type": type_id,
            "source": SOURCE,
            "original": NOTE,
            "failures": [],
        },
        context=InjectContext(models=models_for(stub), taxonomy=load_taxonomy()),
        config={"recursion_limit": 30},
    )
    return state["outcome"]


YES = {"applicable": True, "reason": "a dose is stated"}
NO = {"applicable": False, "reason": "nothing to change"}


async def test_agreement_path_makes_one_validated_pair(openai_stub):
    scripted(openai_stub, applicability_a=[YES], applicability_b=[YES], injector=[GOOD],
             validator=[{**OK, "reason": "fine"}])  # fmt: skip
    outcome = await run_one(openai_stub)
    assert outcome["status"] == "accepted" and outcome["attempts"] == 1
    assert sorted(roles(openai_stub)) == [
        "applicability_a",
        "applicability_b",
        "injector",
        "validator",
    ]
    assert {r["model"] for r in openai_stub.requests} == {"model-a", "model-b"}
    pair = outcome["pair"]
    assert pair["edited"] == EDITED and (pair["before"], pair["after"]) == ("15", "30")
    assert pair["original"][slice(*pair["original_span"])] == "15"
    assert pair["backend"] == "llm" and pair["validator"]["clinically_significant"] is True
    assert pair["models"] == {
        "applicability_a": "model-a", "applicability_b": "model-b",
        "injector": "model-a", "validator": "model-b",
    }  # fmt: skip
    assert pair["consequence"] == GOOD["consequence"] and pair["shape"]["ok"]


async def test_disagreement_stops_before_any_injection_call(openai_stub):
    scripted(openai_stub, applicability_a=[YES], applicability_b=[NO])
    outcome = await run_one(openai_stub)
    assert outcome["status"] == "disagreed" and outcome["pair"] is None
    assert len(openai_stub.requests) == 2 and "injector" not in roles(openai_stub)
    assert (
        outcome["applicability"]["b"]["applicable"] is False and "B: nothing" in outcome["reason"]
    )


async def test_both_no_is_not_applicable(openai_stub):
    scripted(openai_stub, applicability_a=[NO], applicability_b=[NO])
    outcome = await run_one(openai_stub)
    assert outcome["status"] == "not_applicable" and len(openai_stub.requests) == 2


async def test_malformed_injection_json_regenerates_once_then_discards(openai_stub):
    scripted(openai_stub, applicability_a=[YES], applicability_b=[YES],
             injector=['{"rationale": "dose", "original_span": "15 mg", "replac'])  # fmt: skip
    outcome = await run_one(openai_stub)
    assert outcome["status"] == "parse_failure" and outcome["attempts"] == 2
    # two attempts, each one call plus StructuredCaller's one re-ask; no validator call
    assert roles(openai_stub).count("injector") == 4 and "validator" not in roles(openai_stub)
    assert [f["stage"] for f in outcome["failures"]] == ["injection", "injection"]
    assert "invalid JSON" in outcome["reason"]


async def test_validator_rejection_then_regenerated_success(openai_stub):
    rejected = {**OK, "clinically_significant": False, "reason": "too small to matter"}
    scripted(openai_stub, applicability_a=[YES], applicability_b=[YES], injector=[GOOD],
             validator=[rejected, {**OK, "reason": "fine"}])  # fmt: skip
    outcome = await run_one(openai_stub)
    assert outcome["status"] == "accepted" and outcome["attempts"] == 2
    assert outcome["failures"][0]["status"] == "validator_rejected"
    assert "clinically_significant false: too small" in outcome["failures"][0]["reason"]
    injections = [r for r in openai_stub.requests if role_of(r) == "injector"]
    assert "A previous attempt was rejected" not in text_of(injections[0])
    assert "too small to matter" in text_of(injections[1])  # the reason is fed back
    assert outcome["pair"]["attempts"] == 2


async def test_a_whole_rewrite_fails_the_shape_check_twice_and_is_discarded(openai_stub):
    rewrite = {**GOOD, "original_span": NOTE, "replacement": "PLAN\n\nIbuprofen 800 mg TID.",
               "edited_text": "PLAN\n\nIbuprofen 800 mg TID."}  # fmt: skip
    scripted(openai_stub, applicability_a=[YES], applicability_b=[YES], injector=[rewrite])
    outcome = await run_one(openai_stub)
    assert outcome["status"] == "shape_rejected" and outcome["attempts"] == 2
    assert "DESTROY" in outcome["reason"] and "validator" not in roles(openai_stub)


def test_the_second_model_must_be_set_and_different(openai_stub):
    settings = LLMSettings(model="model-a", base_url=openai_stub.base_url, api_key="x")
    with pytest.raises(ConfigError, match="CLINJUDGE_INJECT_MODEL_B"):
        build_inject_models(settings, InjectSettings())
    with pytest.raises(ConfigError, match="two independent models"):
        build_inject_models(settings, InjectSettings(model_b="model-a"))


async def test_a_dataset_run_writes_pairs_and_resumes_without_calls(openai_stub, tmp_path):
    scripted(openai_stub, applicability_a=[YES], applicability_b=[YES], injector=[GOOD],
             validator=[{**OK, "reason": "fine"}])  # fmt: skip
    items = [Item(id=f"n{i}", transcript=SOURCE, note=NOTE) for i in range(2)]
    data = Dataset(name="t", path=tmp_path, items=items, sha256="a" * 64)
    models = models_for(openai_stub)
    files = InjectFiles(tmp_path / "pairs.jsonl")
    provenance = run_provenance("llm", data, seed=0, llm=models.provenance())
    stats = await arun_injection(data, ["dosage"], models, files, provenance, concurrency=2)
    assert stats["per_type"]["dosage"]["accepted"] == 2 and stats["complete"]
    assert [p.pair_id for p in read_pairs(files.pairs)] == ["n0:dosage", "n1:dosage"]
    assert stats["usage"]["injector"]["calls"] == 2
    assert json.loads(files.stats.read_text())["provenance"]["models"]["validator"] == "model-b"
    sent = len(openai_stub.requests)
    again = await arun_injection(data, ["dosage"], models_for(openai_stub), files, provenance)
    assert len(openai_stub.requests) == sent and again["total"]["accepted"] == 2


async def test_an_unparseable_applicability_answer_stops_the_run(openai_stub):
    scripted(openai_stub, applicability_a=[YES], applicability_b=["Sure, that works."])
    outcome = await run_one(openai_stub)
    assert outcome["status"] == "parse_failure" and "applicability_b" in outcome["reason"]
    assert "injector" not in roles(openai_stub) and outcome["attempts"] == 0
