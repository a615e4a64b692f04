"""``clinjudge label`` in a real browser (issue 26, item 3): headless Chromium (Debian's, driven
by Playwright through ``browser_helpers``) labels a note of the agreement fixture's run with the
keyboard; the labels are on disk at once, a new server over the same directory shows them and
starts at the first unlabelled unit, and ``clinjudge agreement`` on the label file gives the
numbers worked out by hand from the label choices — before and after one label is changed in the
page. Skipped without chromium unless ``CLINJUDGE_REQUIRE_BROWSER`` is set."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from browser_helpers import open_page
from cli_helpers import run
from label_helpers import Served, current, press, serving

FIXTURE = Path(__file__).parent / "fixtures" / "agreement"


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE / "run", tmp_path / "run"))


def unit_class(tab, unit: int) -> set[str]:
    return set(tab.locator(f"#note-text .unit[data-unit='{unit}']").get_attribute("class").split())


def agreement(run_dir: Path, out: Path) -> dict:
    labels = run_dir / "labels" / "alice.jsonl"
    result = run("agreement", run_dir, "--labels", labels, "--out", out, "--resamples", 100)
    assert result.exit_code == 0, result.output
    return json.loads((out / "agreement.json").read_text())["judges"][0]


def test_a_note_labelled_with_the_keyboard_is_saved_resumed_and_scored(run_dir, tmp_path):
    with serving(run_dir) as server, open_page(Served(server.url)) as tab:
        assert current(tab) == "1"  # D2N005's first text unit ("CC:" is a header)
        assert tab.locator("#verdicts").count() == 0  # blind
        assert "tenderness the patient denied" not in tab.content()
        # The lexical judge flags units 3, 6, 10 and 17 of D2N005; unit 16 is unjudged.
        press(tab, "1", "j")  # u1 supported
        press(tab, "2", "j")  # u3 unsupported (minor by default): flagged → TP
        press(tab, "1", "j", "k", "j")  # u4 supported; k goes back to u4, j on to u6
        assert current(tab) == "6"
        press(tab, "2", "m", "j")  # u6 unsupported, major: TP
        press(tab, "1", "m", "j")  # u8 supported (m does nothing: no severity)
        press(tab, "1", "j")  # u10 supported but flagged: FP
        press(tab, "2", "c")  # u12 unsupported, not flagged: FN; c opens the comment
        tab.keyboard.type("three views are not in the visit")
        press(tab, "Enter", "j")
        press(tab, "1", "j", "1", "j")  # u14, u16 supported (u16 unjudged: left out)
        press(tab, "3", "c")  # u17 contradicted (minor): TP; a comment begun, then Esc cancels it
        tab.keyboard.type("not meant")
        press(tab, "Escape")
        assert tab.locator("#comment").input_value() == ""
        press(tab, "j")
        press(tab, "1", "j", "1")  # u18, u19 supported: TN
        press(tab, "?")
        assert tab.locator("#help").is_visible()
        press(tab, "Escape")
        assert not tab.locator("#help").is_visible()
        tab.screenshot(path=str(tmp_path / "labelled.png"))

    saved = [json.loads(line) for line in (run_dir / "labels" / "alice.jsonl").open()]
    assert [(r["unit"], r["label"], r["severity"]) for r in saved] == [
        (1, "supported", None),
        (3, "unsupported", "minor"),
        (4, "supported", None),
        (6, "unsupported", "major"),
        (8, "supported", None),
        (10, "supported", None),
        (12, "unsupported", "minor"),
        (14, "supported", None),
        (16, "supported", None),
        (17, "contradicted", "minor"),
        (18, "supported", None),
        (19, "supported", None),
    ]
    assert saved[6]["reason"] == "three views are not in the visit"
    assert not saved[9].get("reason")  # the cancelled comment
    assert {r["reviewer"] for r in saved} == {"alice"}

    # TP u3 u6 u17, FP u10, FN u12, TN u1 u4 u8 u14 u18 u19; n = 11.
    # κ: p_o = 9/11, p_e = (4/11)(4/11) + (7/11)(7/11) = 65/121 → (99 − 65)/(121 − 65) = 17/28
    first = agreement(run_dir, tmp_path / "first")
    assert (first["tp"], first["fp"], first["fn"], first["tn"]) == (3, 1, 1, 6)
    assert (first["units"], first["excluded_units"]) == (11, 1)
    assert first["precision"] == pytest.approx(3 / 4)
    assert first["recall"] == pytest.approx(3 / 4)
    assert first["kappa"] == pytest.approx(17 / 28)
    assert (first["majors"], first["major_recall"]) == (1, 1.0)

    with serving(run_dir) as server, open_page(Served(server.url)) as tab:  # a new session
        assert "D2N007" in tab.locator("#note-title").inner_text()  # D2N005 is done
        assert current(tab) == "1"
        assert "all notes: 12/55" in tab.locator("#progress").inner_text()
        press(tab, "p")  # back to D2N005: every unit labelled, so at its first
        assert current(tab) == "1"
        assert {"t1"} <= unit_class(tab, 1)
        assert {"t4", "major"} <= unit_class(tab, 6) and "major" not in unit_class(tab, 3)
        assert {"t5"} <= unit_class(tab, 17)
        press(tab, "j", "1")  # u3: unsupported → supported, now a false flag
        assert {"t1"} <= unit_class(tab, 3)
        tab.reload()
        tab.wait_for_selector("body[data-ready='1']")
        press(tab, "p")
        assert {"t1"} <= unit_class(tab, 3)  # the reload shows the change

    # TP u6 u17, FP u3 u10, FN u12, TN 6; p_gold = 3/11, p_judge = 4/11.
    # κ: p_o = 8/11, p_e = (3·4 + 8·7)/121 = 68/121 → (88 − 68)/(121 − 68) = 20/53
    second = agreement(run_dir, tmp_path / "second")
    assert (second["tp"], second["fp"], second["fn"], second["tn"]) == (2, 2, 1, 6)
    assert second["precision"] == pytest.approx(2 / 4)
    assert second["recall"] == pytest.approx(2 / 3)
    assert second["kappa"] == pytest.approx(20 / 53)


def test_shown_verdicts_are_the_judges_claims_over_the_unit(run_dir):
    with serving(run_dir, show=True) as server, open_page(Served(server.url)) as tab:
        flagged = {
            int(span.get_attribute("data-unit"))
            for span in tab.locator("#note-text .unit.judge-flag").all()
        }
        assert flagged == {3, 6, 10, 17}  # tier 4-5 claims over them
        press(tab, "j")  # u3: a tier-1 claim and a tier-4 one of the lexical judge
        shown = tab.locator("#verdicts .verdict").all_inner_texts()
        assert len(shown) == 2
        assert "lexical: tier 1" in shown[0] and "Ms. Hill is a 41-year-old female" in shown[0]
        assert "tier 4, minor" in shown[1]
        assert "nothing in the visit supports this claim" in shown[1]
        press(tab, "j", "j", "j", "j")  # u4, u6, u8, u10
        assert (
            "claim affirms tenderness the patient denied" in tab.locator("#verdicts").inner_text()
        )


def test_a_comment_holding_a_line_separator_is_saved_and_read_again(run_dir, tmp_path):
    comment = "pasted from a PDF:\u2028the second line\u2029and a third"
    with serving(run_dir) as server, open_page(Served(server.url)) as tab:
        press(tab, "2", "c")  # u1 unsupported; c opens the comment
        tab.locator("#comment").fill(comment)
        press(tab, "Enter")
    path = run_dir / "labels" / "alice.jsonl"
    assert len(path.read_text("utf-8").splitlines()) == 1  # one row, even split by splitlines()
    assert json.loads(path.read_text("utf-8"))["reason"] == comment
    with serving(run_dir) as server, open_page(Served(server.url)) as tab:  # a new session
        assert current(tab) == "3"  # resumed after u1
        press(tab, "k")
        assert tab.locator("#comment").input_value() == comment
    assert agreement(run_dir, tmp_path / "scored")["units"] == 1


def test_a_page_opened_without_the_token_gets_no_notes(run_dir):
    with serving(run_dir) as server:
        bare = server.url.split("?")[0]
        for address in (bare, bare + "?token=guessed", bare + "labels"):
            with open_page(Served(address), ready=False) as tab:
                assert tab.locator("body[data-ready='1']").count() == 0
                text = tab.content()
                assert "Ms. Hill" not in text and "D2N005" not in text
                assert "clinjudge label printed" in text  # the one-line reason
