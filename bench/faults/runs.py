"""Attacks on run directories and results files (issue 35, items 1, 2, 4 and 8): text with line
separators, a repair killed midway, two writers, a killed writer, signals from a script, deeply
nested JSON, a huge note."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from faults import CLI, Attack, Outcome, clinjudge, last_line

SEP = "\u2028"


def _visit(n: int, extra: str = "") -> dict[str, str]:
    return {
        "id": f"enc{n}{SEP}x",
        "transcript": (
            f"[doctor] any chest pain?{SEP}[patient] no chest pain.\u2029[doctor] are you "
            f"taking lisinopril 10 mg daily?\x85[patient] yes, every morning. {extra}"
        ),
        "note": f"Denies chest pain.{SEP}Takes lisinopril 20 mg daily.\u2029Has diabetes.{extra}",
    }


def _dataset(path: Path, n: int = 3) -> Path:
    rows = [_visit(i) for i in range(n)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _rows(path: Path) -> list[str]:
    """The ids of a runs file, line by line as a plain JSONL reader sees them (split at \\n)."""
    ids = []
    for raw in path.read_bytes().split(b"\n"):
        if raw.strip():
            try:
                ids.append(json.loads(raw)["id"])
            except (json.JSONDecodeError, KeyError):
                ids.append("<torn>")
    return ids


def line_separators_resume(work: Path) -> Outcome:
    data = _dataset(work / "pasted.jsonl")
    args = ["compare", str(data), "--judges", "lexical", "--backend", "offline"]
    first = clinjudge([*args, "--out", str(work / "run")])
    if first.returncode != 0:
        return Outcome(False, f"first run exit {first.returncode}: {last_line(first.stderr)}")
    rows = work / "run" / "runs" / "lexical.jsonl"
    before = rows.read_bytes()
    started = time.perf_counter()
    clinjudge([*args, "--out", str(work / "run")])
    again = time.perf_counter() - started
    rejudged = rows.read_bytes() != before
    what = "changed: items judged again" if rejudged else "unchanged"
    return Outcome(
        not rejudged, f"second run {again:.1f} s; rows {what} ({len(_rows(rows))} lines, 3 items)"
    )


_REPAIR = """
import sys
from pathlib import Path
from clinjudge.runner import read_completed
read_completed(Path(sys.argv[1]), key="id")
"""


def _kill_when_writing(path: Path, proc: subprocess.Popen, size: int) -> None:
    """Kill ``proc`` the moment anything changes beside ``path`` (its size, or a new file: a
    repair in place truncating it, or a temporary appearing)."""
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        if path.stat().st_size != size or len(list(path.parent.iterdir())) > 1:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def repair_killed_midway(work: Path) -> Outcome:
    """A 120 MB results file with a torn last line; its repair killed the moment it starts
    writing (6 times) and at 6 other points in time."""
    good = b"".join(
        (json.dumps({"id": str(i), "text": "x" * 4000}) + "\n").encode() for i in range(30_000)
    )
    shortest, tries = len(good), 12
    for k in range(tries):
        folder = work / f"try{k}"
        folder.mkdir()
        path = folder / "judge.jsonl"
        path.write_bytes(good + b'{"id": "torn')
        proc = subprocess.Popen([sys.executable, "-P", "-c", _REPAIR, str(path)])
        if k < 6:
            _kill_when_writing(path, proc, path.stat().st_size)
        else:
            time.sleep(0.3 * (k - 5))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        shortest = min(shortest, path.stat().st_size)
    held = shortest >= len(good)
    return Outcome(
        held,
        f"{tries} kills during the repair of a {len(good) / 1e6:.0f} MB file; smallest file "
        f"left {shortest / 1e6:.1f} MB",
    )


def _start(args: list[str], **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **kw
    )


def _wait_for(path: Path, seconds: float = 300) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.is_file() and path.read_bytes().strip():
            return True
        time.sleep(0.1)
    return False


def two_writers(work: Path) -> Outcome:
    out = work / "run"
    args = ["compare", "aci-demo", "--limit", "4", "--judges", "lexical", "--backend", "offline"]
    first = _start([*args, "--out", str(out)])
    _wait_for(out / "run.json")
    started = time.perf_counter()
    second = clinjudge([*args, "--out", str(out)])
    seconds = time.perf_counter() - started
    first.wait()
    ids = _rows(out / "runs" / "lexical.jsonl")
    doubled = len(ids) - len(set(ids))
    held = second.returncode == 2 and doubled == 0
    return Outcome(
        held,
        f"second process: exit {second.returncode} after {seconds:.1f} s "
        f"({last_line(second.stderr)[:70]}); rows {len(ids)} for 4 items",
    )


def killed_writer_taken_over(work: Path) -> Outcome:
    out = work / "run"
    args = ["compare", "aci-demo", "--limit", "4", "--judges", "lexical", "--backend", "offline"]
    first = _start([*args, "--out", str(out)])
    _wait_for(out / "runs" / "lexical.jsonl")
    first.send_signal(signal.SIGKILL)
    first.wait()
    again = clinjudge([*args, "--out", str(out)])
    ids = _rows(out / "runs" / "lexical.jsonl")
    took = "took over the lock" in again.stderr
    held = again.returncode == 0 and sorted(ids) == sorted(set(ids)) and len(ids) == 4
    return Outcome(
        held, f"rerun exit {again.returncode}, {len(ids)} rows for 4 items; said so: {took}"
    )


def _signal_from_script(work: Path, sig: int, want: int) -> Outcome:
    out = work / "run"
    args = ["compare", "aci-demo", "--judges", "inference-aware", "--backend", "offline"]
    proc = _start(
        [*args, "--out", str(out)], preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)
    )
    _wait_for(out / "runs" / "inference-aware.jsonl")
    proc.send_signal(sig)
    started = time.perf_counter()
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return Outcome(False, "still running 60 s after the signal (it was ignored)")
    seconds = time.perf_counter() - started
    said = last_line(err)
    held = proc.returncode == want and "the same command resumes" in said
    return Outcome(held, f"exit {proc.returncode} after {seconds:.1f} s: {said[:80]}")


def sigint_from_script(work: Path) -> Outcome:
    return _signal_from_script(work, signal.SIGINT, 130)


def sigterm(work: Path) -> Outcome:
    return _signal_from_script(work, signal.SIGTERM, 143)


def deep_json_line(work: Path) -> Outcome:
    data = work / "nested.jsonl"
    deep = '{"id": "b", "note": ' + "[" * 200_000 + "]" * 200_000 + "}"
    data.write_text(json.dumps(_visit(1)) + "\n" + deep + "\n", encoding="utf-8")
    done = clinjudge(["compare", str(data), "--judges", "lexical", "--out", str(work / "r")])
    named = "nested too deeply" in done.stderr
    held = done.returncode == 0 and named and "Traceback" not in done.stderr
    return Outcome(held, f"exit {done.returncode}; {last_line(done.stderr)[:90]}")


def huge_note(work: Path) -> Outcome:
    data = work / "huge.jsonl"
    row = _visit(0, extra="Reports knee pain. " * 1_100_000)  # about 21 MB
    data.write_text(json.dumps(row) + "\n" + json.dumps(_visit(1)) + "\n", encoding="utf-8")
    script = (
        "import resource, subprocess, sys; "
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300); "
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024); "
        "print(p.stderr.strip().split(chr(10))[0] if p.stderr.strip() else '')"
    )
    args = [CLI, "compare", str(data), "--judges", "lexical", "--out", str(work / "r")]
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-c", script, *args], capture_output=True, text=True, timeout=320
        )
    except subprocess.TimeoutExpired:
        return Outcome(False, "not finished in 5 minutes")
    lines = done.stdout.strip().split("\n")  # the id holds U+2028: split at \n only
    if len(lines) < 2:
        return Outcome(False, f"no result ({last_line(done.stderr)})")
    code, peak = (int(x) for x in lines[0].split())
    refused = "over the limit" in lines[1]
    return Outcome(
        code == 0 and refused and peak < 1500,
        f"exit {code}, peak RSS {peak} MB; {lines[1][:60]}…{lines[1][-40:]}",
    )


ATTACKS = [
    Attack(1, "runs: U+2028 in text, the same compare again", line_separators_resume),
    Attack(2, "runs: torn-line repair of 120 MB killed midway (12x)", repair_killed_midway),
    Attack(4, "runs: two compare processes on one --out", two_writers),
    Attack(4, "runs: a compare killed -9, then the same command", killed_writer_taken_over),
    Attack(8, "runs: SIGINT to a compare started from a script", sigint_from_script),
    Attack(8, "runs: SIGTERM to a compare", sigterm),
    Attack(8, "runs: a deeply nested JSONL line in a dataset", deep_json_line),
    Attack(8, "runs: a 21 MB note", huge_note),
]
