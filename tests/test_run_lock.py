"""One writer per run directory (issue 35, item 4): a second process pointed at a run another
process writes is refused at once, naming it (before, both judged everything: twice the cost,
rows doubled); a lock left by a killed process is taken over with a note; the stray temporaries
of its unfinished rewrites are removed; a repair that fails midway leaves the results file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

from clinjudge.files import atomic as atomic_module
from clinjudge.files import dump_line
from clinjudge.run_dir import LOCK_FILE
from clinjudge.runner import read_completed

ARENA = Path(__file__).parent / "fixtures" / "arena" / "systems.csv"
_HOLD = """
import sys, time
from clinjudge.run_dir import run_lock
with run_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.fixture
def held_run(tmp_path):
    """A run directory whose lock another live process holds; yields (path, pid)."""
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(out)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    yield out, proc.pid
    proc.kill()
    proc.wait()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize(
    "command",
    [
        ("compare", "aci-demo", "--limit", "1", "--judges", "lexical", "--backend", "offline"),
        ("arena", ARENA, "--systems", "reference,terse", "--limit", "1", "--backend", "offline"),
    ],
)
def test_a_second_writer_is_refused_naming_the_first(held_run, command):
    out, pid = held_run
    result = run(*command, "--out", out)
    assert_one_line_error(result, f"is in use by another clinjudge process (pid {pid} on host")
    assert not (out / "runs").exists() and not (out / "run.json").exists()


def test_meta_eval_is_refused_too(held_run, tmp_path):
    out, pid = held_run
    pairs = tmp_path / "pairs.jsonl"
    made = run("inject", "aci-demo", "--limit", "1", "--types", "errors", "--out", pairs)
    assert made.exit_code == 0, made.output
    result = run("meta-eval", pairs, "--judge", "lexical", "--backend", "offline", "--out", out)
    assert_one_line_error(result, f"pid {pid}")


def test_a_dead_writers_lock_and_temporaries_are_taken_over(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    dead = _dead_pid()
    (out / LOCK_FILE).write_text(json.dumps({"pid": dead, "host": "h", "command": "clinjudge x"}))
    stray = out / f".report.json.{dead}.tmp"
    stray.write_text("half a report")
    result = run("compare", "aci-demo", "--limit", "1", "--judges", "lexical", "--out", out)
    assert result.exit_code == 0, result.output
    assert f"took over the lock left by pid {dead} on host h" in result.stderr
    assert not stray.exists() and not (out / LOCK_FILE).exists()
    assert (out / "report.json").is_file()


def test_a_repair_that_fails_midway_leaves_the_results_file(tmp_path, monkeypatch):
    path = tmp_path / "judge.jsonl"
    whole = "".join(dump_line({"id": str(n), "text": "x" * 100}) for n in range(50))
    path.write_text(whole + '{"id": "torn', encoding="utf-8")
    before = path.read_bytes()

    def crash(fd: int) -> None:
        raise KeyboardInterrupt  # the process stopped while the repaired file was written

    monkeypatch.setattr(atomic_module.os, "fsync", crash)
    with pytest.raises(KeyboardInterrupt):
        read_completed(path, key="id")
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["judge.jsonl"]
    monkeypatch.undo()
    assert len(read_completed(path, key="id")) == 50
    assert path.read_text(encoding="utf-8") == whole


def test_a_refused_run_leaves_no_empty_directory(tmp_path):
    out = tmp_path / "new"
    result = run("compare", "aci-demo", "--judges", "no-such-judge", "--out", out)
    assert result.exit_code == 2
    assert not out.exists()


def test_no_lock_is_left_behind(tmp_path):
    out = tmp_path / "run"
    result = run("compare", "aci-demo", "--limit", "1", "--judges", "lexical", "--out", out)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []
    assert Path(out / "run.json").is_file()
