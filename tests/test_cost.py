"""What a run costs (issue 38, item 3): calls, prompt, cached and completion tokens and seconds
per judge and per note from the server's own usage, in the rows (so resume keeps them),
``report.json``, the console, ``report.md`` and ``report.html``; money only at the user's
prices; and ``compare --dry-run``, the estimate before a run."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run
from openai_stub import Reply

from clinjudge.llm_usage import Prices, cost_totals

FIXTURES = Path(__file__).parent / "fixtures" / "soap"
PROMPT, CACHED, COMPLETION = 1000, 600, 40


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """Two encounters (two visits: the second ends with a goodbye), each with a careful and
    a careless system's note."""
    path = tmp_path_factory.mktemp("cost") / "notes.csv"
    transcript = (FIXTURES / "transcript.txt").read_text()
    note = (FIXTURES / "note.txt").read_text()
    with path.open("w", newline="") as handle:
        fields = ["encounter_id", "dialogue", "careful", "careless"]
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for encounter in ("e1", "e2"):
            careless = note.replace("right knee with mild", "left knee with mild")
            dialogue = transcript + (
                "\n[doctor] see you in two weeks ." if encounter == "e2" else ""
            )
            writer.writerow(
                {"encounter_id": encounter, "dialogue": dialogue, "careful": note,
                 "careless": careless}
            )  # fmt: skip
    return path


def verdicts_for_every_claim(request) -> Reply:
    """Tier 1 for every claim id asked, with usage that reports cached prompt tokens."""
    text = "\n".join(str(m.get("content", "")) for m in request["messages"])
    ids = list(dict.fromkeys(re.findall(r'"id":\s*"(c\d+)"', text)))
    verdicts = [{"claim_id": i, "tier": 1, "rationale": "ok", "evidence": []} for i in ids]
    content = json.dumps({"verdicts": verdicts})
    return Reply(content, prompt_tokens=PROMPT, completion_tokens=COMPLETION, cached_tokens=CACHED)


def use_stub(monkeypatch, stub, tmp_path: Path) -> None:
    stub.script(verdicts_for_every_claim)
    for key, value in {
        "CLINJUDGE_MODEL": "stub-judge",
        "OPENAI_BASE_URL": stub.base_url,
        "CLINJUDGE_CACHE_DIR": str(tmp_path / "cache"),
        "CLINJUDGE_MAX_RETRIES": "0",
    }.items():
        monkeypatch.setenv(key, value)
    for key in ("CLINJUDGE_PRICE_IN", "CLINJUDGE_PRICE_OUT", "CLINJUDGE_PRICE_CACHED"):
        monkeypatch.delenv(key, raising=False)


def test_a_run_reports_calls_tokens_cached_tokens_and_money(
    dataset, tmp_path, openai_stub, monkeypatch
):
    use_stub(monkeypatch, openai_stub, tmp_path)
    out = tmp_path / "run"
    args = ("compare", dataset, "--systems", "careful,careless", "--out", out)
    priced = ("--price-in", "2.5", "--price-out", "10", "--price-cached", "1.25")
    result = run(*args, "--backend", "llm", "--claims", "split", "--judges", "inference-aware",
                 *priced)  # fmt: skip
    assert result.exit_code == 0, result.output
    calls = len(openai_stub.requests)
    assert calls > 0
    report = json.loads((out / "report.json").read_text())
    cost = report["cost"]
    totals = cost["judges"]["inference-aware"]
    assert totals["calls"] == calls and totals["items"] == 4
    assert totals["prompt_tokens"] == PROMPT * calls
    assert totals["cached_prompt_tokens"] == CACHED * calls
    assert totals["completion_tokens"] == COMPLETION * calls
    expected = calls * ((PROMPT - CACHED) * 2.5 + CACHED * 1.25 + COMPLETION * 10) / 1e6
    assert totals["usd"] == pytest.approx(expected)
    assert cost["prices"] == {"currency": "USD", "per": "1M tokens", "input": 2.5,
                              "cached_input": 1.25, "output": 10.0}  # fmt: skip
    per_system = cost["systems"]["inference-aware"]
    assert sum(s["calls"] for s in per_system.values()) == calls
    assert set(per_system) == {"careful", "careless"}
    # per note: in the rows and in report.json's per_item
    rows = [
        json.loads(x) for x in (out / "runs" / "inference-aware.jsonl").read_text().splitlines()
    ]
    assert sum(r["cost"]["calls"] for r in rows) == calls
    assert all(r["cost"]["seconds"] > 0 for r in rows)
    assert all(p["cost"]["inference-aware"]["calls"] > 0 for p in report["per_item"])
    # the console, report.md and report.html
    assert "cached prompt tokens" in result.output and "USD" in result.output
    assert f"{CACHED * calls:,}" in result.output
    assert "## Cost" in (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    assert 'id="cost"' in html and f"{CACHED * calls:,}" in html

    # resume: nothing judged, the counts kept (they live in the rows)
    again = run(*args, "--backend", "llm", "--claims", "split", "--judges", "inference-aware")
    assert again.exit_code == 0, again.output
    assert len(openai_stub.requests) == calls
    kept = json.loads((out / "report.json").read_text())["cost"]
    assert kept["judges"]["inference-aware"]["calls"] == calls
    assert kept["prices"] is None and "usd" not in kept["total"]  # no price, no money
    assert "tokens only" in again.output

    # `report` prices at the last report's prices, or the ones given
    rendered = run("report", out, "--price-in", "1", "--price-out", "1")
    assert rendered.exit_code == 0, rendered.output
    total = json.loads((out / "report.json").read_text())["cost"]["total"]
    assert total["usd"] == pytest.approx(calls * (PROMPT + COMPLETION) / 1e6)


def test_an_offline_run_costs_no_call_and_its_seconds(dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINJUDGE_PRICE_IN", "3")
    monkeypatch.setenv("CLINJUDGE_PRICE_OUT", "15")
    out = tmp_path / "offline"
    result = run("compare", dataset, "--systems", "careful,careless", "--out", out,
                 "--backend", "offline", "--judges", "lexical", "--limit", "1")  # fmt: skip
    assert result.exit_code == 0, result.output
    totals = json.loads((out / "report.json").read_text())["cost"]["judges"]["lexical"]
    assert totals["calls"] == totals["prompt_tokens"] == totals["completion_tokens"] == 0
    assert totals["seconds"] > 0 and totals["usd"] == 0
    assert "Cost: no model call (offline judges); judging took" in result.stdout


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        (("--price-in", "-1", "--price-out", "2"), "--price-in"),
        (("--price-in", "abc", "--price-out", "2"), "--price-in"),
        (("--price-in", "1", "--price-out", "nan"), "--price-out"),
        (("--price-in", "1"), "--price-out"),
        (("--price-in", "1", "--price-out", "1", "--price-cached", "-0.5"), "--price-cached"),
    ],
)
def test_a_bad_price_is_one_line_and_exit_2(dataset, tmp_path, options, needle):
    out = tmp_path / "bad"
    result = run("compare", dataset, "--out", out, "--backend", "offline", *options)
    assert_one_line_error(result, needle)
    assert not out.exists()


