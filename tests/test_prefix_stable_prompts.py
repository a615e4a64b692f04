"""Prompts a server can reuse (issue 38) for the omission judge, the fact-checker and the arena,
for real over HTTP (the loopback OpenAI-compatible stub): the calls about one visit or one answer
open with the same bytes and end with what differs, and the calls come back to back.

- omission: several systems' notes of one visit share the coverage prompt up to the note (the
  visit's facts come before it); ``omission.layout=note_first`` keeps the note before the facts;
- fact-checking: every query call, then every rating call, in claim order; with
  ``factcheck.evidence=pooled`` the ratings share the answer's evidence and end with the claim;
- arena: the pairs of one encounter, both orders, back to back, each call the same up to the end
  of the visit;
- a bad value of either option: exit 2 and one line.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run
from openai_stub import HttpError, Reply

from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.llm import LLMSettings, ResponseCache

FIXTURES = Path(__file__).parent / "fixtures"
VISIT = """[doctor] what brings you in today ?
[patient] chest pain for two days , and some nausea .
[doctor] any fever ?
[patient] no .
[doctor] i'll start aspirin 81 mg daily ."""
NOTES = {
    "reference": "HPI: Chest pain for two days with nausea. Denies fever. PLAN: Aspirin 81 mg.",
    "terse": "Chest pain. Aspirin.",
    "careless": "HPI: Chest pain with fever. PLAN: Aspirin 325 mg.",
}
FACTS = [
    ("Chest pain for two days.", "chest pain for two days"),
    ("Nausea.", "some nausea"),
    ("No fever.", "no ."),
    ("Aspirin 81 mg daily started.", "aspirin 81 mg daily"),
]


def text_of(request: dict) -> str:
    return "\n".join(str(m.get("content", "")) for m in request["messages"])


def common_prefix(texts: list[str]) -> str:
    return os.path.commonprefix(texts)


def settings(stub) -> LLMSettings:
    """One call in flight, as on a local model server."""
    return LLMSettings(
        model="stub-prefix", base_url=stub.base_url, max_retries=0, max_concurrent_calls=1
    )


# -- omission ----------------------------------------------------------------------------------
def omission_reply(request: dict) -> Reply:
    text = text_of(request)
    if "List the clinically relevant facts" in text:
        facts = [
            {"fact": f, "category": "symptom", "importance": "routine", "quote": q}
            for f, q in FACTS
        ]
        return Reply(json.dumps({"facts": facts}))
    ids = re.findall(r"^(f\d+): ", text, re.M)
    return Reply(json.dumps({"facts": [{"id": i, "status": "omitted"} for i in ids]}))


def judge_notes(stub, tmp_path, **options) -> list[str]:
    """The coverage prompts sent for the three notes of one visit, one after the other."""
    stub.script(omission_reply)
    build = BuildOptions(
        backend="llm",
        settings=settings(stub),
        cache=ResponseCache(tmp_path / "cache.sqlite"),
        options=options,
    )
    judge = build_evaluator("omission", build)
    for system, note in NOTES.items():
        row = asyncio.run(judge.evaluate(Item(id=f"e1/{system}", transcript=VISIT, note=note)))
        assert row["failure"] is None and row["n_facts"] == len(FACTS)
    texts = [text_of(r) for r in stub.requests]
    assert sum("List the clinically relevant facts" in t for t in texts) == 1  # once a visit
    return [t for t in texts if "List the clinically relevant facts" not in t]


def test_omission_notes_of_one_visit_share_the_prompt_up_to_the_note(openai_stub, tmp_path):
    coverage = judge_notes(openai_stub, tmp_path)
    assert len(coverage) == len(NOTES)
    shared = common_prefix(coverage)
    listing = "\n".join(f"f{i}: {fact}" for i, (fact, _) in enumerate(FACTS, start=1))
    assert shared.endswith(f"Facts:\n<<<\n{listing}\n>>>\n\nNote:\n<<<\n")
    for text, note in zip(coverage, NOTES.values(), strict=True):
        assert text.rstrip().endswith(f"<<<\n{note}\n>>>") and note not in shared
        assert text.index('"status": "covered"') < text.index(listing)  # the reply's form first


def test_omission_note_first_layout_keeps_the_earlier_prompt(openai_stub, tmp_path):
    from clinjudge.prompts import load_prompt

    coverage = judge_notes(openai_stub, tmp_path, layout="note_first")
    for text, note in zip(coverage, NOTES.values(), strict=True):
        assert text.index(note) < text.index("f1: Chest pain")
    old, new = load_prompt("omission.coverage_note_first"), load_prompt("omission.coverage")
    assert (old.version, new.version) == ("1", "2")


# -- fact-checking -----------------------------------------------------------------------------
ANSWER = (
    "Aspirin 650 mg daily is recommended for secondary prevention of stroke. "
    "Metformin is the first-line drug for type 2 diabetes. "
    "Lisinopril lowers blood pressure."
)
SENTENCES = re.findall(r"[^.]+\.", ANSWER)


def factcheck_reply(request: dict):
    text = text_of(request)
    if "prepare a medical answer for fact-checking" in text:
        claims = [{"text": s.strip(), "quote": s.strip(), "label": "relevant"} for s in SENTENCES]
        return json.dumps({"claims": claims})
    claim = text.rsplit("## Claim", 1)[1]
    if "You write search queries" in text:
        words = re.findall(r"[A-Z][a-z]+", claim)[:1]
        return json.dumps({"queries": [" ".join(words) or "drug"]})
    if "strict medical fact-checker" in text:
        ids = re.findall(r"^\[([^\]]+)\]", text, re.M)
        reply = {"addressed": True, "verdict": "supported", "evidence_ids": ids[-1:]}
        return json.dumps(reply | {"rationale": "r"})
    return HttpError(400, "unexpected prompt")


