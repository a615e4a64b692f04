"""Evidence turns, spans and paging of ``clinjudge label`` in headless Chromium (issue 37,
item 7): the transcript's turns are numbered from 1 as ``claims.csv`` numbers them; ``e`` cites
turns ("2, 4-5"), a click on a turn toggles it, cited turns are highlighted and come back on
resume; ``s`` marks the words selected in the unit as its span; on a 300-note run the page opens
on the first note and ``n`` / ``p`` fetch the others. Skipped without chromium unless
``CLINJUDGE_REQUIRE_BROWSER`` is set."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from browser_helpers import open_page
from label_helpers import Served, current, many_notes_run, press, serving

from clinjudge.text.transcript import parse_transcript

FIXTURE = Path(__file__).parent / "fixtures" / "agreement"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE / "run", tmp_path / "run"))


def saved(run_dir: Path) -> dict[int, dict]:
    path = run_dir / "labels" / "alice.jsonl"
    return {r["unit"]: r for r in map(json.loads, path.read_text("utf-8").splitlines())}


def cited(tab) -> list[int]:
    return [int(t.get_attribute("data-turn")) for t in tab.locator("#transcript .turn.cited").all()]


def test_turns_are_numbered_and_cited_by_key_and_click_and_resumed(run_dir):
    dialogue = json.loads(
        (FIXTURE.parents[2] / "eval_sets" / "aci-demo" / "data.jsonl").read_text().splitlines()[0]
    )["dialogue"]
    turns = [(t.start, t.end) for t in parse_transcript(dialogue).turns]  # as claims.csv
    with serving(run_dir) as server, open_page(Served(server.url)) as tab:
        numbers = tab.locator("#transcript .turn-no").all_inner_texts()
        assert numbers == [str(n) for n in range(1, len(turns) + 1)]
        start, end = turns[1]  # turn 2: the patient's greeting
        assert dialogue[start:end] in tab.locator("#transcript .turn[data-turn='2']").inner_text()
        press(tab, "1", "e")  # u1 supported; e opens the turns box
        assert tab.locator("#evidence").is_visible()
        tab.keyboard.type("2, 4-5")
        press(tab, "Enter")
        assert not tab.locator("#evidence").is_visible()
        assert cited(tab) == [2, 4, 5]
        tab.locator("#transcript .turn[data-turn='7']").click()  # a click cites turn 7
        tab.wait_for_selector("body[data-pending='0']")
        tab.locator("#transcript .turn[data-turn='4']").click()  # and takes turn 4 back
        tab.wait_for_selector("body[data-pending='0']")
        assert cited(tab) == [2, 5, 7]
        press(tab, "j", "2", "e")  # u3: a turn the transcript lacks is refused in the page
        tab.keyboard.type(f"3, {len(turns) + 1}")
        press(tab, "Enter")
        assert f"turn {len(turns) + 1} is not a turn" in tab.locator("#status").inner_text()
        press(tab, "Escape")  # cancels: nothing cited
        assert cited(tab) == []
        assert "evidence (e): turns 2, 5, 7" not in tab.locator("#u-extras").inner_text()
    rows = saved(run_dir)
    assert rows[1]["evidence"] == "T2, T5, T7" and rows[3]["evidence"] is None
    with serving(run_dir) as server, open_page(Served(server.url)) as tab:  # resumed
        press(tab, "k", "k")
        assert current(tab) == "1"
        press(tab, "?")  # the keys, the new ones among them
        keys = tab.locator("#help").inner_text()
        assert "cite transcript turns" in keys and "as its span" in keys
        press(tab, "Escape")
        assert cited(tab) == [2, 5, 7]
        assert "evidence (e): turns 2, 5, 7" in tab.locator("#u-extras").inner_text()


def test_a_selection_in_the_unit_is_marked_as_its_span(run_dir):
    with serving(run_dir) as server, open_page(Served(server.url)) as tab:
        press(tab, "j", "2")  # u3 unsupported
        unit = tab.locator("#note-text .unit[data-unit='3']")
        unit.select_text()  # the whole unit
        press(tab, "s")
        whole = "Ms. Hill is a 41-year-old female who presents today"
        assert saved(run_dir)[3]["span"].startswith(whole)
        unit.dblclick(position={"x": 3, "y": 5})  # a double click selects its first word
        press(tab, "s")
        assert saved(run_dir)[3]["span"] == "Ms"
        assert tab.locator("#note-text mark.span").inner_text() == "Ms"
        tab.locator("#note-text .unit[data-unit='4']").select_text()  # not the current unit
        tab.keyboard.press("s")
        assert "not inside unit 3" in tab.locator("#status").inner_text()
        assert saved(run_dir)[3]["span"] == "Ms"
    with serving(run_dir) as server, open_page(Served(server.url)) as tab:  # resumed
        assert tab.locator("#note-text .unit[data-unit='3'] mark.span").inner_text() == "Ms"


def test_a_run_of_300_notes_opens_on_its_first_note_and_fetches_the_others(tmp_path):
    run_dir, items = many_notes_run(tmp_path, 300)
    with serving(run_dir, items=items) as server, open_page(Served(server.url)) as tab:
        assert "S001" in tab.locator("#note-title").inner_text()
        assert "Synthetic copy 001 of" in tab.locator("#note-text").inner_text()
        assert "Synthetic copy 002" not in tab.content()  # only the first note is in the page
        assert tab.locator("#note-select option").count() == 300
        press(tab, "n")
        assert "S002" in tab.locator("#note-title").inner_text()
        assert "Synthetic copy 002 of" in tab.locator("#note-text").inner_text()
        assert "note 2 of 300" in tab.locator("#progress").inner_text()
        press(tab, "1", "p")
        assert "S001" in tab.locator("#note-title").inner_text()
        assert "all notes: 1/" in tab.locator("#progress").inner_text()
        tab.locator("#note-select").select_option("299")
        tab.wait_for_selector("body[data-pending='0']")
        assert "Synthetic copy 300 of" in tab.locator("#note-text").inner_text()
    assert saved(run_dir)[1]["encounter"] == "S002"