def test_a_bad_price_in_the_environment_is_named(dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINJUDGE_PRICE_IN", "cheap")
    monkeypatch.setenv("CLINJUDGE_PRICE_OUT", "1")
    result = run("compare", dataset, "--out", tmp_path / "o", "--backend", "offline")
    assert_one_line_error(result, "CLINJUDGE_PRICE_IN")


def test_money_prices_cached_tokens_at_the_input_price_unless_given():
    totals = cost_totals(
        [{"cost": {"calls": 2, "prompt_tokens": 3_000_000, "cached_prompt_tokens": 1_000_000,
                   "completion_tokens": 500_000, "seconds": 1.0}}, {"id": "old row"}]
    )  # fmt: skip
    assert totals["items"] == 2 and totals["items_without_cost"] == 1
    assert Prices(2.0, 8.0).usd(totals) == pytest.approx(6.0 + 4.0)
    assert Prices(2.0, 8.0, 0.5).usd(totals) == pytest.approx(4.0 + 0.5 + 4.0)


def test_a_dry_run_foresees_the_calls_of_a_run_and_writes_nothing(
    dataset, tmp_path, openai_stub, monkeypatch
):
    use_stub(monkeypatch, openai_stub, tmp_path)
    out = tmp_path / "planned"
    args = ("compare", dataset, "--systems", "careful,careless", "--out", out, "--backend", "llm")
    args += ("--judges", "lexical,cef,factcheck")
    dry = run(*args, "--dry-run", "--price-in", "2", "--price-out", "8")
    assert dry.exit_code == 0, dry.output
    assert openai_stub.requests == [] and not out.exists()  # nothing sent, nothing written
    assert "approximation: characters / 4" in dry.output
    assert "Completion tokens are not estimated" in dry.output
    assert "factcheck: not estimated" in dry.output and "USD" in dry.output
    assert "cef: an upper bound" in dry.output
    # 6 calls an item at most, 24. Stand-in questions quote a text's first 10 sentences: the
    # two visits differ in their last line only, and the careful and careless notes after
    # them, so only 12 prompts differ; the cache answers the other 12
    assert re.search(r"│ cef\s+│\s+4 │\s+12 │", dry.output), dry.output
    assert "12 repeats of an earlier prompt" in dry.output
    planned = int(re.search(r"│ lexical\s+│\s+4 │\s+(\d+) │", dry.output).group(1))

    ran = run(*args[:-2], "--judges", "lexical")
    assert ran.exit_code == 0, ran.output
    assert len(openai_stub.requests) == planned  # every reply was good: no re-ask
    again = run(*args[:-2], "--judges", "lexical", "--dry-run")
    assert again.exit_code == 0, again.output
    assert re.search(r"│ lexical\s+│\s+0 │\s+0 │", again.output)  # all judged already
    assert "4 items already judged" in again.output


def test_a_dry_run_on_the_offline_backend_sends_nothing(dataset, tmp_path):
    out = tmp_path / "offline-plan"
    result = run("compare", dataset, "--systems", "careful,careless", "--out", out,
                 "--backend", "offline", "--dry-run")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "offline: no model call" in result.output and not out.exists()


def test_tokens_are_counted_with_the_models_tokenizer_when_known(monkeypatch):
    import tiktoken

    from clinjudge.token_count import token_counter

    class Words:
        def encode(self, text, disallowed_special=()):
            return text.split()

    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: Words())
    counter = token_counter("gpt-4o")
    assert counter.exact and "o200k_base" in counter.method
    assert counter.count("three short words") == 3
    guess = token_counter("my-local-model")
    assert not guess.exact and "approximation" in guess.method
    assert guess.count("x" * 9) == 3


