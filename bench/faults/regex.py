"""Attacks on the regular expressions and the text layer (issue 35, item 3): every pattern on
hostile 10 kB strings, the hyphen chain that took the negation scan 30 s, a note whose exam line
is one eleven-part hyphenated phrase, and a note of one 1 MB line.

Each attack runs its work in a child process with a time limit, so code that explodes is
reported as "did not finish" instead of hanging the bench.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from faults import Attack, Outcome, clinjudge, last_line

TESTS = Path(__file__).resolve().parents[2] / "tests"
#: The strict target per pattern and hostile string (the unit test allows 1 s).
TARGET = 0.050
LIMIT = 120.0
#: A one-note compare loads the judges first (about 30 s on a quiet machine).
COMPARE_LIMIT = 300.0

_EVERY_PATTERN = """
import sys
sys.path.insert(0, sys.argv[1])
import regex_audit as audit
found, _ = audit.collect_patterns()
uses = audit.uses_of(audit.clinjudge_modules())
rows = []
for f in found:
    ops = audit.operations_for(f, uses)
    seconds, op, name = audit.slowest(f.pattern, 0.5, ops)
    if seconds > float(sys.argv[2]):  # time again: the fastest of three runs
        seconds = max(audit.timed_one(f.pattern, audit.hostile_for(f.pattern)[name], op, 0.5)
                      for op in ops)
    rows.append((seconds, f.where, op, name))
rows.sort(reverse=True)
print(len(rows), sum(s > float(sys.argv[2]) for s, *_ in rows))
for row in rows[:5]:
    print(*row, sep="\\t")
"""


def _child(code: str, *args: str, limit: float = LIMIT) -> tuple[str | None, float]:
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-P", "-c", code, *args], capture_output=True, text=True, timeout=limit
        )
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - started
    if done.returncode != 0:
        return f"ERROR {last_line(done.stderr)}", time.perf_counter() - started
    return done.stdout, time.perf_counter() - started


def every_pattern(work: Path) -> Outcome:
    out, seconds = _child(_EVERY_PATTERN, str(TESTS), str(TARGET), limit=600)
    if out is None:
        return Outcome(False, f"did not finish in {seconds:.0f} s")
    if out.startswith("ERROR"):
        return Outcome(False, out[:150])
    lines = out.strip().splitlines()
    total, slow = (int(x) for x in lines[0].split())
    worst, where, op, name = lines[1].split("\t")
    shown = "≥ 0.5 s (interrupted)" if worst == "inf" else f"{float(worst) * 1000:.0f} ms"
    return Outcome(
        slow == 0,
        f"{slow} of {total} over {TARGET * 1000:.0f} ms; slowest {where.split(':')[-1]} "
        f"{op} on {name!r}: {shown}",
    )


_NEGATION = """
import sys, time
from clinjudge.text.negation import negated_spans
phrase = sys.argv[1]
started = time.perf_counter()
negated_spans(phrase)
print(time.perf_counter() - started)
"""


def hyphen_chain_negation(work: Path) -> Outcome:
    phrase = "left-sided-chest-wall-tenderness-reproducible"
    out, seconds = _child(_NEGATION, phrase)
    if out is None or out.startswith("ERROR"):
        return Outcome(False, out or f"did not finish in {seconds:.0f} s")
    ms = float(out) * 1000
    return Outcome(ms < TARGET * 1000, f"{phrase!r}: {ms:.1f} ms")


_TRANSCRIPT = (
    "[doctor] what brings you in?\n[patient] my chest hurts on the left side when i press it.\n"
    "[doctor] any fever or shortness of breath?\n[patient] no.\n"
    "[doctor] on exam there is tenderness of the left chest wall, reproducible on palpation, "
    "no swelling or redness.\n[doctor] take ibuprofen 400 mg three times a day for a week.\n"
)
_EXAM = "Left sided chest wall tenderness reproducible on palpation with no swelling or erythema"


def _note(exam: str) -> str:
    return (
        "CHIEF COMPLAINT\n\nLeft chest pain.\n\nHISTORY OF PRESENT ILLNESS\n\nPain on pressing "
        "the left chest. Denies fever or shortness of breath.\n\nPHYSICAL EXAM\n\n"
        f"{exam}.\n\nPLAN\n\nIbuprofen 400 mg three times a day for one week.\n"
    )


def _compare_seconds(work: Path, name: str, exam: str) -> float | str:
    """Seconds of a one-note compare, or why it has none."""
    data = work / f"{name}.jsonl"
    row = {"id": name, "transcript": _TRANSCRIPT, "note": _note(exam)}
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    args = ["compare", str(data), "--judges", "inference-aware", "--backend", "offline"]
    started = time.perf_counter()
    try:
        done = clinjudge([*args, "--out", str(work / name)], timeout=COMPARE_LIMIT)
    except subprocess.TimeoutExpired:
        return f"did not finish in {COMPARE_LIMIT:.0f} s"
    if done.returncode != 0:
        return f"exit {done.returncode}: {last_line(done.stderr)[:60]}"
    return time.perf_counter() - started


def hyphenated_exam_line(work: Path) -> Outcome:
    plain = _compare_seconds(work, "plain", _EXAM)
    chained = _compare_seconds(work, "hyphens", _EXAM.replace(" ", "-"))  # eleven parts
    if isinstance(plain, str) or isinstance(chained, str):
        return Outcome(False, f"with hyphens: {chained}; without: {plain}")
    ratio = chained / plain
    return Outcome(
        ratio < 1.5, f"one-note compare {chained:.1f} s with hyphens, {plain:.1f} s without"
    )


#: One sentence of note prose (a list, a hyphen chain, numbers); repeated, it makes one line.
_PROSE = (
    "The patient denies chest pain, shortness of breath, fever, chills or "
    "left-sided-chest-wall-tenderness-reproducible and reports that the knee pain started "
    "three weeks ago after a fall, BP 120/80, HR 72, taking lisinopril 20 mg daily. "
)


def _judge_seconds(work: Path, size: int, limit: float) -> float | None:
    note = work / f"note_{size}.txt"
    note.write_text((_PROSE * (size // len(_PROSE) + 1))[:size], encoding="utf-8")
    transcript = work / "transcript.txt"
    transcript.write_text(_TRANSCRIPT, encoding="utf-8")
    args = ["judge", "--transcript", str(transcript), "--note", str(note), "--backend", "offline"]
    started = time.perf_counter()
    try:
        done = clinjudge([*args, "--format", "json"], timeout=limit)
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - started if done.returncode == 0 else None


def one_megabyte_line(work: Path) -> Outcome:
    small = _judge_seconds(work, 100_000, 600)
    big = _judge_seconds(work, 1_000_000, 600)
    if big is None:
        was = "did not finish" if small is None else f"{small:.0f} s for 100 kB"
        return Outcome(False, f"1 MB: did not finish in 600 s ({was})")
    if small is None:
        return Outcome(False, f"1 MB {big:.0f} s, 100 kB did not finish in 600 s")
    ratio = big / small
    detail = f"judge: 1 MB line {big:.0f} s, 100 kB {small:.0f} s (x{ratio:.1f})"
    return Outcome(ratio <= 15, detail)


ATTACKS = [
    Attack(3, "regex: every pattern on 10 kB hostile strings (< 50 ms)", every_pattern),
    Attack(3, "regex: 'left-sided-chest-wall-…' through the negation scan", hyphen_chain_negation),
    Attack(3, "regex: compare, exam line of eleven hyphenated parts", hyphenated_exam_line),
    Attack(3, "regex: judge a note of one 1 MB line", one_megabyte_line),
]
