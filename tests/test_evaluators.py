"""The Evaluator interface behind ``compare`` and ``meta-eval``: the SOAP adapter's rows, scores
and flags; resumable runs with retry rows; mixed judge kinds in one compare report; answer
datasets without a source column."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from clinjudge.compare import run_compare_sync
from clinjudge.datasets import load_items
from clinjudge.datasets.items import Dataset, DatasetError, Item
from clinjudge.errors import ConfigError
from clinjudge.evaluators import BuildOptions, build_evaluator, parse_judge_names
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.runner import run_evaluator

FIXTURES = Path(__file__).parent / "fixtures" / "soap"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


@pytest.fixture(scope="module")
def item() -> Item:
    transcript = (FIXTURES / "transcript.txt").read_text()
    note = (FIXTURES / "note.txt").read_text()
    note = note.replace("right knee with mild", "left knee with mild")
    return Item(id="e1", transcript=transcript, note=note)


def test_soap_evaluator_row_score_and_flags(kb, item):
    judge = build_evaluator("inference-aware", BuildOptions(backend="offline", knowledge=kb))
    row = asyncio.run(judge.evaluate(item))
    assert row["id"] == "e1" and row["note_id"] == "e1"
    scores = judge.item_scores(row)
    rate = scores["hallucination_rate"]
    assert scores["n_hallucinated"] >= 1  # the flipped laterality
    assert judge.score(row) == pytest.approx(1 - rate)
    spans = judge.flagged_spans(row)
    assert len(spans) == scores["n_hallucinated"]
    assert any("left knee" in item.note[a:b] for a, b in spans)
    lines = judge.verdict_lines(row)
    assert [line["claim_id"] for line in lines] == [c["id"] for c in row["claims"]]
    assert all(line["id"] == "e1" and line["judge"] == "inference-aware" for line in lines)
    summary = judge.summarize([row])
    assert summary["kind"] == "soap"
    assert summary["headline"]["hallucination_rate"]["value"] == pytest.approx(rate)
    assert judge.usage() is None and judge.identity()["backend"] == "offline"


def test_registry_rejects_unknown_and_repeated_names():
    assert parse_judge_names(" lexical , cef ") == ["lexical", "cef"]
    with pytest.raises(ConfigError, match="magic"):
        parse_judge_names("lexical,magic")
    with pytest.raises(ConfigError, match="twice"):
        parse_judge_names("cef,cef")
    with pytest.raises(ConfigError, match="no judge"):
        parse_judge_names(" , ")
    with pytest.raises(ConfigError, match="unknown judge"):
        build_evaluator("nope")


class LengthJudge:
    """A test-only judge: scores a text by its length; rows of items whose id is in ``flaky``
    are marked for retry the first time."""

    name = "length"
    kind = "length"
    needs_source = False

    def __init__(self, flaky: set[str] = frozenset()) -> None:
        self.calls: list[str] = []
        self.flaky = set(flaky)

    def identity(self) -> dict[str, Any]:
        return {"kind": "length"}

    def provenance(self) -> dict[str, Any]:
        return {"backend": "offline"}

    def usage(self) -> dict[str, int] | None:
        return None

    async def evaluate(self, item: Item) -> dict[str, Any]:
        self.calls.append(item.id)
        retry = item.id in self.flaky
        self.flaky.discard(item.id)
        return {"id": item.id, "length": len(item.note), "retry": retry}

    def summarize(self, rows):
        mean = sum(r["length"] for r in rows) / len(rows)
        return {"kind": self.kind, "headline": {"length": {"value": mean, "ci95": None, "n": 2}}}

    def item_scores(self, row):
        return {"length": row["length"]}

    def score(self, row):
        return float(row["length"])

    def flagged_spans(self, row):
        return []

    def verdict_lines(self, row):
        return [{"id": row["id"], "judge": self.name, "length": row["length"]}]


def test_run_evaluator_resumes_and_reruns_retry_rows(tmp_path):
    items = [Item(id=f"i{k}", transcript="", note="x" * (k + 1)) for k in range(3)]
    out = tmp_path / "runs" / "length.jsonl"
    judge = LengthJudge(flaky={"i1"})
    first = asyncio.run(run_evaluator(judge, items, out_path=out))
    assert [r["id"] for r in first.rows] == ["i0", "i1", "i2"]  # i1 is reported, and
    assert first.rows[1]["retry"]  # asks to be run again
    second = asyncio.run(run_evaluator(judge, items, out_path=out))
    assert judge.calls.count("i0") == 1 and judge.calls.count("i1") == 2
    assert [r["id"] for r in second.rows] == ["i0", "i1", "i2"] and second.resumed == 2


def test_one_visits_notes_are_judged_back_to_back_and_reported_in_file_order(tmp_path):
    """Two systems' notes of two visits, loaded system by system (as ``--systems`` columns
    load): each visit's notes are judged one after the other (a server keeping its previous
    prefix reads the transcript once for both), the rows come back in the file's order."""
    items = [
        Item(id=f"{visit}/{system}", transcript=f"transcript of {visit}", note=system)
        for system in ("sys_a", "sys_b")
        for visit in ("v1", "v2")
    ]
    judge = LengthJudge()
    result = asyncio.run(run_evaluator(judge, items, out_path=tmp_path / "rows.jsonl"))
    assert judge.calls == ["v1/sys_a", "v1/sys_b", "v2/sys_a", "v2/sys_b"]
    assert [r["id"] for r in result.rows] == ["v1/sys_a", "v2/sys_a", "v1/sys_b", "v2/sys_b"]