def test_a_tokenizer_that_hangs_gives_the_approximation_in_time(monkeypatch):
    """tiktoken fetches its encoding without a timeout: a firewalled network must not hang a
    dry run."""
    import threading

    import tiktoken

    from clinjudge import token_count

    never = threading.Event()
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: never.wait(60))
    monkeypatch.setattr(token_count, "LOAD_SECONDS", 0.2)
    counter = token_count.token_counter("gpt-4o")
    assert not counter.exact and "TimeoutError" in counter.method
    never.set()


class PlannedJudge:
    """A judge whose run would send two items' fixed prompts (``estimate_run``'s interface)."""

    def __init__(self, prompts: dict[str, list[str]]) -> None:
        self.prompts = prompts

    def usage(self) -> dict[str, int]:
        return {}

    def planned_prompts(self, item) -> tuple[list[str], str]:
        return self.prompts[item.id], "fixed"


def test_the_estimate_prices_the_prefix_a_call_shares_with_the_call_before_at_the_cached_price():
    from clinjudge.datasets.items import Dataset, Item
    from clinjudge.estimate import estimate_run
    from clinjudge.token_count import TokenCounter

    items = [Item(id=i, transcript="t", note="n") for i in "ab"]
    data = Dataset(name="two", path=Path("two.csv"), sha256="0", items=items)
    judge = PlannedJudge({"a": ["INSTR visit-a claim1", "INSTR visit-a claim2"],
                          "b": ["INSTR visit-b claim1"]})  # fmt: skip
    letters = TokenCounter(lambda text: 1000 * len(text), "1,000 a character", exact=False)
    found = estimate_run(data, {"j": judge}, letters, prices=Prices(2.0, 8.0, 0.5))
    entry = found["judges"]["j"]
    # shared with the call before: 0, then "INSTR visit-a claim" (19), then "INSTR visit-" (12)
    assert entry["calls"] == 3 and entry["prompt_tokens"] == 60_000
    assert entry["prefix_tokens"] == 31_000 == found["total"]["prefix_tokens"]
    assert entry["usd"] == pytest.approx((29_000 * 2.0 + 31_000 * 0.5) / 1e6)


def cef_stand_ins(request) -> Reply:
    """CEF as its estimate bounds it: the questions asked for, worded as the estimate's
    stand-ins for the one text the (focused) prompt shows, every answer YES."""
    from clinjudge.cef.llm_backend import stand_in_questions

    text = "\n".join(str(m.get("content", "")) for m in request["messages"])
    if wanted := re.search(r"Write (\d+) questions", text):
        shown = text.split("Text:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
        asked = [
            {"question": q, "answer": "YES"} for q in stand_in_questions(shown, int(wanted[1]))
        ]
        return Reply(json.dumps({"questions": asked}))
    ids = re.findall(r'"id":\s*"([ds]\d+)"', text)
    return Reply(json.dumps({"answers": [{"id": i, "answer": "YES"} for i in ids]}))


def test_a_cef_run_sends_what_its_dry_run_planned(dataset, tmp_path, openai_stub, monkeypatch):
    """Two systems' notes of two visits, four items at once: each visit's notes are judged
    side by side, identical calls in flight are sent once, and the run sends the calls its
    estimate counted (exactly, when the model's questions read as the stand-ins)."""
    use_stub(monkeypatch, openai_stub, tmp_path)
    openai_stub.script(cef_stand_ins)
    out = tmp_path / "cef-run"
    args = ("compare", dataset, "--systems", "careful,careless", "--out", out, "--backend", "llm")
    args += ("--judges", "cef", "--concurrency", "4")
    dry = run(*args, "--dry-run")
    assert dry.exit_code == 0, dry.output
    planned = int(re.search(r"│ cef\s+│\s+4 │\s+(\d+) │", dry.output).group(1))
    ran = run(*args)
    assert ran.exit_code == 0, ran.output
    assert not openai_stub.script_errors
    assert len(openai_stub.requests) == planned == 12
