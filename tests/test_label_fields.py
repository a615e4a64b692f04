"""A label's evidence turns and span (issue 37, item 7), and notes sent one at a time: the
server checks cited turns against the note's transcript and a span against the unit (400 with a
one-line reason, nothing written), writes both in the shared claim-labels format, gives them back
to the page as numbers, and ``clinjudge agreement`` still reads the file. The first page of a
300-note run holds no note's text; ``GET /note/N`` sends one.

The run is a copy of the agreement fixture (D2N005: 38 transcript turns; unit 3 is characters
38-189 of the note)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from label_helpers import many_notes_run, request, serving, session

from clinjudge.agreement.labels import read_label_set

FIXTURE = Path(__file__).parent / "fixtures" / "agreement"
UNIT_3 = {"encounter": "D2N005", "system": "reference", "unit": 3, "label": "unsupported"}
TURNS = 38


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE / "run", tmp_path / "run"))


def test_evidence_is_written_as_the_shared_files_write_it():
    from clinjudge.agreement.label_fields import evidence_numbers, evidence_text

    assert evidence_text([2, 4, 5, 6, 9]) == "T2, T4-T6, T9"
    assert evidence_text([]) is None
    assert evidence_numbers("T12-T14, T20") == [12, 13, 14, 20]  # as the shared labels read
    assert evidence_numbers("T1, T5") == [1, 5]
    assert evidence_numbers("none") == [] and evidence_numbers(None) == []


def test_cited_turns_and_a_span_are_saved_checked_and_given_back(run_dir, tmp_path):
    s = session(run_dir)
    assert len(s.notes[0].turns) == TURNS
    saved = s.save(UNIT_3 | {"evidence": [5, 2, 3, 38], "span": {"start": 52, "end": 63}})
    assert saved["row"]["evidence"] == "T2-T3, T5, T38"
    assert saved["row"]["span"] == "41-year-old" == s.notes[0].note[52:63]
    assert saved["label"]["evidence"] == [2, 3, 5, 38]
    assert saved["label"]["span"] == {"start": 52, "end": 63}
    again = session(run_dir)  # resumed: the page gets them back as numbers
    assert again.note_data(0)["labels"]["3"]["evidence"] == [2, 3, 5, 38]
    assert again.note_data(0)["labels"]["3"]["span"] == {"start": 52, "end": 63}
    supported = again.save(UNIT_3 | {"label": "supported", "span": {"start": 52, "end": 63}})
    assert supported["row"]["span"] is None  # a supported unit has no span (like severity)
    loaded = read_label_set(run_dir / "labels" / "alice.jsonl").rows
    assert loaded[("D2N005", "reference", 3)]["evidence"] is None


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"evidence": [TURNS + 1]}, f"evidence turn {TURNS + 1} is not a turn"),
        ({"evidence": [0]}, "evidence turn 0 is not a turn"),
        ({"evidence": [2, -1]}, "evidence turn -1 is not a turn"),
        ({"evidence": "T2"}, "evidence must be a list of transcript turn numbers"),
        ({"evidence": [2.5]}, "evidence must be a list of transcript turn numbers"),
        ({"evidence": [True]}, "evidence must be a list of transcript turn numbers"),
        ({"span": {"start": 30, "end": 60}}, "span 30-60 is not inside unit 3"),
        ({"span": {"start": 180, "end": 195}}, "span 180-195 is not inside unit 3"),
        ({"span": {"start": 60, "end": 60}}, "span 60-60 is not inside unit 3"),
        ({"span": "41-year-old"}, 'span must be {"start": int, "end": int}'),
    ],
)
def test_a_bad_evidence_turn_or_span_is_refused_and_nothing_written(run_dir, fields, reason):
    with serving(run_dir) as server:
        status, answer = request(server, "/label", UNIT_3 | fields)
        assert status == 400, answer
        error = json.loads(answer)["error"]
        assert error.startswith(reason) and len(error.splitlines()) == 1
        assert not (run_dir / "labels" / "alice.jsonl").exists()
        status, answer = request(server, "/label", UNIT_3 | {"evidence": [TURNS]})
        assert status == 200 and json.loads(answer)["row"]["evidence"] == f"T{TURNS}"


def test_agreement_reads_labels_with_evidence_and_span(run_dir, tmp_path):
    from cli_helpers import run

    s = session(run_dir)
    s.save(UNIT_3 | {"evidence": [1, 2], "span": {"start": 52, "end": 63}})
    s.save(UNIT_3 | {"unit": 1, "label": "supported", "evidence": [2]})
    labels = run_dir / "labels" / "alice.jsonl"
    written = [json.loads(line) for line in labels.read_text("utf-8").splitlines()]
    assert [(r["evidence"], r["span"]) for r in written] == [("T2", None), ("T1-T2", "41-year-old")]
    result = run("agreement", run_dir, "--labels", labels, "--out", tmp_path / "a")
    assert result.exit_code == 0, result.output
    scored = json.loads((tmp_path / "a" / "agreement.json").read_text())["judges"][0]
    assert scored["units"] == 2 and scored["tp"] == 1


def test_the_first_page_of_300_notes_holds_no_note_and_each_note_is_sent_alone(tmp_path):
    run_dir, items = many_notes_run(tmp_path, 300)
    with serving(run_dir, items=items) as server:
        status, page = request(server, "/")
        assert status == 200
        assert "S002" in page and "S300" in page  # every note is listed by id
        assert "Synthetic copy" not in page and "[doctor]" not in page  # no note's text
        assert len(page) < 200_000
        status, second = request(server, "/note/1")
        note = json.loads(second)
        assert note["note_id"] == "S002/reference" and "Synthetic copy 002 of" in note["note"]
        assert "Synthetic copy 001" not in second and "Synthetic copy 003" not in second
        assert request(server, "/note/300")[0] == 404
