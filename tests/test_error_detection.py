"""Error-detection harness (SPEC §4): the strict four-line parser, baselines, the LLM responder
(real ChatOpenAI against the loopback stub), the graph run with resume, prediction rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_stub import HttpError, OpenAIStub, Reply

from clinjudge.datasets.medec import load_pair_dataset
from clinjudge.graphs.error_detection import DetectContext, arun_detection, build_graph
from clinjudge.judges.error_detection import (
    DECODINGS,
    BaselineResponder,
    evidence_in_note,
    format_four_lines,
    make_llm_responder,
    parse_four_lines,
    read_predictions,
)
from clinjudge.llm import LLMSettings
from clinjudge.llm_cache import ResponseCache
from clinjudge.prompts import load_prompt
from clinjudge.types import CallError

PAIRS = Path(__file__).parent / "fixtures" / "medec" / "medec_pairs_sample.jsonl"
GOOD = (
    "Evidence: Culture tests indicate Neisseria gonorrhoeae.\n"
    "Analysis: Flushing after alcohol on an antimicrobial suggests metronidazole for "
    "trichomoniasis. Gonorrhoea is not treated with metronidazole. The organism is wrong.\n"
    "Confidence: 85\n"
    "Error: Yes"
)


# --------------------------------------------------------------------------- parser


def test_well_formed_answer_is_parsed() -> None:
    d = parse_four_lines(GOOD)
    assert d.status == "ok" and d.flag is True and d.reason is None
    assert d.parsed.evidence == "Culture tests indicate Neisseria gonorrhoeae."
    assert d.parsed.confidence == 85
    assert d.parsed.analysis.startswith("Flushing after alcohol")


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("Sure! Here is my review.\n" + GOOD, "text before the Evidence line"),
        (GOOD + "\nLet me know if you need anything else.", "text after the Error line"),
        (GOOD.rsplit("\n", 1)[0], "missing Error line"),
        (GOOD.replace("Error: Yes", "Error: maybe"), "Error must be Yes or No, got 'maybe'"),
        (GOOD.replace("Error: Yes", "Error: Yes, the organism is wrong"), "Yes or No"),
        (GOOD.replace("Confidence: 85", "Confidence: high"), "Confidence must be an integer"),
        (GOOD.replace("Confidence: 85", "Confidence: 120"), "Confidence must be an integer"),
        (GOOD + "\nError: No", "Error line appears twice"),
        ("Analysis: x\nEvidence: NA\nConfidence: 5\nError: No", "expected the Evidence line"),
        ("Evidence: NA\nConfidence: 5\nAnalysis: x\nError: No", "expected the Analysis line"),
        ("", "empty reply"),
    ],
)
def test_malformed_answers_are_parse_failures(raw: str, reason: str) -> None:
    d = parse_four_lines(raw)
    assert d.status == "parse_failure" and d.parsed is None and d.flag is None
    assert reason in d.reason
    assert d.raw == raw


@pytest.mark.parametrize(
    "raw",
    [
        GOOD.lower(),  # lower case keys and values
        GOOD.upper(),
        GOOD.replace("Evidence:", "**Evidence:**").replace("Error: Yes", "**Error:** Yes"),
        GOOD.replace("Error: Yes", "**Error: Yes**").replace("Confidence:", "**Confidence**:"),
        "\n".join("- " + line for line in GOOD.splitlines()),  # a bulleted list
        "<think>the dose looks fine... no, the organism</think>\n" + GOOD,
        "```\n" + GOOD + "\n```",
        GOOD.replace("Error: Yes", "Error: Yes.").replace("Confidence: 85", "Confidence: 85%"),
        GOOD.replace("\nConfidence", "\n\nThe culture result is inconsistent.\nConfidence"),
    ],
)
def test_formatting_variants_are_accepted(raw: str) -> None:
    d = parse_four_lines(raw)
    assert d.status == "ok", d.reason
    assert d.flag is True and d.parsed.confidence == 85
    assert "neisseria gonorrhoeae" in d.parsed.evidence.lower()


def test_na_and_quoted_evidence() -> None:
    no = parse_four_lines("Evidence: NA\nAnalysis: Consistent note.\nConfidence: 90\nError: No")
    assert no.status == "ok" and no.flag is False and no.parsed.evidence is None
    quoted = parse_four_lines(
        GOOD.replace("Evidence: Culture", 'Evidence: "Culture').replace(
            "gonorrhoeae.\n", 'gonorrhoeae."\n', 1
        )
    )
    assert quoted.parsed.evidence == "Culture tests indicate Neisseria gonorrhoeae."


def test_format_round_trip_and_evidence_in_note() -> None:
    raw = format_four_lines("Culture tests", "Fine.", 40, False)
    d = parse_four_lines(raw)
    assert (d.parsed.evidence, d.parsed.analysis, d.parsed.confidence, d.flag) == (
        "Culture tests",
        "Fine.",
        40,
        False,
    )
    note = "She has no history. Culture tests  indicate Neisseria gonorrhoeae."
    assert evidence_in_note("culture tests indicate neisseria", note) is True
    assert evidence_in_note("culture grew E. coli", note) is False
    assert evidence_in_note("NA", note) is None


# --------------------------------------------------------------------------- baselines


async def test_baselines_write_four_lines_that_parse() -> None:
    for kind, flag in (("always-error", True), ("never-error", False)):
        raw = await BaselineResponder(kind).respond("n1", "any note")
        assert parse_four_lines(raw).flag is flag
    with pytest.raises(ValueError, match="baseline"):
        BaselineResponder("sometimes")  # type: ignore[arg-type]


def test_random_baseline_is_seeded_per_note_and_fair() -> None:
    coin = BaselineResponder("random", seed=3)
    ids = [f"note-{i}" for i in range(2000)]
    flags = [coin.flag(i) for i in ids]
    assert flags == [BaselineResponder("random", seed=3).flag(i) for i in ids]  # reproducible
    assert [coin.flag(i) for i in reversed(ids)] == flags[::-1]  # order does not matter
    assert flags != [BaselineResponder("random", seed=4).flag(i) for i in ids]
    assert 0.46 < sum(flags) / len(flags) < 0.54
    assert coin.info() == {"detector": "baseline:random", "seed": 3, "p_flag": 0.5}


# --------------------------------------------------------------------------- LLM responder


def settings_for(stub: OpenAIStub) -> LLMSettings:
    return LLMSettings(model="stub-model", base_url=stub.base_url, timeout=5.0, max_retries=0)


@pytest.mark.parametrize("decoding", ["greedy", "sampling"])
async def test_llm_responder_sends_prompt_and_decoding(
    openai_stub: OpenAIStub, tmp_path: Path, decoding: str
) -> None:
    openai_stub.script(lambda _r: Reply(GOOD))
    cache = ResponseCache(tmp_path / "cache.sqlite")
    responder = make_llm_responder(
        "conservative", decoding, settings=settings_for(openai_stub), cache=cache
    )
    assert await responder.respond("n1", "NOTE TEXT 123") == GOOD
    body = openai_stub.requests[0]
    assert "response_format" not in body  # plain text, not JSON
    assert "NOTE TEXT 123" in body["messages"][0]["content"]
    assert "significant medical error" in body["messages"][0]["content"]
    assert body["temperature"] == DECODINGS[decoding]["temperature"]
    assert body.get("top_p") == DECODINGS[decoding]["top_p"]
    # a second call is served from the cache
    assert await responder.respond("n1", "NOTE TEXT 123") == GOOD
    assert len(openai_stub.requests) == 1
    assert responder.usage.calls == 1 and responder.usage.cache_hits == 1
    assert responder.info()["prompt"]["name"] == "detect.conservative"


async def test_llm_parse_failures_are_not_cached_and_errors_become_call_errors(
    openai_stub: OpenAIStub, tmp_path: Path
) -> None:
    openai_stub.script(lambda _r: Reply("I think there may be an error."))
    cache = ResponseCache(tmp_path / "cache.sqlite")
    responder = make_llm_responder(settings=settings_for(openai_stub), cache=cache)
    await responder.respond("n1", "note")
    await responder.respond("n1", "note")
    assert len(openai_stub.requests) == 2 and len(cache) == 0
    assert responder.usage.parse_failures == 2
    openai_stub.script(lambda _r: HttpError(500))
    result = await responder.respond("n2", "note")
    assert isinstance(result, CallError) and "500" in result.reason
    assert responder.usage.errors == 1


async def test_llm_responder_over_a_langchain_chat_model() -> None:
    from langchain_core.language_models import FakeListChatModel

    responder = make_llm_responder(
        "neutral", "sampling", chat_model=FakeListChatModel(responses=[GOOD])
    )
    assert parse_four_lines(await responder.respond("n", "note")).flag is True
    assert responder.decoding["temperature"] == 0.7


def test_prompt_override_must_take_the_note(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_text("Is there an error? Answer in four lines.")
    with pytest.raises(ValueError, match="placeholder"):
        make_llm_responder(prompt_override=str(bad), settings=LLMSettings(model="m"))
    good = tmp_path / "good.md"
    good.write_text("---\nname: mine\nversion: 2\n---\nNote: {{note}}")
    responder = make_llm_responder(
        prompt_override=str(good), settings=LLMSettings(model="m", base_url="http://127.0.0.1:9")
    )
    assert responder.info()["prompt"]["version"] == "2"
    assert responder.info()["prompt"]["path"].endswith("good.md")


def test_prompt_files_have_the_note_placeholder_and_the_four_lines() -> None:
    for name in ("detect.neutral", "detect.conservative"):
        prompt = load_prompt(name)
        assert prompt.placeholders == {"note"}
        for key in ("Evidence:", "Analysis:", "Confidence:", "Error:"):
            assert key in prompt.text
        assert 'the answer is "Error: No"' in prompt.text
    assert "prefer" in load_prompt("detect.conservative").text


# --------------------------------------------------------------------------- graph run


async def test_graph_parses_and_records_call_errors() -> None:
    class Failing:
        name = "failing"

        def info(self):
            return {"detector": self.name}

        async def respond(self, note_id, text):
            return CallError(claim_id=note_id, reason="APIConnectionError: down")

    state = await build_graph().ainvoke(
        {"note_id": "n", "text": "t"}, context=DetectContext(responder=Failing())
    )
    assert state["detection"]["status"] == "error"
    assert state["detection"]["reason"] == "APIConnectionError: down"


async def test_dataset_run_writes_rows_and_resumes(tmp_path: Path) -> None:
    data = load_pair_dataset(PAIRS)
    out = tmp_path / "predictions.jsonl"
    run = await arun_detection(data, BaselineResponder("always-error"), out)
    assert len(run.rows) == 8 and run.resumed == 0
    row = next(r for r in run.rows if r["note_id"] == "ms-val-0:corrected")
    assert (row["pair_id"], row["member"], row["has_error"], row["status"]) == (
        "ms-val-0",
        "clean",
        False,
        "ok",
    )
    assert row["parsed"]["error"] is True and row["raw"].startswith("Evidence: NA")
    assert row["pairs"][0]["corrected_sentence"] == "Culture tests indicate Trichomonas vaginalis."
    assert row["detector"] == "baseline:always-error"
    again = await arun_detection(data, BaselineResponder("always-error"), out)
    assert again.resumed == 8 and len(out.read_text().splitlines()) == 8


async def test_call_errors_are_retried_on_the_next_run(tmp_path: Path) -> None:
    data = load_pair_dataset(PAIRS).head(1)
    out = tmp_path / "predictions.jsonl"

    class Flaky(BaselineResponder):
        failures = {"ms-val-0"}

        async def respond(self, note_id, text):
            if note_id in self.failures:
                self.failures.discard(note_id)
                return CallError(claim_id=note_id, reason="timeout")
            return await super().respond(note_id, text)

    first = await arun_detection(data, Flaky("never-error"), out)
    assert [r["note_id"] for r in first.rows] == ["ms-val-0:corrected"]
    second = await arun_detection(data, Flaky("never-error"), out)
    assert second.resumed == 1 and len(second.rows) == 2
    rows = read_predictions(out)
    assert rows["ms-val-0"]["status"] == "ok"  # the later row replaces the error row


def test_torn_last_line_is_ignored_and_repaired(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text(json.dumps({"note_id": "a", "status": "ok"}) + '\n{"note_id": "b", "sta')
    assert list(read_predictions(path)) == ["a"]
    assert list(read_predictions(path, repair=True)) == ["a"]
    assert path.read_text().count("\n") == 1 and '"b"' not in path.read_text()
    path.write_text('garbage\n{"note_id": "a"}\n')
    with pytest.raises(ValueError, match="line 1"):
        read_predictions(path)
