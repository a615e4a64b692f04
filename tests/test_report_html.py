"""``report.html`` of a compare run (issue 15): one self-contained page, checked for its data
and in a real headless browser (Debian's Chromium driven by Playwright): clicking a claim shows
that claim's verdicts and highlights its own evidence in the transcript, the flagged-claims
table filters, ``n`` moves to the next flagged claim, and no page error occurs."""

from __future__ import annotations

import pytest
from browser_helpers import open_page

from clinjudge.compare import run_compare_sync
from clinjudge.datasets import load_items
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.report.html_report import data_of_page


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    kb = KnowledgeBase.default()
    dataset = load_items("aci-demo", limit=2)
    judges = {
        name: build_evaluator(name, BuildOptions(backend="offline", knowledge=kb))
        for name in ("lexical", "inference-aware", "omission", "cef")
    }
    run_compare_sync(dataset, judges, out)
    return out, dataset


def test_the_page_is_self_contained_and_carries_every_claim_and_verdict(run):
    out, dataset = run
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html  # no CDN, nothing fetched
    data = data_of_page(html)
    assert data["soap_judges"] == ["lexical", "inference-aware"]
    assert {n["id"] for n in data["notes"]} == {i.id for i in dataset.items}
    for note in data["notes"]:
        item = next(i for i in dataset.items if i.id == note["id"])
        assert note["note"] == item.note
        for claim in note["claims"]:
            assert item.note[claim["start"] : claim["end"]] == claim["text"]
            assert set(claim["verdicts"]) == {"lexical", "inference-aware"}
            tiers = {v["tier"] >= 4 for v in claim["verdicts"].values()}
            assert claim["flip"] == (len(tiers) == 2)
    rates = [n["rates"]["lexical"] for n in data["notes"]]
    assert rates == sorted(rates, reverse=True)  # worst first


@pytest.fixture
def page(run):
    out, _ = run
    with open_page(out / "report.html") as tab:
        yield tab, out


def test_clicking_a_flagged_claim_shows_its_own_evidence(page, run):
    tab, out = page
    data = data_of_page((out / "report.html").read_text(encoding="utf-8"))
    row = tab.locator("#flagged tbody tr").first
    note_id, claim_id = row.get_attribute("data-note"), row.get_attribute("data-claim")
    row.click()
    tab.wait_for_selector("#detail:not([hidden])")
    note = next(n for n in data["notes"] if n["id"] == note_id)
    claim = next(c for c in note["claims"] if c["id"] == claim_id)
    assert claim["text"] in tab.locator("#d-title").inner_text()
    marks = tab.locator("#d-transcript mark.evidence").all_inner_texts()
    expected = {
        note["transcript"][s:e] for v in claim["verdicts"].values() for s, e in v["evidence"]
    }
    assert set(marks) <= expected and (marks or not expected)
    shown = tab.locator(f"#note-{note_id} .claim.current").first
    assert shown.inner_text() == claim["text"]
    tab.screenshot(path=str(out / "screenshot-claim.png"))


def test_scores_are_rounded_and_shown_with_their_interval(page, run):
    """CEF's headline read "91.88888888888889" with no interval."""
    import json
    import re

    tab, out = page
    report = json.loads((out / "report.json").read_text())
    rows = [r.all_inner_texts() for r in tab.locator("#rates tbody tr").all()]
    cef = {cells[1]: cells for cells in (r[0].split("\t") for r in rows) if cells[0] == "cef"}
    for metric, h in report["judges"]["cef"]["headline"].items():
        if h["value"] is None:
            continue
        _, _, value, ci, n = cef[metric]
        assert re.fullmatch(r"\d+(\.\d)?", value), value
        assert abs(float(value) - h["value"]) <= 0.05
        if h.get("ci95"):
            assert re.fullmatch(r"\d+(\.\d)?–\d+(\.\d)?", ci), ci
        assert n == str(h["n"])


def test_the_flagged_table_filters_and_n_moves_to_the_next_flagged_claim(page):
    tab, _ = page
    rows = tab.locator("#flagged tbody tr")
    total = rows.count()
    tab.select_option("#f-judge", "inference-aware")
    judged = rows.count()
    assert 0 < judged < total
    assert set(tab.locator("#flagged tbody tr td:nth-child(2)").all_inner_texts()) == {
        "inference-aware"
    }
    tab.fill("#f-text", "zzzz-no-such-claim")
    assert rows.count() == 0
    tab.evaluate("document.activeElement.blur()")  # keys typed in the filter box do not move
    tab.keyboard.press("n")
    tab.wait_for_selector("#detail:not([hidden])")
    assert tab.locator(".claim.current").count() >= 1


def test_report_md_lists_every_flagged_claim_with_why_and_evidence(run):
    out, _ = run
    markdown = (out / "report.md").read_text(encoding="utf-8")
    data = data_of_page((out / "report.html").read_text(encoding="utf-8"))
    flagged = [
        (c["text"], v["rationale"])
        for n in data["notes"]
        for c in n["claims"]
        for v in c["verdicts"].values()
        if v["tier"] >= 4
    ]
    assert "## Flagged claims" in markdown
    assert f"{len(flagged)} tier 4–5 claims" in markdown
    for text, _why in flagged[:20]:
        assert text[:60].replace("|", "\\|") in markdown


@pytest.fixture(scope="module")
def meta_run(tmp_path_factory):
    from pathlib import Path

    from clinjudge.inject.pairs import read_pairs
    from clinjudge.meta_eval import run_meta_eval_sync

    out = tmp_path_factory.mktemp("meta")
    pairs_path = Path(__file__).parent / "fixtures" / "meta_eval" / "pairs.jsonl"
    pairs = read_pairs(pairs_path)
    judge = build_evaluator("lexical", BuildOptions(backend="offline"))
    result = run_meta_eval_sync(pairs_path, pairs, {"lexical": judge}, out)
    return out, pairs, result


def test_the_meta_eval_page_marks_each_change_and_filters_by_kind(meta_run, page):
    out, pairs, result = meta_run
    tab, _ = page
    html = out / "report.html"
    assert html in result.files
    tab.goto(html.as_uri())
    tab.wait_for_selector("body[data-ready='1']")
    assert tab.locator("#f-count").inner_text() == f"{len(pairs)} of {len(pairs)} pairs"
    tab.wait_for_selector(".pair[data-rendered='1']")
    first = tab.locator(".pair").first
    assert first.locator("del.removed").inner_text() == pairs[0].before
    assert first.locator("ins.inserted").inner_text() == pairs[0].after
    rewrites = sum(p.kind == "rewrite" for p in pairs)
    tab.select_option("#f-kind", "rewrite")
    assert tab.locator("#f-count").inner_text() == f"{rewrites} of {len(pairs)} pairs"
    tab.screenshot(path=str(out / "screenshot.png"))
