"""Dataset loaders: bundled eval set, column aliases, benchmark wrappers, every DatasetError."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest

from clinjudge.datasets import (
    DatasetError,
    Item,
    bundled_sets,
    load_aci_bench,
    load_items,
    load_mts_dialog,
    load_primock57,
    strip_transcription_markup,
)

FIXTURES = Path(__file__).parent / "fixtures" / "datasets"


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- bundled set -------------------------------------------------------------------------------


def test_bundled_aci_demo_loads_with_unique_nonempty_items():
    assert "aci-demo" in bundled_sets()
    dataset = load_items("aci-demo")
    assert dataset.name == "aci-demo"
    assert len(dataset) >= 8
    ids = [item.id for item in dataset.items]
    assert len(set(ids)) == len(ids)
    assert all(item.transcript.strip() and item.note.strip() for item in dataset.items)
    assert all(
        "[doctor]" in item.transcript and "[patient]" in item.transcript for item in dataset.items
    )
    assert dataset.sha256 == hashlib.sha256(dataset.path.read_bytes()).hexdigest()


def test_bundled_aci_demo_covers_subsets_specialties_and_header_styles():
    items = load_items("aci-demo").items
    assert {item.meta["dataset"] for item in items} == {"virtassist", "virtscribe", "aci"}
    assert len({item.meta["specialty"] for item in items}) == len(items)
    headers = {h for item in items for h in item.meta["note_headers"]}
    assert {"HPI:", "IMPRESSION", "ASSESSMENT AND PLAN", "ASSESSMENT", "PLAN"} <= headers
    assert all(item.meta["split"] == "train" for item in items)


def test_limit_keeps_first_rows():
    dataset = load_items("aci-demo", limit=3)
    assert [item.id for item in dataset.items] == [i.id for i in load_items("aci-demo").items[:3]]


# --- column aliases ----------------------------------------------------------------------------


@pytest.mark.parametrize("transcript_col", ["dialogue", "transcript", "source", "Dialogue"])
@pytest.mark.parametrize("note_col", ["note", "summary", "section_text"])
def test_csv_column_aliases(tmp_path, transcript_col, note_col):
    path = write_csv(
        tmp_path / "d.csv",
        ["extra", transcript_col, note_col],
        [["x", "[doctor] hi\n[patient] chest pain", "Chest pain."], ["y", "t2", "n2"]],
    )
    dataset = load_items(path)
    assert dataset.name == "d"
    first = dataset.items[0]
    assert first == Item(
        id="0",
        transcript="[doctor] hi\n[patient] chest pain",
        note="Chest pain.",
        meta={"extra": "x"},
    )
    assert dataset.items[1].id == "1"


@pytest.mark.parametrize("id_col", ["encounter_id", "id", "ID", "Text ID"])
def test_jsonl_id_aliases(tmp_path, id_col):
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [{id_col: "a1", "transcript": "t", "note": "n", "age": 40}, {id_col: 7, "dialogue": "x"}],
    )
    # second row lacks the detected 'transcript' column: detection uses the first row
    with pytest.raises(DatasetError, match=r"data row 2 \(line 2\), column 'transcript': empty"):
        load_items(path, strict=True)
    path = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {id_col: "a1", "transcript": "t", "note": "n", "age": 40},
            {id_col: 7, "transcript": "u", "note": "m"},
        ],
    )
    items = load_items(path).items
    assert [i.id for i in items] == ["a1", "7"]
    assert items[0].meta == {"age": 40}


def test_json_list_and_blank_lines_in_jsonl(tmp_path):
    rows = [
        {"id": "a", "dialogue": "t", "summary": "n"},
        {"id": "b", "dialogue": "u", "summary": "m"},
    ]
    path = tmp_path / "d.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    assert [i.note for i in load_items(path).items] == ["n", "m"]
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text("\n" + json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n", "utf-8")
    assert [i.id for i in load_items(jsonl).items] == ["a", "b"]


def test_explicit_columns_override_detection(tmp_path):
    path = write_jsonl(
        tmp_path / "d.jsonl", [{"row": 3, "dialogue": "t", "note": "ref", "auto": "n"}]
    )
    item = load_items(path, note_column="auto", id_column="row").items[0]
    assert (item.id, item.note, item.meta) == ("3", "n", {"note": "ref"})
    with pytest.raises(DatasetError, match="no note column 'missing'"):
        load_items(path, note_column="missing")


def test_directory_with_data_jsonl_is_a_source(tmp_path):
    (tmp_path / "myset").mkdir()
    write_jsonl(tmp_path / "myset" / "data.jsonl", [{"id": "a", "transcript": "t", "note": "n"}])
    assert load_items(tmp_path / "myset").name == "myset"


# --- benchmark wrappers on real samples ----------------------------------------------------------


def test_load_aci_bench_joins_metadata():
    dataset = load_aci_bench(FIXTURES / "aci_train_sample.csv")
    assert [i.id for i in dataset.items] == ["D2N017", "D2N018"]
    meta = dataset.items[0].meta
    assert meta["dataset"] == "virtassist"
    assert meta["source_id"] == "VA028"
    assert meta["patient_age"] == 43
    assert meta["patient_firstname"] is None
    assert meta["2nd_complaints"] == ["atopic eczema", "hx colectomy following diverticulosis"]
    assert "CC:" in dataset.items[0].note


def test_load_aci_bench_non_numeric_age_and_none_complaints(tmp_path):
    rows = list(csv.reader((FIXTURES / "aci_train_sample.csv").open(encoding="utf-8")))
    write_csv(tmp_path / "x.csv", rows[0], rows[1:2])
    write_csv(
        tmp_path / "meta.csv",
        ["encounter_id", "id", "patient_age", "2nd_complaints"],
        [["D2N017", "VS1", "22-month", "none"]],
    )
    meta = load_aci_bench(tmp_path / "x.csv", metadata_path=tmp_path / "meta.csv").items[0].meta
    assert meta == {
        "dataset": "virtassist",
        "source_id": "VS1",
        "patient_age": "22-month",
        "2nd_complaints": [],
    }
    with pytest.raises(DatasetError, match="metadata file not found"):
        load_aci_bench(tmp_path / "x.csv", metadata_path=tmp_path / "nope.csv")


def test_load_primock57_strips_markup():
    dataset = load_primock57(FIXTURES / "primock57_sample.jsonl")
    assert [i.id for i in dataset.items] == ["day3_consultation06", "day5_consultation12"]
    raw = load_primock57(FIXTURES / "primock57_sample.jsonl", strip_markup=False)
    assert any("<UNSURE>" in i.transcript or "<UNIN/>" in i.transcript for i in raw.items)
    for item in dataset.items:
        assert "<" not in item.transcript and "  " not in item.transcript
        assert item.meta["markup_stripped"] is True
        assert "presenting_complaint" in item.meta


def test_strip_transcription_markup_keeps_unsure_words():
    text = (
        "[doctor] <UNIN/> Sorry.  <UNSURE>Oh</UNSURE> <UNSURE>hey</UNSURE>, um "
        "<INAUDIBLE_SPEECH/>\n[patient] ok"
    )
    assert strip_transcription_markup(text) == "[doctor] Sorry. Oh hey, um\n[patient] ok"


def test_load_mts_dialog():
    dataset = load_mts_dialog(FIXTURES / "mts_dialog_sample.csv")
    assert [i.id for i in dataset.items] == ["0", "1", "2"]
    assert dataset.items[0].meta == {"section_header": "GENHX"}
    assert dataset.items[0].transcript.startswith("Doctor:")


# --- every DatasetError ------------------------------------------------------------------------


def test_missing_file_or_unknown_set():
    with pytest.raises(
        DatasetError, match=r"no such file, nor a bundled eval set \(bundled: .*aci-demo"
    ):
        load_items("definitely-not-a-set")


def test_unsupported_suffix(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("hello", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"d\.txt: unsupported file type '\.txt'"):
        load_items(path)


def test_invalid_jsonl_names_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "transcript": "t", "note": "n"}\n{"id": "b", \n', "utf-8")
    with pytest.raises(DatasetError, match=r"d\.jsonl: data row 2 \(line 2\): invalid JSON"):
        load_items(path, strict=True)


def test_jsonl_line_not_an_object(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("[1, 2]\n", "utf-8")
    with pytest.raises(
        DatasetError, match=r"data row 1 \(line 1\): expected a JSON object, got list"
    ):
        load_items(path, strict=True)


def test_invalid_json_names_line(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('[\n{"id": "a",\n "note": }\n]', "utf-8")
    with pytest.raises(DatasetError, match=r"d\.json: line 3: invalid JSON"):
        load_items(path)
    path.write_text('{"id": "a"}', "utf-8")
    with pytest.raises(DatasetError, match="expected a JSON list of objects, got dict"):
        load_items(path)


def test_invalid_csv_quote_names_line(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('id,dialogue,note\n1,"t","n"\n2,"unclosed,n\n', "utf-8")
    with pytest.raises(DatasetError, match=r"d\.csv: line \d+: invalid CSV"):
        load_items(path)


def test_csv_wrong_field_count(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id,dialogue,note\n1,t,n\n2,t,n,extra\n", "utf-8")
    with pytest.raises(
        DatasetError, match=r"data row 2 \(line 3\): invalid CSV, 4 fields where the header has 3"
    ):
        load_items(path, strict=True)


def test_unreadable_bytes(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"id,dialogue,note\n1,\xff\xfe,n\n")
    with pytest.raises(DatasetError, match="not UTF-8 or UTF-16 text"):
        load_items(path)


def test_empty_csv(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("", "utf-8")
    with pytest.raises(DatasetError, match="empty CSV file"):
        load_items(path)
    path.write_text("id,dialogue,note\n", "utf-8")
    with pytest.raises(DatasetError, match="no rows"):
        load_items(path)


def test_no_transcript_column_lists_columns(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["id", "text", "note"], [["1", "t", "n"]])
    with pytest.raises(
        DatasetError, match=r"no usable transcript column .*columns found: \['id', 'text', 'note'\]"
    ):
        load_items(path)


def test_no_note_column_lists_columns(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "1", "dialogue": "t", "Text": "n"}])
    with pytest.raises(DatasetError, match=r"no usable note column .*\['id', 'dialogue', 'Text'\]"):
        load_items(path)


def test_empty_note_names_row_and_column(tmp_path):
    path = write_csv(
        tmp_path / "d.csv", ["id", "dialogue", "note"], [["a", "t", "n"], ["b", "t", "  "]]
    )
    with pytest.raises(
        DatasetError, match=r"d\.csv: data row 2 \(line 3\), column 'note': empty note"
    ):
        load_items(path, strict=True)


def test_empty_transcript_names_row_and_column(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "transcript": "", "note": "n"}])
    with pytest.raises(
        DatasetError, match=r"data row 1 \(line 1\), column 'transcript': empty transcript"
    ):
        load_items(path, strict=True)


def test_non_text_note(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "transcript": "t", "note": ["n"]}])
    with pytest.raises(DatasetError, match="column 'note': note is list, not text"):
        load_items(path, strict=True)


def test_empty_id(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["id", "dialogue", "note"], [["", "t", "n"]])
    with pytest.raises(DatasetError, match=r"data row 1 \(line 2\), column 'id': empty id"):
        load_items(path, strict=True)


def test_duplicate_ids(tmp_path):
    path = write_csv(
        tmp_path / "d.csv",
        ["encounter_id", "dialogue", "note"],
        [["D1", "t", "n"], ["D2", "t", "n"], ["D1", "u", "m"]],
    )
    with pytest.raises(
        DatasetError,
        match=r"data row 3 \(line 4\), column 'encounter_id': duplicate id 'D1' "
        r"\(first seen in data row 1\)",
    ):
        load_items(path)


def test_bad_limit():
    with pytest.raises(DatasetError, match="limit must be at least 1"):
        load_items("aci-demo", limit=0)


def test_dataset_error_is_value_error_and_one_line(tmp_path):
    path = write_csv(tmp_path / "d.csv", ["id", "dialogue", "note"], [["a", "t\nmore", ""]])
    with pytest.raises(ValueError) as info:
        load_items(path)
    assert "\n" not in str(info.value)


def test_bundled_cef_and_factcheck_demo_sets_load():
    mts = load_items("mts-demo")
    assert len(mts) == 10 and all(": " in i.transcript.splitlines()[0] for i in mts.items)
    assert {"FactualRecall", "HallucinationRate"} <= set(mts.items[0].meta["human"])
    answers = load_items("medhallu-demo", require_source=False)
    labels = [i.meta["label"] for i in answers.items]
    assert labels.count("ground_truth") == labels.count("hallucinated") == 9
    assert all(i.meta["evidence"] and i.meta["question"] for i in answers.items)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_unicode_text_with_a_byte_order_mark_is_read(tmp_path, encoding):
    bom = {"utf-16-le": "\ufeff", "utf-16-be": "\ufeff"}.get(encoding, "")
    path = tmp_path / "d.csv"
    text = "encounter_id,dialogue,note\nD1,Doctor: fièvre ?,Pas de fièvre — 38 °C\n"
    path.write_bytes((bom + text).encode(encoding))
    item = load_items(path).items[0]
    assert item.id == "D1" and item.note == "Pas de fièvre — 38 °C"


def test_a_csv_message_names_the_data_row_and_the_line_where_it_starts(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(
        'encounter_id,dialogue,note\nD1,"line one\nline two\nline three",fine\nD2,"a\nb",\n'
    )
    with pytest.raises(DatasetError, match=r"data row 2 \(line 5\), column 'note': empty note"):
        load_items(path, strict=True)


def test_aci_bench_model_note_files_are_read_by_their_dialogues_column(tmp_path):
    path = tmp_path / "GPT-4_test3.csv"
    path.write_text(
        "Dialogues,Reference Summaries,note,encounter_id\n"
        "[doctor] any pain ?,reference,Denies pain.,D2N168\n"
    )
    item = load_items(path).items[0]
    assert item.transcript == "[doctor] any pain ?" and item.id == "D2N168"
    assert item.meta == {"Reference Summaries": "reference"}


def test_a_missing_column_names_the_option_that_sets_it(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"conversation": "x", "note": "n"}])
    options = {"transcript": "--source-column", "note": "--text-column"}
    with pytest.raises(DatasetError, match="; name it with --source-column COLUMN"):
        load_items(path, column_options=options)


def test_rows_that_cannot_be_judged_are_skipped_with_their_reasons(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"id": "a", "transcript": "t", "note": "fine"}\n'
        '{"id": "b", "transcript": "t", "note": "   "}\n'
        '{"id": "c", "transcript": "t",\n'
        "[1]\n"
        '{"id": "e", "transcript": "t", "note": "also fine"}\n',
        "utf-8",
    )
    data = load_items(path)
    assert [i.id for i in data.items] == ["a", "e"]
    rows = [(s.row, s.id, s.reason.split(" (")[0]) for s in data.skipped]
    assert rows == [
        ("data row 2 (line 2)", "b", "empty note"),
        ("data row 3 (line 3)", None, "invalid JSON"),
        ("data row 4 (line 4)", None, "expected a JSON object, got list"),
    ]
    assert data.skipped[0].reason == "empty note (column 'note')"
    assert data.provenance()["n_skipped"] == 3
    with pytest.raises(DatasetError, match=r"data row 2 \(line 2\), column 'note': empty note"):
        load_items(path, strict=True)


def test_a_file_with_nothing_to_judge_is_refused_with_the_first_reason(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "transcript": "t", "note": ""}])
    with pytest.raises(DatasetError, match=r"no row to judge: 1 skipped \(first: data row 1"):
        load_items(path)
