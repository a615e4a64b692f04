"""The file layer every results and label file goes through (issue 35, items 1, 2 and 4):
JSONL split at ``\\n`` only, rewrites that leave the old file or the new one, one writer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from clinjudge.files import (
    LockHeld,
    WriterLock,
    atomic_write,
    dump_line,
    read_jsonl,
    remove_stray_temporaries,
)

LINE_LIKE = "\u2028 \u2029 \x85 \x0b \x0c \x1c \x1d \x1e \r"


def test_a_row_holding_line_separators_is_one_row(tmp_path: Path) -> None:
    row = {"id": "a\u2028b", "note": f"pasted from Word:{LINE_LIKE}end", "n": [1, {"x": "\x85"}]}
    path = tmp_path / "rows.jsonl"
    path.write_text(dump_line(row) + dump_line({"id": "second"}), encoding="utf-8")
    lines = list(read_jsonl(path))
    assert [line.value for line in lines] == [row, {"id": "second"}]
    assert [line.number for line in lines] == [1, 2]
    # what we write survives readers that split by splitlines() as well
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2


def test_raw_line_separators_written_by_another_tool_are_read(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    text = json.dumps({"t": "a\u2028b\u2029c\x85d"}, ensure_ascii=False) + "\r\n\n"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert [line.value for line in read_jsonl(path)] == [{"t": "a\u2028b\u2029c\x85d"}]


def test_bad_lines_are_named_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_bytes(b'{"ok": 1}\n{"torn": \n' + deep.encode() + b"\n\xff\xfe\n")
    lines = list(read_jsonl(path))
    assert [line.ok for line in lines] == [True, False, False, False]
    assert "invalid JSON" in lines[1].problem
    assert "nested too deeply" in lines[2].problem
    assert "not UTF-8" in lines[3].problem


def test_atomic_write_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text("old\n", encoding="utf-8")
    atomic_write(path, (f"{i}\n" for i in range(3)))
    assert path.read_text(encoding="utf-8") == "0\n1\n2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["results.jsonl"]


def test_a_rewrite_that_fails_midway_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text("old content\n", encoding="utf-8")

    def chunks():
        yield "half of the new"
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, chunks())
    assert path.read_text(encoding="utf-8") == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["results.jsonl"]


def test_a_writer_killed_midway_leaves_the_old_file_and_its_temporary_is_cleaned(
    tmp_path: Path,
) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text("old content\n", encoding="utf-8")
    script = textwrap.dedent(
        f"""
        import sys, time
        from clinjudge.files import atomic_write
        def chunks():
            yield "x" * 1000
            print("writing", flush=True)
            time.sleep(60)
            yield "never"
        atomic_write({str(path)!r}, chunks())
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stray = [p for p in tmp_path.iterdir() if p.name != "results.jsonl"]
    assert len(stray) == 1 and stray[0].name.endswith(f".{proc.pid}.tmp")
    assert path.read_text(encoding="utf-8") == "old content\n"
    assert remove_stray_temporaries(tmp_path) == stray
    assert [p.name for p in tmp_path.iterdir()] == ["results.jsonl"]


def test_a_live_writers_temporary_is_kept(tmp_path: Path) -> None:
    mine = tmp_path / f".results.jsonl.{os.getpid()}.tmp"
    mine.write_text("being written", encoding="utf-8")
    assert remove_stray_temporaries(tmp_path) == []
    assert mine.exists()


_HOLD = """
import sys, time
from clinjudge.files import WriterLock
lock = WriterLock(sys.argv[1], "run directory X").acquire()
print("held", flush=True)
time.sleep(60)
"""


def test_a_second_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    lock_path = tmp_path / "run" / ".lock"
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(lock_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(LockHeld) as refused:
            WriterLock(lock_path, "run directory X").acquire()
        message = str(refused.value)
        assert f"pid {proc.pid}" in message and "run directory X is in use" in message
        assert "\n" not in message
    finally:
        proc.kill()
        proc.wait()
    # the holder died without releasing: the lock is taken over, saying whose it was
    lock = WriterLock(lock_path, "run directory X").acquire()
    assert lock.took_over is not None and f"pid {proc.pid}" in lock.took_over
    assert json.loads(lock_path.read_text())["pid"] == os.getpid()
    lock.release()
    assert not lock_path.exists()


def test_a_lock_released_in_order_is_taken_without_a_message(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    with WriterLock(path, "X") as first:
        assert first.held and path.exists()
        with pytest.raises(LockHeld):  # the same process, a second writer: refused too
            WriterLock(path, "X").acquire()
    assert not path.exists()
    with WriterLock(path, "X") as second:
        assert second.took_over is None


def test_a_stale_lock_file_of_a_dead_pid_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = tmp_path / ".lock"
    path.write_text(json.dumps({"pid": dead.pid, "host": "h", "since": "then"}))
    started = time.perf_counter()
    with WriterLock(path, "labels of alice") as lock:
        assert lock.took_over.startswith("labels of alice: took over the lock left by pid")
    assert time.perf_counter() - started < 1
