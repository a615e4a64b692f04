"""``clinjudge label`` without a browser (issue 26, item 1): the units file written into the run,
the reviewer's label file saved at once and resumed, the server's answers to good and bad
saves, the command's exit-2 cases, and the whole command in a subprocess stopped with Ctrl-C
followed by ``clinjudge agreement`` on what it wrote. The run is a copy of the agreement fixture
(``tests/fixtures/agreement/run``: two aci-demo notes judged by a hand-placed lexical judge)."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
from cli_helpers import assert_one_line_error, run
from label_helpers import label_command, label_process, request, serving, session

from clinjudge.agreement.labelling import LabelNote, ensure_units
from clinjudge.agreement.labelling_server import TOKEN_HEADER
from clinjudge.agreement.labelling_store import BadLabel, UnknownUnit
from clinjudge.agreement.labels import read_label_set, read_units
from clinjudge.errors import ConfigError

FIXTURE = Path(__file__).parent / "fixtures" / "agreement"
D2N005 = ("D2N005", "reference")


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURE / "run", tmp_path / "run"))


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_units_file_is_written_in_the_shared_format(run_dir):
    s = session(run_dir)
    written = rows(run_dir / "units.jsonl")
    fixture = rows(FIXTURE / "units.jsonl")  # all of D2N005, the first six units of D2N007
    assert [u for u in written if u["encounter"] == "D2N005"] == fixture[:20]
    assert [u for u in written if u["encounter"] == "D2N007"][:6] == fixture[20:]
    assert len(read_units(run_dir / "units.jsonl")) == s.progress()["units"] == 12 + 43
    assert [n.note_id for n in s.notes] == ["D2N005/reference", "D2N007/reference"]


def test_an_existing_units_file_is_used_as_it_is_and_completed(run_dir):
    # a units file holding D2N005 cut otherwise (one unit for the first line only)
    custom = {"encounter": "D2N005", "system": "reference", "unit": 0, "kind": "text"}
    custom |= {"start": 0, "end": 3, "text": "CC:"}
    (run_dir / "units.jsonl").write_text(json.dumps(custom) + "\n")
    s = session(run_dir)
    assert s.notes[0].units == [custom]  # used as it is: labels name units by number
    written = rows(run_dir / "units.jsonl")
    assert written[0] == custom and {u["encounter"] for u in written[1:]} == {"D2N007"}


def test_units_cut_from_another_text_are_refused(run_dir):
    bad = {"encounter": "D2N005", "system": "reference", "unit": 0, "kind": "text"}
    bad |= {"start": 0, "end": 3, "text": "HPI"}
    (run_dir / "units.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(ConfigError, match="cut from another text"):
        session(run_dir)


def test_each_label_is_written_at_once_and_each_unit_once(run_dir):
    s = session(run_dir)
    path = run_dir / "labels" / "alice.jsonl"
    s.save({"encounter": "D2N005", "system": "reference", "unit": 3, "label": "unsupported"})
    first = rows(path)
    assert len(first) == 1 and first[0]["severity"] == "minor"  # a flag is minor by default
    assert set(first[0]) == {
        "encounter",
        "system",
        "unit",
        "label",
        "severity",
        "span",
        "evidence",
        "reason",
        "reviewer",
        "labelled_at",
    }
    s.save({**first[0], "label": "contradicted", "severity": "major", "reason": " no age "})
    s.save({"encounter": "D2N005", "system": "reference", "unit": 1, "label": "supported"})
    s.save({"encounter": "D2N005", "system": "reference", "unit": 4, "label": "supported"})
    s.save({"encounter": "D2N005", "system": "reference", "unit": 4, "label": None})  # removed
    on_disk = rows(path)
    assert [(r["unit"], r["label"], r["severity"], r["reason"]) for r in on_disk] == [
        (1, "supported", None, ""),
        (3, "contradicted", "major", "no age"),
    ]
    assert on_disk[1]["reviewer"] == "alice"
    loaded = read_label_set(path).rows  # the agreement command's reader takes it
    assert set(loaded) == {(*D2N005, 1), (*D2N005, 3)}
    assert list(path.parent.iterdir()) == [path]  # no temporary file left


def test_a_supported_unit_has_no_severity(run_dir):
    s = session(run_dir)
    got = s.save({"encounter": "D2N005", "system": "reference", "unit": 1, "label": "supported"})
    assert got["row"]["severity"] is None
    got = s.save({**got["row"], "severity": "major"})
    assert got["row"]["severity"] is None


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"unit": 0}, UnknownUnit),  # a header
        ({"unit": 99}, UnknownUnit),
        ({"system": "gpt4"}, UnknownUnit),
        ({"label": "wrong"}, BadLabel),
        ({"label": "unsupported", "severity": "huge"}, BadLabel),
        ({"unit": "3"}, BadLabel),
        ({"unit": True}, BadLabel),
        ({"reason": 5}, BadLabel),
    ],
)
def test_labels_for_no_text_unit_or_of_another_format_are_refused(run_dir, change, error):
    s = session(run_dir)
    with pytest.raises(error):
        s.save(
            {"encounter": "D2N005", "system": "reference", "unit": 3, "label": "supported"} | change
        )
    assert not (run_dir / "labels" / "alice.jsonl").exists()


def test_a_new_session_resumes_at_the_first_unlabelled_unit(run_dir):
    s = session(run_dir)
    assert s.start() == {"note": 0, "unit": 1}
    for unit in (1, 3, 4):
        s.save({"encounter": "D2N005", "system": "reference", "unit": unit, "label": "supported"})
    again = session(run_dir)
    assert again.start() == {"note": 0, "unit": 6}
    data = again.page_data()
    assert again.note_data(0)["labels"]["3"] == {
        "label": "supported",
        "severity": None,
        "reason": "",
        "evidence": [],
        "span": None,
    }
    assert data["progress"]["notes"]["D2N005/reference"] == {"labelled": 3, "units": 12}
    assert data["progress"]["labelled"] == 3
    other = session(run_dir, "bob")  # another reviewer: a file of their own, nothing labelled
    assert other.start() == {"note": 0, "unit": 1} and other.progress()["labelled"] == 0


D2N005_6 = {"encounter": "D2N005", "system": "reference", "unit": 6}
LINE_LIKE = "pasted from a PDF:\u2028second line\u2029third\x85end"


def test_a_comment_holding_line_separators_is_one_row_read_again_by_label_and_agreement(
    run_dir, tmp_path
):
    s = session(run_dir)
    s.save({"encounter": "D2N005", "system": "reference", "unit": 3, "label": "unsupported"})
    s.save({**D2N005_6, "label": "unsupported"})
    s.save({**D2N005_6, "label": "contradicted", "reason": LINE_LIKE})
    path = run_dir / "labels" / "alice.jsonl"
    assert len(path.read_text("utf-8").splitlines()) == 2  # whole even for splitlines() readers
    again = session(run_dir)  # a new session reads what the page saved
    assert again.labels.label_of((*D2N005, 6))["reason"] == LINE_LIKE
    assert again.progress()["labelled"] == 2
    out = tmp_path / "agreement"
    result = run("agreement", run_dir, "--labels", path, "--out", out, "--resamples", 100)
    assert result.exit_code == 0, result.output
    assert json.loads((out / "agreement.json").read_text())["judges"][0]["units"] == 2


def test_a_label_file_another_tool_wrote_with_raw_separators_is_read(tmp_path):
    row = {"encounter": "E1", "system": "reference", "unit": 1, "label": "supported"}
    raw = json.dumps(row | {"reason": LINE_LIKE}, ensure_ascii=False)
    path = tmp_path / "theirs.jsonl"
    path.write_text(raw + "\n" + json.dumps(row | {"unit": 2}) + "\n", "utf-8")
    assert len(path.read_text("utf-8").splitlines()) > 2  # what splitlines() would tear
    rows = read_label_set(path).rows
    assert rows[("E1", "reference", 1)]["reason"] == LINE_LIKE and len(rows) == 2
    path.write_text(raw + "\n{oops\n", "utf-8")
    with pytest.raises(ConfigError, match=r"theirs\.jsonl:2: not JSON \("):
        read_label_set(path)
    path.write_bytes(raw.encode() + b"\n" + b'{"unit": "\xff"}\n')
    with pytest.raises(ConfigError, match=r"theirs\.jsonl:2: not JSON \(not UTF-8"):
        read_label_set(path)


def test_units_of_a_note_holding_line_separators_are_written_and_read_again(tmp_path):
    text = "CC:\nPain in the left knee\u2028since Monday.\x85 No fever. Walks\u2029slowly."

    def note() -> LabelNote:
        return LabelNote("E1", "E1", "reference", text, "")

    first = note()
    path = ensure_units(tmp_path, [first])
    assert len(path.read_text("utf-8").splitlines()) == len(first.units)
    again = note()
    ensure_units(tmp_path, [again])  # reads the file it wrote
    assert again.units == first.units
    assert [u["text"] for u in again.units][1:] == [
        "Pain in the left knee\u2028since Monday.",
        "No fever.",
        "Walks\u2029slowly.",
    ]


def test_the_page_data_is_blind_unless_verdicts_are_shown(run_dir):
    blind = session(run_dir).page_data()
    assert blind["blind"] and blind["judges"] == []
    assert all("claims" not in n for n in blind["notes"])
    blind_note = session(run_dir).note_data(0)
    assert "claims" not in blind_note
    assert "tenderness the patient denied" not in json.dumps([blind, blind_note])  # a rationale
    shown = session(run_dir, show=True).note_data(0)
    claims = shown["claims"]["lexical"]
    assert any(c["rationale"] == "claim affirms tenderness the patient denied" for c in claims)


def test_the_server_saves_labels_and_refuses_what_it_must(run_dir):
    label = {"encounter": "D2N005", "system": "reference", "unit": 6, "label": "unsupported"}
    with serving(run_dir) as server:
        assert server.url.startswith("http://127.0.0.1:")
        status, page = request(server, "/")
        assert status == 200 and "clinjudge label" in page
        assert parse_qs(urlsplit(server.url).query)["token"][0] not in page  # in no page
        assert request(server, "/label", label, token=False)[0] == 403
        assert request(server, "/label", label, headers={"Host": "evil.example"})[0] == 403
        assert request(server, "/label", label, headers={"Content-Type": "text/plain"})[0] == 415
        assert request(server, "/label", label | {"unit": 0})[0] == 404  # a header
        assert request(server, "/label", label | {"label": "maybe"})[0] == 400
        assert not (run_dir / "labels" / "alice.jsonl").exists()
        status, answer = request(server, "/label", label | {"severity": "major"})
        assert status == 200 and json.loads(answer)["row"]["severity"] == "major"
        assert json.loads(answer)["progress"]["labelled"] == 1
        assert rows(run_dir / "labels" / "alice.jsonl")[0]["unit"] == 6
        status, saved = request(server, "/labels")
        assert [r["unit"] for r in json.loads(saved)] == [6]
        status, note = request(server, "/note/0")  # a reload shows the label
        assert json.loads(note)["labels"]["6"]["severity"] == "major"


def test_a_bad_reviewer_name_exits_2(run_dir):
    for name in ("../alice", "alice.jsonl", "a b", ""):
        assert_one_line_error(run("label", run_dir, "--reviewer", name), "cannot name a label file")
    assert not (run_dir / "units.jsonl").exists()


def test_not_a_run_directory_exits_2(tmp_path, run_dir):
    assert_one_line_error(run("label", tmp_path / "nowhere", "--reviewer", "a"), "no such run")
    assert_one_line_error(run("label", tmp_path, "--reviewer", "a"), "not a run directory")
    file = run_dir / "run.json"
    assert_one_line_error(run("label", file, "--reviewer", "a"), "not a run directory")


def test_an_unreadable_dataset_exits_2(run_dir):
    manifest = json.loads((run_dir / "run.json").read_text())
    manifest["command"]["dataset"] = str(run_dir / "moved.jsonl")
    (run_dir / "run.json").write_text(json.dumps(manifest))
    result = run("label", run_dir, "--reviewer", "a", "--no-browser")
    assert_one_line_error(result, "cannot read the run's dataset")


def test_a_run_with_no_note_of_its_dataset_exits_2(run_dir):
    judged = run_dir / "runs" / "lexical.jsonl"
    judged.write_text(judged.read_text().replace('"D2N005"', '"X1"').replace('"D2N007"', '"X2"'))
    result = run("label", run_dir, "--reviewer", "a", "--no-browser")
    assert_one_line_error(result, "none of the 2 notes its judges judged is in its dataset")


def test_a_port_that_is_taken_exits_2(run_dir):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run("label", run_dir, "--reviewer", "a", "--no-browser", "--port", port)
    assert_one_line_error(result, f"cannot serve on 127.0.0.1:{port}")


def test_the_command_serves_until_ctrl_c_and_agreement_reads_its_files(run_dir, tmp_path):
    command = [str(Path(sys.executable).with_name("clinjudge")), "label", str(run_dir)]
    proc = subprocess.Popen(
        [*command, "--reviewer", "bob", "--no-browser"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as a script in the background starts it (and as a backgrounded test run does): with
        # SIGINT ignored, so the command must install its own handler for Ctrl-C to stop it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read()
        token = parse_qs(urlsplit(url).query)["token"][0]
        for unit, label in ((3, "supported"), (6, "unsupported"), (12, "unsupported")):
            body = {"encounter": "D2N005", "system": "reference", "unit": unit, "label": label}
            req = urllib.request.Request(
                urljoin(url, "/label"),
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json", TOKEN_HEADER: token},
            )
            urllib.request.urlopen(req, timeout=10).close()
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "3/55 units labelled" in err and "Traceback" not in err
    labels = run_dir / "labels" / "bob.jsonl"
    out = tmp_path / "agreement"
    result = run("agreement", run_dir, "--labels", labels, "--out", out, "--resamples", 100)
    assert result.exit_code == 0, result.output
    judge = json.loads((out / "agreement.json").read_text())["judges"][0]
    # u3 supported but flagged (FP), u6 unsupported and flagged (TP), u12 unsupported, cleared (FN)
    assert (judge["tp"], judge["fp"], judge["fn"], judge["tn"]) == (1, 1, 1, 0)


def test_a_malformed_label_file_exits_2_naming_its_line(run_dir):
    labels = run_dir / "labels"
    labels.mkdir()
    (labels / "alice.jsonl").write_text('{"encounter": "D2N005", "system": "reference"}\n')
    result = run("label", run_dir, "--reviewer", "alice", "--no-browser")
    assert_one_line_error(result, "alice.jsonl:1: no 'unit'")


def test_two_reviewers_label_into_two_files_that_agreement_compares(run_dir, tmp_path):
    for reviewer, labels in (("alice", ("supported", "unsupported")), ("bob", ("supported",) * 2)):
        s = session(run_dir, reviewer)
        for unit, label in zip((1, 3), labels, strict=True):
            s.save({"encounter": "D2N005", "system": "reference", "unit": unit, "label": label})
    files = [run_dir / "labels" / f"{name}.jsonl" for name in ("alice", "bob")]
    out = tmp_path / "agreement"
    result = run("agreement", run_dir, "--labels", files[0], "--labels", files[1], "--out", out)
    assert result.exit_code == 0, result.output
    reviewers = json.loads((out / "agreement.json").read_text())["reviewers"]
    assert len(reviewers) == 1 and reviewers[0]["units"] == 2
    assert reviewers[0]["agreement"] == pytest.approx(0.5)  # they differ on unit 3


def test_a_second_label_server_for_the_same_reviewer_exits_2_naming_the_first(run_dir):
    with label_process(run_dir, "alice") as (first, _url):
        with label_process(run_dir, "bob") as (other, url):  # another reviewer is fine
            assert url.startswith("http://127.0.0.1:")
        second = subprocess.run(
            label_command(run_dir, "alice"), capture_output=True, text=True, timeout=60
        )
    assert second.returncode == 2, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pid {first.pid}" in lines[0] and "Traceback" not in lines[0]
    assert second.stdout == ""  # no URL: nothing served


def test_a_lock_left_by_a_dead_process_is_taken_over(run_dir):
    labels = run_dir / "labels"
    labels.mkdir()
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = gone.pid  # a process that has exited
    holder = {"pid": dead, "host": socket.gethostname(), "command": "clinjudge label"}
    (labels / ".alice.lock").write_text(json.dumps(holder))
    with label_process(run_dir, "alice") as (proc, url):
        assert (labels / ".alice.lock").exists()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert f"took over the lock left by pid {dead}" in err, err
    assert not (labels / ".alice.lock").exists()  # released on the way out
    assert sorted(p.name for p in labels.iterdir()) == []  # and no label file was needed


def test_the_lock_is_not_a_label_file(run_dir):
    with label_process(run_dir, "alice") as (proc, url):
        lock = run_dir / "labels" / ".alice.lock"
        assert json.loads(lock.read_text())["pid"] == proc.pid
        assert list((run_dir / "labels").glob("*.jsonl")) == []
