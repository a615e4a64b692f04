"""``clinjudge inject`` (clinjudge/cli/inject.py, SPEC §5): an offline run over the bundled
aci-demo set, the one-line errors for unknown types and types without an offline injector, a
resumed run, and the llm backend end to end against the loopback OpenAI-compatible stub."""

from __future__ import annotations

import json

import pytest
from cli_helpers import run
from openai_stub import Reply

from clinjudge.inject.pairs import read_pairs
from clinjudge.llm_cache import ResponseCache


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CLINJUDGE_MODEL", "CLINJUDGE_INJECT_MODEL_B"):
        monkeypatch.delenv(var, raising=False)


def test_offline_run_over_the_bundled_set_writes_pairs_stats_and_a_table(tmp_path):
    out = tmp_path / "pairs.jsonl"
    result = run("inject", "aci-demo", "--types", "dosage,trade_generic", "--limit", "3",
                 "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "acceptance per type" in result.output and "trade_generic" in result.output
    pairs = read_pairs(out)
    assert pairs and {p.type for p in pairs} <= {"dosage", "trade_generic"}
    assert all(p.backend == "offline" and p.pair_id == f"{p.source_id}:{p.type}" for p in pairs)
    stats = json.loads((tmp_path / "pairs.stats.json").read_text())
    assert stats["types"] == ["dosage", "trade_generic"]
    assert stats["total"]["attempted"] == 6
    assert stats["total"]["accepted"] == len(pairs)
    assert stats["provenance"]["backend"] == "offline" and stats["provenance"]["dataset_sha256"]
    outcomes = (tmp_path / "pairs.outcomes.jsonl").read_text().splitlines()
    assert len(outcomes) == 6
    again = run("inject", "aci-demo", "--types", "dosage,trade_generic", "--limit", "3",
                "--out", out)  # fmt: skip
    assert again.exit_code == 0 and (tmp_path / "pairs.outcomes.jsonl").read_text().count(
        "\n"
    ) == len(outcomes)


def test_unknown_type_is_a_one_line_error_listing_the_valid_ones(tmp_path):
    result = run("inject", "aci-demo", "--types", "dosage,typo", "--out", tmp_path / "p.jsonl")
    assert result.exit_code == 2
    (line,) = [ln for ln in result.output.splitlines() if ln.strip()]
    assert line.startswith("error: unknown injection type 'typo'; valid: all, errors, rewrites")
    assert "overconfidence" in line and "Traceback" not in result.output


def test_a_type_without_offline_injector_is_named(tmp_path):
    result = run("inject", "aci-demo", "--types", "causal_organism", "--out", tmp_path / "p.jsonl")
    assert result.exit_code == 2
    assert "error: type 'causal_organism' has no offline injector" in result.output
    assert not (tmp_path / "p.jsonl").exists()


def test_bad_backend_and_missing_second_model_are_one_line_errors(tmp_path, monkeypatch):
    result = run("inject", "aci-demo", "--backend", "magic", "--out", tmp_path / "p.jsonl")
    assert result.exit_code == 2 and "error: --backend must be one of offline, llm" in result.output
    monkeypatch.setenv("CLINJUDGE_MODEL", "model-a")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    result = run("inject", "aci-demo", "--backend", "llm", "--out", tmp_path / "p.jsonl")
    assert result.exit_code == 2 and "CLINJUDGE_INJECT_MODEL_B" in result.output


def test_llm_backend_end_to_end_over_the_stub(tmp_path, monkeypatch, openai_stub):
    def reply(request):
        text = "\n".join(str(m.get("content", "")) for m in request["messages"])
        if "Decide whether" in text:
            return Reply(json.dumps({"applicable": False, "reason": "no" + request["model"]}))
        return Reply("{}")

    openai_stub.script(reply)
    # the LLM reply cache goes to tmp (offline tests keep the default knowledge cache)
    monkeypatch.setattr("clinjudge.llm.ResponseCache", lambda: ResponseCache(tmp_path / "c.db"))
    monkeypatch.setenv("CLINJUDGE_MODEL", "model-a")
    monkeypatch.setenv("CLINJUDGE_INJECT_MODEL_B", "model-b")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_stub.base_url)
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    out = tmp_path / "llm.jsonl"
    result = run("inject", "aci-demo", "--backend", "llm", "--types", "overconfidence",
                 "--limit", "2", "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    stats = json.loads((tmp_path / "llm.stats.json").read_text())
    assert stats["per_type"]["overconfidence"]["not_applicable"] == 2
    assert stats["provenance"]["models"]["applicability_b"] == "model-b"
    assert len(openai_stub.requests) == 4 and out.read_text() == ""
    assert "OPENAI_API_KEY" not in json.dumps(stats)
