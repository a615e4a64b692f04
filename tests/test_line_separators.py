"""Text pasted from Word, PDFs and web pages holds U+2028, U+2029 and U+0085, which
``str.splitlines()`` takes as line ends (issue 35, item 1). Every JSONL file the product writes
must read back whole through the product's own readers, and a run over such text must resume
without judging anything again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from cli_helpers import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clinjudge.agreement.runs import read_run
from clinjudge.files import dump_line, read_jsonl, rows_by_key
from clinjudge.inject.pairs import PairRecord, pair_line, read_pairs
from clinjudge.judges.error_detection import read_predictions
from clinjudge.runner import JsonlWriter, read_completed

SEPARATORS = "\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e\r"
texts = st.text(alphabet=st.sampled_from(f'ab é{SEPARATORS}\n"\\'), max_size=30)
rows = st.lists(
    st.fixed_dictionaries({"id": texts, "note": texts, "nested": st.lists(texts, max_size=3)}),
    min_size=1,
    max_size=5,
    unique_by=lambda r: r["id"],
)
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(rows)
def test_results_rows_written_by_the_runner_are_read_whole(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("runner") / "judge.jsonl"
    writer = JsonlWriter(path)
    for row in rows:
        asyncio.run(writer.write(row))
    before = path.read_bytes()
    assert read_completed(path, key="id") == {r["id"]: r for r in rows}
    assert path.read_bytes() == before  # nothing taken for torn, nothing rewritten
    assert rows_by_key(path) == {r["id"]: r for r in rows}


@FUZZ
@given(rows)
def test_prediction_rows_are_read_whole(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("detect") / "predictions.jsonl"
    # written raw, as an older version or another tool writes them
    raw = (json.dumps({**r, "note_id": r["id"]}, ensure_ascii=False) + "\n" for r in rows)
    path.write_text("".join(raw), "utf-8")
    assert set(read_predictions(path, repair=True)) == {r["id"] for r in rows}


@FUZZ
@given(texts, texts)
def test_pair_files_are_read_whole(tmp_path_factory, original, perturbed):
    before, after = f"Denies pain.{original}", f"Reports pain.{perturbed}"
    pair = PairRecord(
        pair_id=f"p{SEPARATORS}1",
        source_id="s\u2028",
        kind="error",
        type="negation_flip",
        source=f"Doctor: any pain?{SEPARATORS}\nPatient: no.",
        original=before,
        edited=after,
        original_span=(0, len(before)),
        edited_span=(0, len(after)),
        before=before,
        after=after,
    )
    path = tmp_path_factory.mktemp("pairs") / "pairs.jsonl"
    path.write_text(pair_line(pair) + pair_line(pair.model_copy(update={"pair_id": "p2"})), "utf-8")
    assert [p.pair_id for p in read_pairs(path)] == [pair.pair_id, "p2"]
    assert read_pairs(path)[0] == pair


def test_a_torn_last_line_is_still_dropped(tmp_path):
    path = tmp_path / "judge.jsonl"
    whole = dump_line({"id": "a", "note": "x\u2028y"})
    path.write_text(whole + '{"id": "b", "no', encoding="utf-8")
    assert list(read_completed(path, key="id")) == ["a"]
    assert path.read_text(encoding="utf-8") == whole


def _dataset(path: Path) -> Path:
    sep = "\u2028"
    rows = [
        {
            "id": f"enc{n}{sep}b",
            "transcript": (
                f"[doctor] any chest pain?{sep}[patient] no chest pain.\u2029"
                f"[doctor] are you taking lisinopril 10 mg daily?\x85[patient] yes."
            ),
            "note": f"Denies chest pain.{sep}Takes lisinopril 20 mg daily.\u2029Has diabetes {n}.",
        }
        for n in range(3)
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_a_run_over_such_text_resumes_without_judging_again(tmp_path):
    data = _dataset(tmp_path / "pasted.jsonl")
    out = tmp_path / "run"
    args = ("compare", data, "--judges", "lexical,inference-aware", "--backend", "offline")
    first = run(*args, "--out", out)
    assert first.exit_code == 0, first.output
    files = {p.name: p.read_bytes() for p in (out / "runs").glob("*.jsonl")}
    assert {name: len(list(read_jsonl(out / "runs" / name))) for name in files} == {
        "lexical.jsonl": 3,
        "inference-aware.jsonl": 3,
    }
    second = run(*args, "--out", out)
    assert second.exit_code == 0, second.output
    # nothing judged again: the rows files are byte for byte what the first run wrote
    assert {p.name: p.read_bytes() for p in (out / "runs").glob("*.jsonl")} == files
    verdicts = list(read_jsonl(out / "verdicts.jsonl"))
    assert verdicts and all(line.ok for line in verdicts)
    assert {line.value["id"] for line in verdicts} == {f"enc{n}\u2028b" for n in range(3)}
    assert len((out / "verdicts.jsonl").read_text("utf-8").splitlines()) == len(verdicts)
    judged = read_run(out)
    assert sorted(judged.items) == sorted(f"enc{n}\u2028b" for n in range(3))
