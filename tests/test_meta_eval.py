"""Meta-evaluation numbers on a hand-built pair set (SPEC §4/§5, clinjudge.meta_eval), with a
test-only judge whose scores and flags are scripted per item: detection, differential
detection, false flags, paired AUROC with ties, exclusions, resume and identical-text reuse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clinjudge.datasets.items import Item
from clinjudge.errors import ConfigError
from clinjudge.inject.pairs import PairRecord
from clinjudge.meta_eval import item_id, pair_items, run_meta_eval
from clinjudge.meta_eval_scores import PairScore, score_pair, summarize_scores
from clinjudge.metrics.intervals import wilson_interval


class ScriptedJudge:
    """A judge whose row for each item id is scripted: ``(score, flagged spans)`` or an
    exception to raise. Records the ids it was asked to judge."""

    kind = "test"
    needs_source = False

    def __init__(self, name: str, script: dict[str, Any], version: int = 1) -> None:
        self.name = name
        self.script = script
        self.version = version
        self.calls: list[str] = []

    def identity(self) -> dict[str, Any]:
        return {"judge": self.name, "version": self.version}

    def provenance(self) -> dict[str, Any]:
        return self.identity()

    def usage(self) -> dict[str, int] | None:
        return None

    async def evaluate(self, item: Item) -> dict[str, Any]:
        self.calls.append(item.id)
        entry = self.script[item.id]
        if isinstance(entry, Exception):
            raise entry
        score, flags = entry
        return {"id": item.id, "score": score, "flags": [list(f) for f in flags]}

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        return {"kind": self.kind, "headline": {}}

    def item_scores(self, row: dict[str, Any]) -> dict[str, Any]:
        return {"score": row["score"]}

    def score(self, row: dict[str, Any]) -> float | None:
        return row["score"]

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]:
        return [(a, b) for a, b in row["flags"]]

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        return []


def make_pair(pair_id: str, source_id: str, kind: str, type_: str, original: str, before: str,
              after: str, source: str = "transcript") -> PairRecord:  # fmt: skip
    a = original.index(before)
    b = a + len(before)
    edited = original[:a] + after + original[b:]
    return PairRecord(
        pair_id=pair_id,
        source_id=source_id,
        kind=kind,
        type=type_,
        source=source,
        original=original,
        edited=edited,
        original_span=(a, b),
        edited_span=(a, a + len(after)),
        before=before,
        after=after,
        meta={"origin": source_id},
    )


# Every original is distinct, so every item is judged on its own (no identical-text reuse).
PAIRS = [
    make_pair("e1", "s1", "error", "dose", "E1 take 10 mg daily.", "10 mg", "20 mg"),
    make_pair("e2", "s2", "error", "dose", "E2 take 5 mg daily.", "5 mg", "50 mg"),
    make_pair("e3", "s2", "error", "side", "E3 right knee pain.", "right", "left"),
    make_pair("e4", "s3", "error", "side", "E4 right hip pain.", "right", "left"),
    make_pair("e5", "s3", "error", "side", "E5 left eye pain.", "left", "right"),
    make_pair("r1", "s1", "rewrite", "brand", "R1 lisinopril daily.", "lisinopril", "Zestril"),
    make_pair("r2", "s4", "rewrite", "brand", "R2 atorvastatin daily.", "atorvastatin", "Lipitor"),
    make_pair("r3", "s4", "rewrite", "abbr", "R3 twice a day.", "twice a day", "BID"),
]
ORIG, EDIT = "original", "edited"
SCRIPT: dict[str, Any] = {
    # e1: flagged only after the edit, original scored higher -> detected, differential, win
    item_id("e1", ORIG): (1.0, []),
    item_id("e1", EDIT): (0.5, [(0, 20)]),
    # e2: flagged at the place on both sides, same score -> detected, not differential, tie
    item_id("e2", ORIG): (0.8, [(3, 10)]),
    item_id("e2", EDIT): (0.8, [(3, 11)]),
    # e3: a flag elsewhere only, edited scored higher -> missed, loss
    item_id("e3", ORIG): (0.6, []),
    item_id("e3", EDIT): (0.9, [(0, 2)]),
    # e4: the edited side's call raises -> out of the rate and of the AUROC
    item_id("e4", ORIG): (1.0, []),
    item_id("e4", EDIT): RuntimeError("judge exploded"),
    # e5: the original's call raises -> detected, but no differential and no AUROC
    item_id("e5", ORIG): RuntimeError("judge exploded"),
    item_id("e5", EDIT): (0.5, [(3, 8)]),
    # r1: the rewrite is flagged (a false flag) and scored lower -> win for the original
    item_id("r1", ORIG): (1.0, []),
    item_id("r1", EDIT): (0.5, [(3, 10)]),
    # r2: left alone, same score -> no false flag, tie
    item_id("r2", ORIG): (0.9, []),
    item_id("r2", EDIT): (0.9, []),
    # r3: nothing scored on the edited side -> excluded everywhere
    item_id("r3", ORIG): (1.0, []),
    item_id("r3", EDIT): (None, []),
}


@pytest.fixture
def judge() -> ScriptedJudge:
    return ScriptedJudge("scripted", dict(SCRIPT))


def pairs_file(tmp_path: Path, pairs: list[PairRecord] = PAIRS) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(p.model_dump_json() + "\n" for p in pairs), encoding="utf-8")
    return path


async def run(tmp_path: Path, judges: dict, pairs: list[PairRecord] = PAIRS, out: str = "out"):
    return await run_meta_eval(pairs_file(tmp_path, pairs), pairs, judges, tmp_path / out,
                               concurrency=2, n_resamples=300)  # fmt: skip


def test_each_pair_gives_an_original_and_an_edited_item():
    items = pair_items(PAIRS[:2])
    assert [i.id for i in items] == ["e1#original", "e1#edited", "e2#original", "e2#edited"]
    assert items[0].note == PAIRS[0].original and items[1].note == PAIRS[0].edited
    assert items[1].transcript == "transcript" and items[1].meta == {"origin": "s1"}


def test_score_pair_applies_the_overlap_rules(judge):
    rows = {k: {"id": k, "score": v[0], "flags": v[1]} for k, v in SCRIPT.items()
            if not isinstance(v, Exception)}  # fmt: skip
    e1 = score_pair(PAIRS[0], "scripted", judge, rows)
    assert (e1.flagged, e1.differential, e1.u) == (True, True, 1.0)
    assert e1.flags_edited == [{"start": 0, "end": 20, "text": PAIRS[0].edited}]
    e2 = score_pair(PAIRS[1], "scripted", judge, rows)
    assert (e2.flagged, e2.differential, e2.u) == (True, False, 0.5)
    e3 = score_pair(PAIRS[2], "scripted", judge, rows)
    assert (e3.flagged, e3.differential, e3.u) == (False, False, 0.0)
    e4 = score_pair(PAIRS[3], "scripted", judge, rows, {"e4#edited": "RuntimeError: boom"})
    assert (e4.flagged, e4.differential, e4.u) == (None, None, None)
    assert e4.missing == {"edited": "RuntimeError: boom"}
    r3 = score_pair(PAIRS[7], "scripted", judge, rows)
    assert r3.flagged is None and r3.missing["edited"].startswith("nothing scored")


def test_a_deletion_is_flagged_by_a_span_containing_its_point(judge):
    pair = make_pair("d1", "s9", "error", "omission", "D1 no aspirin. Walks daily.", " no aspirin",
                     "")  # fmt: skip
    assert pair.edited_span == (2, 2)
    rows = {"d1#original": {"id": "d1#original", "score": 1.0, "flags": []},
            "d1#edited": {"id": "d1#edited", "score": 0.5, "flags": [[0, 3]]}}  # fmt: skip
    assert score_pair(pair, "scripted", judge, rows).flagged is True
    rows["d1#edited"]["flags"] = [[3, 10]]
    assert score_pair(pair, "scripted", judge, rows).flagged is False


async def test_numbers_per_type_and_overall_are_exact(tmp_path, judge):
    result = await run(tmp_path, {"scripted": judge})
    report = result.report
    by_type = report["by_type"]
    assert list(by_type) == ["dose", "side", "brand", "abbr"]

    dose = by_type["dose"]
    assert (dose["kind"], dose["n"], dose["n_judged"], dose["flagged"]) == ("error", 2, 2, 2)
    assert dose["detection_rate"] == dose["rate"] == 1.0 and "false_flag_rate" not in dose
    assert (dose["differential"], dose["differential_n"], dose["differential_rate"]) == (1, 2, 0.5)
    assert (dose["auroc"], dose["win"], dose["tie"], dose["loss"]) == (0.75, 0.5, 0.5, 0.0)

    side = by_type["side"]
    assert (side["n"], side["n_judged"], side["excluded"], side["flagged"]) == (3, 2, 1, 1)
    assert side["detection_rate"] == 0.5
    assert (side["differential"], side["differential_n"]) == (0, 1)
    assert (side["auroc"], side["auroc_n"], side["auroc_excluded"]) == (0.0, 1, 2)

    brand = by_type["brand"]
    assert brand["kind"] == "rewrite" and brand["false_flag_rate"] == 0.5
    assert "detection_rate" not in brand
    assert (brand["auroc"], brand["win"], brand["tie"]) == (0.75, 0.5, 0.5)

    abbr = by_type["abbr"]
    assert (abbr["n"], abbr["n_judged"], abbr["excluded"]) == (1, 0, 1)
    assert abbr["false_flag_rate"] is None and abbr["ci95"] is None
    assert (abbr["auroc"], abbr["auroc_n"], abbr["auroc_excluded"]) == (None, 0, 1)

    errors, rewrites = report["overall"]["errors"], report["overall"]["rewrites"]
    assert (errors["n"], errors["n_judged"], errors["flagged"], errors["excluded"]) == (5, 4, 3, 1)
    assert errors["detection_rate"] == 0.75
    assert errors["wilson95"] == pytest.approx(wilson_interval(3, 4))
    assert (errors["differential"], errors["differential_n"]) == (1, 3)
    assert errors["auroc"] == pytest.approx(0.5) and errors["auroc_n"] == 3
    assert errors["win"] == errors["tie"] == errors["loss"] == pytest.approx(1 / 3)
    assert (rewrites["n"], rewrites["n_judged"], rewrites["false_flag_rate"]) == (3, 2, 0.5)
    assert (rewrites["auroc"], rewrites["auroc_excluded"]) == (0.75, 1)

    # the rate's interval is a bootstrap over pairs clustered by source note, and three notes
    # are too few for one (it collapsed to a point: "AUROC 0.833 [0.83, 0.83]")
    assert errors["ci95"] is None and errors["auroc_ci95"] is None
    assert errors["ci_note"] == "n too small"
    assert "n too small" in (tmp_path / "out" / "report.md").read_text()

    failed = report["failed_items"]["scripted"]
    assert set(failed) == {"e4#edited", "e5#original"}
    assert "judge exploded" in failed["e4#edited"]


async def test_report_files_and_the_first_judge_on_top(tmp_path, judge):
    strict = ScriptedJudge("strict", {k: (0.0, [(0, 40)]) for k in SCRIPT})
    result = await run(tmp_path, {"scripted": judge, "strict": strict})
    out = tmp_path / "out"
    report = json.loads((out / "report.json").read_text())
    assert report["overall"] == report["judges"]["scripted"]["overall"]
    assert report["by_type"] == report["judges"]["scripted"]["by_type"]
    assert report["pairs"]["n"] == 8 and report["pairs"]["by_kind"] == {"error": 5, "rewrite": 3}
    assert report["judges"]["strict"]["overall"]["rewrites"]["false_flag_rate"] == 1.0
    assert report["judges"]["strict"]["overall"]["errors"]["auroc"] == 0.5  # all ties
    assert "strict" not in report["failed_items"]
    for name in ("report.md", "detection.png", "false_flags.png", "auroc.png", "run.json"):
        assert (out / name).is_file(), name
    assert (out / "runs" / "strict.jsonl").is_file()
    lines = [json.loads(x) for x in (out / "pairs_scored.jsonl").read_text().splitlines()]
    assert len(lines) == 16 and {x["judge"] for x in lines} == {"scripted", "strict"}
    e1 = next(x for x in lines if x["pair_id"] == "e1" and x["judge"] == "scripted")
    assert (e1["score_original"], e1["score_edited"], e1["flagged"]) == (1.0, 0.5, True)
    assert e1["edited_span"] == [8, 13] and e1["after"] == "20 mg"
    assert "| side | strict |" in (out / "report.md").read_text()
    assert isinstance(result.scores["strict"][0], PairScore)


async def test_resume_judges_only_what_is_missing(tmp_path, judge):
    await run(tmp_path, {"scripted": judge})
    assert len(judge.calls) == 16
    fixed = dict(SCRIPT)
    fixed[item_id("e4", EDIT)] = (0.2, [(3, 7)])
    fixed[item_id("e5", ORIG)] = (1.0, [])
    again = ScriptedJudge("scripted", fixed)
    result = await run(tmp_path, {"scripted": again})
    assert sorted(again.calls) == ["e4#edited", "e5#original"]  # only the failed items
    side = result.report["by_type"]["side"]
    assert (side["n_judged"], side["flagged"], side["auroc_n"]) == (3, 2, 3)
    assert result.report["failed_items"] == {}
    assert result.report["resumed_items"] == {"scripted": 14}


async def test_another_configuration_in_the_same_directory_is_refused(tmp_path, judge):
    await run(tmp_path, {"scripted": judge})
    with pytest.raises(ConfigError, match="holds another run: judge .scripted. ran with"):
        await run(tmp_path, {"scripted": ScriptedJudge("scripted", SCRIPT, version=2)})


async def test_identical_texts_are_judged_once(tmp_path):
    note = "Take 10 mg of lisinopril daily."
    pairs = [
        make_pair("a", "n1", "error", "dose", note, "10 mg", "20 mg"),
        make_pair("b", "n1", "rewrite", "brand", note, "lisinopril", "Zestril"),
    ]
    script = {item_id(p, s): (1.0, []) for p in "ab" for s in (ORIG, EDIT)}
    judge = ScriptedJudge("scripted", script)
    result = await run(tmp_path, {"scripted": judge}, pairs)
    assert sorted(judge.calls) == ["a#edited", "a#original", "b#edited"]
    rows = [json.loads(x) for x in (tmp_path / "out/runs/scripted.jsonl").read_text().splitlines()]
    reused = next(r for r in rows if r["id"] == "b#original")
    assert reused["same_as"] == "a#original"
    assert result.report["by_type"]["brand"]["auroc"] == 0.5


async def test_a_judge_needing_a_source_refuses_pairs_without_one(tmp_path, judge):
    judge.needs_source = True
    pairs = [make_pair("x", "s", "error", "dose", "Take 10 mg.", "10 mg", "20 mg", source="")]
    with pytest.raises(ConfigError, match="no source text"):
        await run(tmp_path, {"scripted": judge}, pairs)


def test_summary_without_pairs_of_a_kind_reports_none():
    only_errors = [
        PairScore("p", "s", "error", "dose", "j", "1", "2", 1.0, 0.0, flagged=True, u=1.0)
    ]
    summary = summarize_scores(only_errors, n_resamples=50)
    assert summary["overall"]["rewrites"]["n"] == 0
    assert summary["overall"]["rewrites"]["false_flag_rate"] is None
    assert summary["overall"]["errors"]["detection_rate"] == 1.0


async def test_blocks_by_injector_and_the_pairs_each_judge_got_wrong(tmp_path, judge):
    pairs = [p.model_copy(update={"meta": {"injector": f"{p.type}_inj"}}) for p in PAIRS[:5]]
    pairs += PAIRS[5:]  # the rewrites name no injector
    result = await run(tmp_path, {"scripted": judge}, pairs)
    scripted = result.report["judges"]["scripted"]
    assert list(scripted["by_injector"]) == ["dose_inj", "side_inj"]
    side = scripted["by_injector"]["side_inj"]
    assert side["type"] == "side" and (side["n"], side["n_judged"], side["flagged"]) == (3, 2, 1)
    assert side == {"type": "side", **scripted["by_type"]["side"]}
    examples = scripted["examples"]
    # e3 is the only judged error not flagged at its span; r1 the only rewrite flagged at it
    assert [e["pair_id"] for e in examples["missed_errors"]] == ["e3"]
    assert [e["pair_id"] for e in examples["false_flags"]] == ["r1"]
    assert examples["false_flags"][0] | {"score_original": 1.0} == {
        "pair_id": "r1", "type": "brand", "before": "lisinopril", "after": "Zestril",
        "score_original": 1.0, "score_edited": 0.5,
    }  # fmt: skip
    md = (tmp_path / "out" / "report.md").read_text()
    assert "## By offline injector" in md and "| side_inj | side | scripted | 3 |" in md
    assert "### scripted: errors not flagged" in md and "`right` | `left`" in md
    assert "### scripted: rewrites flagged" in md and "`Zestril`" in md


async def test_without_injectors_or_mistakes_the_sections_are_left_out(tmp_path):
    perfect = {k: (1.0, []) if k.endswith(ORIG) else (0.0, [(0, 40)]) for k in SCRIPT}
    perfect |= {item_id(p, EDIT): (1.0, []) for p in ("r1", "r2", "r3")}
    result = await run(tmp_path, {"scripted": ScriptedJudge("scripted", perfect)})
    scripted = result.report["judges"]["scripted"]
    assert scripted["by_injector"] == {}
    assert scripted["examples"] == {"missed_errors": [], "false_flags": []}
    md = (tmp_path / "out" / "report.md").read_text()
    assert "By offline injector" not in md and "went wrong" not in md


async def test_types_made_only_of_deletions_are_counted_and_get_a_caveat(tmp_path):
    pairs = [
        make_pair(
            "o1", "s1", "error", "omission", "O1 no aspirin. Walks daily.", " no aspirin", ""
        ),
        make_pair("o2", "s2", "error", "omission", "O2 chest pain. Walks.", " chest pain.", ""),
        make_pair("d1", "s3", "error", "dose", "D1 take 10 mg daily.", "10 mg", "20 mg"),
    ]
    script = {item_id(p.pair_id, s): (1.0, []) for p in pairs for s in (ORIG, EDIT)}
    result = await run(tmp_path, {"scripted": ScriptedJudge("scripted", script)}, pairs)
    by_type = result.report["by_type"]
    assert by_type["omission"]["deletions"] == 2 and by_type["dose"]["deletions"] == 0
    assert result.report["overall"]["errors"]["deletions"] == 2
    md = (tmp_path / "out" / "report.md").read_text()
    assert "**Deletions** (`omission`)" in md and "`dose`" not in md.split("**Deletions**")[1][:40]