def factcheck_calls(stub, evidence: str) -> tuple[list[str], dict]:
    stub.script(factcheck_reply)
    options = {"corpus": str(FIXTURES / "factcheck" / "corpus.jsonl"), "k": 2}
    build = BuildOptions(
        backend="llm", settings=settings(stub), options=options | {"evidence": evidence}
    )
    judge = build_evaluator("factcheck", build)
    row = asyncio.run(judge.evaluate(Item(id="a", transcript="", note=ANSWER)))
    assert row["n_rated"] == len(SENTENCES), row
    return [text_of(r) for r in stub.requests], row


@pytest.mark.parametrize("evidence", ["per_claim", "pooled"])
def test_factcheck_asks_every_query_then_every_rating_in_claim_order(openai_stub, evidence):
    texts, row = factcheck_calls(openai_stub, evidence)
    stages = ["queries" if "You write search queries" in t else "rate" for t in texts[1:]]
    assert stages == ["queries"] * 3 + ["rate"] * 3
    rated = [t.rsplit("## Claim", 1)[1] for t in texts[4:]]
    for sentence, tail in zip(SENTENCES, rated, strict=True):
        assert sentence.strip() in tail
    assert row["claims"][0]["evidence"], "a claim reports the passages its own queries found"


def test_pooled_ratings_share_the_answers_evidence_and_end_with_the_claim(openai_stub):
    texts, row = factcheck_calls(openai_stub, "pooled")
    ratings = texts[4:]
    shared = common_prefix(ratings)
    assert shared.endswith("## Claim\n<<<\n")
    for text, sentence in zip(ratings, SENTENCES, strict=True):
        assert text[len(shared) :].rstrip() == f"{sentence.strip()}\n>>>"
    ids = re.findall(r"^\[([^\]]+)\]", shared, re.M)
    assert len(ids) == len(set(ids)) >= 2  # the claims' passages, each once
    # a claim's reported evidence: its own passages, then any pooled passage it cited
    for claim in row["claims"]:
        assert set(claim["cited"]) <= {p["id"] for p in claim["evidence"]}


def test_per_claim_ratings_read_only_their_own_passages(openai_stub):
    texts, _ = factcheck_calls(openai_stub, "per_claim")
    ratings = texts[4:]
    assert "## Claim" in common_prefix(ratings)  # the claim, then its own evidence, come last
    blocks = [set(re.findall(r"^\[([^\]]+)\]", t, re.M)) for t in ratings]
    assert all(len(b) <= 2 for b in blocks)


# -- arena -------------------------------------------------------------------------------------
def notes_shown(text: str) -> tuple[str, str]:
    first = text.split("Note 1:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    second = text.split("Note 2:\n<<<\n", 1)[1].split("\n>>>", 1)[0]
    return first, second


def test_arena_asks_the_pairs_of_an_encounter_back_to_back_sharing_the_visit(openai_stub, tmp_path):
    from clinjudge.arena_run import run_arena
    from clinjudge.cli.arena import load_arena_items
    from clinjudge.evaluators.pairwise import build_pairwise

    def prefers_first(request: dict) -> Reply:
        criteria = re.findall(r'"criterion": "([a-z]+)"', text_of(request))
        entries = [{"criterion": c, "winner": "1", "reason": "r"} for c in criteria]
        return Reply(json.dumps({"criteria": entries, "overall": {"winner": "1", "reason": "r"}}))

    openai_stub.script(prefers_first)
    systems = ["reference", "careless", "terse"]
    dataset = FIXTURES / "arena" / "systems.csv"
    command = {"dataset": str(dataset), "systems": systems, "system_column": None}
    data = load_arena_items(command | {"load": {"limit": None}})
    pairwise = build_pairwise(BuildOptions(backend="llm", settings=settings(openai_stub)))
    asyncio.run(run_arena(data, systems, {}, pairwise, tmp_path / "run", concurrency=1))
    texts = [text_of(r) for r in openai_stub.requests]
    encounters = list(dict.fromkeys(str(i.meta["encounter"]) for i in data.items))
    per_encounter = 3 * 2  # 3 pairs, both orders
    assert len(texts) == per_encounter * len(encounters)
    for e in range(len(encounters)):
        block = texts[e * per_encounter : (e + 1) * per_encounter]
        shared = common_prefix(block)
        assert "Visit:\n<<<\n" in shared and ">>>\n\nNote 1:\n<<<\n" in shared
        for k in range(0, per_encounter, 2):  # a pair's two orders, one after the other
            assert notes_shown(block[k]) == notes_shown(block[k + 1])[::-1]


def test_a_local_model_judges_one_item_at_a_time():
    from clinjudge.cli.common import run_concurrency

    class Judge:
        def __init__(self, provenance: dict) -> None:
            self._provenance = provenance

        def usage(self) -> dict:
            return {"calls": 0}

        def provenance(self) -> dict:
            return self._provenance

    assert run_concurrency({"pairwise": Judge({"local_model": {"model": "m"}})}, 4) == 1
    assert run_concurrency({"pairwise": Judge({})}, 4) == 4


# -- options -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("option", "needle"),
    [
        ("omission.layout=sideways", "unknown omission layout 'sideways'"),
        ("factcheck.evidence=everything", "unknown factcheck evidence 'everything'"),
    ],
)
def test_an_unknown_layout_or_evidence_mode_is_one_line_and_exit_2(tmp_path, option, needle):
    judge = option.split(".", 1)[0]
    args = ("compare", "aci-demo", "--limit", 1, "--judges", judge, "--backend", "offline")
    result = run(*args, "--option", option, "--out", tmp_path / "run")
    assert_one_line_error(result, needle)