def test_compare_reports_soap_and_other_kinds_side_by_side(tmp_path, kb, item):
    data = Dataset(name="t", path=tmp_path / "d.jsonl", items=[item], sha256="0")
    judges = {
        "lexical": build_evaluator("lexical", BuildOptions(backend="offline", knowledge=kb)),
        "length": LengthJudge(),
    }
    result = run_compare_sync(data, judges, tmp_path / "out", concurrency=1)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["judges"]["length"]["headline"]["length"]["value"] == len(item.note)
    assert report["per_item"][0]["length"] == {"length": len(item.note)}
    assert "hallucination_rate" in report["per_item"][0]["lexical"]
    assert report["paired"] == []  # one SOAP judge: nothing to pair
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "## Scores" in markdown and "| length |" in markdown
    assert (tmp_path / "out" / "scores.png").exists() and result.files
    lines = (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()
    assert {json.loads(line)["judge"] for line in lines} == {"lexical", "length"}


def test_a_judge_needing_a_source_refuses_items_without_one(tmp_path, kb):
    data = Dataset(
        name="t",
        path=tmp_path / "d.jsonl",
        items=[Item(id="a", transcript="", note="Plan: start metformin.")],
        sha256="0",
    )
    judges = {"lexical": build_evaluator("lexical", BuildOptions(backend="offline", knowledge=kb))}
    with pytest.raises(ConfigError, match="no source text"):
        run_compare_sync(data, judges, tmp_path / "out")


def test_answer_datasets_load_without_a_source_column(tmp_path):
    path = tmp_path / "answers.jsonl"
    rows = [
        {"id": "q1", "question": "Dose?", "answer": "Take 5 mg.", "evidence": ["5 mg daily"]},
        {"id": "q2", "question": "Why?", "answer": "Because.", "evidence": "[]"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_items(path, require_source=False)
    assert [i.note for i in data.items] == ["Take 5 mg.", "Because."]
    assert data.items[0].transcript == "" and data.items[0].meta["question"] == "Dose?"
    assert data.items[0].meta["evidence"] == ["5 mg daily"]
    with pytest.raises(DatasetError, match="transcript"):
        load_items(path)


def test_api_evaluate_scores_one_text_with_any_judge(kb):
    from clinjudge.api import evaluate

    row = evaluate(
        "factcheck",
        "Metformin is first-line therapy for type 2 diabetes. Take 5000 mg of metformin daily.",
        meta={
            "evidence": [
                "Metformin is the first-line drug for type 2 diabetes; usual doses "
                "are 500 to 2000 mg per day."
            ]
        },
        options=BuildOptions(backend="offline", knowledge=kb),
    )
    verdicts = {c["text"]: c["verdict"] for c in row["claims"]}
    assert verdicts["Take 5000 mg of metformin daily."] == "not_supported"
    assert verdicts["Metformin is first-line therapy for type 2 diabetes."] == "supported"
    assert row["unsupported_rate"] == 0.5


def test_offline_soap_identity_changes_with_the_verifier_settings():
    from clinjudge.api import make_setup
    from clinjudge.evaluators.soap import SoapEvaluator
    from clinjudge.judges.offline import OfflineConfig, OfflineVerifier

    setup = make_setup("inference-aware", "offline")
    first = SoapEvaluator("inference-aware", setup).identity()
    assert first["verifier"]["combiner"] and first["knowledge"]
    assert first["verifier"]["pair_model"]  # the pair scorer's digest
    other = OfflineVerifier("inference-aware", setup.verifier.kb, OfflineConfig(combiner=False))
    setup.provenance.verifier = other.fingerprint()
    assert SoapEvaluator("inference-aware", setup).identity() != first


def test_api_refuses_empty_texts_and_a_missing_source(kb):
    from clinjudge.api import evaluate, judge_note

    with pytest.raises(ValueError, match="transcript is empty"):
        judge_note("", "Plan: start metformin.", backend="offline")
    with pytest.raises(ValueError, match="note is empty"):
        judge_note("[doctor] hello .", "  ", backend="offline")
    with pytest.raises(ValueError, match="source .*'cef'"):
        evaluate("cef", "Knee pain.", options=BuildOptions(backend="offline", knowledge=kb))


def test_api_evaluate_of_a_soap_judge_returns_its_rate(kb, item):
    from clinjudge.api import evaluate

    row = evaluate(
        "inference-aware",
        item.note,
        source=item.transcript,
        options=BuildOptions(backend="offline", knowledge=kb),
    )
    assert 0 < row["hallucination_rate"] < 1 and row["n_claims"] == len(row["claims"])
