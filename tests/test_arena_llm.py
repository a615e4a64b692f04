"""The pairwise judge on an LLM (issue 25, SPEC §6), for real over HTTP: the real ChatOpenAI
against the loopback OpenAI-compatible server. Two calls per pair (one per order, every
criterion in each); a model that follows the position is measured as position-biased and its
verdicts become draws; a reply that names no winner is a parse failure, never a tie; the CLI
runs the arena on the model without judging any text offline."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from cli_helpers import run
from openai_stub import Reply

from clinjudge.arena.preference import CRITERIA
from clinjudge.datasets.items import Item
from clinjudge.evaluators.base import BuildOptions
from clinjudge.evaluators.pairwise import build_pairwise
from clinjudge.llm import LLMSettings

WIDE = Path(__file__).parent / "fixtures" / "arena" / "systems.csv"


def notes_shown(request: dict) -> tuple[str, str]:
    text = "\n".join(str(m.get("content", "")) for m in request["messages"])
    first = text.split("Note 1:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    second = text.split("Note 2:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    return first, second


def reply(winners: dict[str, str]) -> Reply:
    overall = winners.pop("overall")
    criteria = [{"criterion": c, "winner": w, "reason": "r"} for c, w in winners.items()]
    return Reply(json.dumps({"criteria": criteria, "overall": {"winner": overall, "reason": "r"}}))


def careful_but_first_on_clarity(request: dict) -> Reply:
    """Prefers the note without 'left' on every criterion, but clarity always to note 1."""
    first, second = notes_shown(request)
    better = "2" if re.search(r"\bleft\b", first, re.I) else "1"
    return reply({**dict.fromkeys(CRITERIA, better), "clarity": "1", "overall": better})


def judge(stub, **options) -> object:
    settings = LLMSettings(
        model="stub-pairwise", base_url=stub.base_url, timeout=5.0, max_retries=0
    )
    return build_pairwise(BuildOptions(backend="llm", settings=settings, options=options))


def pair_item() -> Item:
    meta = {"encounter": "e1", "a": "e1/good", "b": "e1/bad"}
    return Item(id="e1/good~bad", transcript="[doctor] your right knee.", note="", meta=meta)


def test_two_calls_per_pair_and_a_position_following_verdict_is_a_draw(openai_stub):
    openai_stub.script(careful_but_first_on_clarity)
    pairwise = judge(openai_stub)
    pairwise.use_texts({"e1/good": "Right knee pain.", "e1/bad": "Left knee pain."})
    row = asyncio.run(pairwise.evaluate(pair_item()))
    assert len(openai_stub.requests) == 2
    assert row["failure"] is None
    assert row["outcomes"]["safety"] == row["outcomes"]["overall"] == "a"
    assert row["outcomes"]["clarity"] == "draw" and row["follows_position"]["clarity"]
    assert not row["follows_position"]["safety"]
    assert pairwise.usage()["calls"] == 2
    # the reply shape the prompt shows names every criterion asked (a small model copies it)
    asked = "\n".join(str(m.get("content", "")) for m in openai_stub.requests[0]["messages"])
    for criterion in ("relevance", "completeness", "safety", "ethics", "clarity"):
        assert f'{{"criterion": "{criterion}", "winner": "1 or 2 or tie"' in asked


def test_a_reply_naming_no_winner_is_a_parse_failure(openai_stub):
    openai_stub.script(lambda request: reply({**dict.fromkeys(CRITERIA, "both"), "overall": "1"}))
    pairwise = judge(openai_stub, criteria="safety")
    pairwise.use_texts({"e1/good": "Right knee pain.", "e1/bad": "Left knee pain."})
    row = asyncio.run(pairwise.evaluate(pair_item()))
    assert row["outcomes"] is None and row["retry"]
    assert row["failure"]["kind"] == "parse_failure"


def test_a_reply_leaving_out_a_criterion_is_a_parse_failure(openai_stub):
    openai_stub.script(lambda request: reply({"safety": "1", "overall": "1"}))
    pairwise = judge(openai_stub, criteria="safety,completeness")
    pairwise.use_texts({"e1/good": "Right knee pain.", "e1/bad": "Left knee pain."})
    row = asyncio.run(pairwise.evaluate(pair_item()))
    assert row["failure"]["reason"] == "the reply named no winner for completeness"


def test_the_arena_on_a_model_judges_no_text_offline(openai_stub, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINJUDGE_MODEL", "stub-pairwise")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    openai_stub.script(careful_but_first_on_clarity)
    out = tmp_path / "run"
    args = ("arena", WIDE, "--systems", "reference,careless", "--backend", "llm", "--out", out)
    result = run(*args, "--replicates", 20, "--orders", 5)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["backend"] == "llm" and report["n_pairs"] == 2
    assert report["usage"]["calls_per_pair"] == 2.0
    # the stub reports 10 prompt and 5 completion tokens a call: 4 calls (issue 38)
    assert "model calls: 4 (2.00 per pair)" in result.stdout
    assert "40 prompt (0 from its cache), 20 completion" in " ".join(result.stdout.split())
    assert report["leaderboard"][0]["system"] == "reference"
    assert report["criteria"]["clarity"]["position_bias"]["rate"] == 1.0
    assert sorted(p.name for p in (out / "runs").glob("*.jsonl")) == ["pairwise.jsonl"]
    again = run(*args, "--replicates", 20, "--orders", 5)
    assert again.exit_code == 0 and len(openai_stub.requests) == 4  # resumed: no new call


def reasons_about_the_loser(request: dict) -> Reply:
    """Chooses the note without 'left', with a reason that begins with the other note — what
    a model copying an example reason about the worse note writes."""
    first, _ = notes_shown(request)
    better = "2" if re.search(r"\bleft\b", first, re.I) else "1"
    worse = "1" if better == "2" else "2"
    why = f"Note {worse} gives the wrong side."
    criteria = [{"criterion": c, "winner": better, "reason": why} for c in CRITERIA]
    return Reply(json.dumps({"criteria": criteria, "overall": {"winner": better, "reason": why}}))


def test_the_prompt_asks_for_the_chosen_note_first_and_the_pair_view_flags_a_reason_that_is_not(
    openai_stub, tmp_path, monkeypatch
):
    from browser_helpers import open_page

    from clinjudge.prompts import load_prompt

    prompt = load_prompt("pairwise.compare")
    assert prompt.version == "3" and "begins with the note you chose" in prompt.text
    assert "Note 2 gives 20 mg" not in prompt.text  # no example reason about one fixed note
    monkeypatch.setenv("CLINJUDGE_MODEL", "stub-pairwise")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    openai_stub.script(reasons_about_the_loser)
    out = tmp_path / "run"
    args = ("arena", WIDE, "--systems", "reference,careless", "--backend", "llm", "--out", out)
    result = run(*args, "--limit", 1)
    assert result.exit_code == 0, result.output
    with open_page(out / "report.html") as tab:
        tab.click("#pairs tbody tr >> nth=0")
        safety = tab.locator("#p-verdicts tr", has_text="safety").inner_text()
        assert "(the reason begins with the other note)" in safety
