"""MEDEC pair construction (SPEC §4 "Pairs"): twins, one-to-one matching, loaders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinjudge.datasets.items import DatasetError
from clinjudge.datasets.medec import load_pair_dataset, read_medec_csv
from clinjudge.pairs import char_overlap, match_one_to_one, word_jaccard

FIXTURES = Path(__file__).parent / "fixtures" / "medec"
CSV = FIXTURES / "medec_ms_val_sample.csv"
JSONL = FIXTURES / "medec_pairs_sample.jsonl"


def test_similarities_hand_computed() -> None:
    assert word_jaccard("a b c", "B, C d") == pytest.approx(2 / 4)
    assert word_jaccard("", "") == 0.0
    # Indel distance 2 (delete d, insert e) over 8 characters
    assert char_overlap("abcd", "abce") == pytest.approx(0.75)
    assert char_overlap("カルテ記載", "カルテ記載") == 1.0


def test_matching_is_one_to_one_and_maximizes_total_similarity() -> None:
    left = ["a b c d e f g h i j", "a b c d e f j q"]
    right = ["a b c d e f g h i j", "a b c d e f g h i z"]
    # L0-R0 1.0, L0-R1 9/11; L1-R0 7/11 (eligible), L1-R1 6/12 (not eligible).
    # Greedy would take L0-R0 and leave L1 unmatched; the optimal assignment pairs both.
    matches = match_one_to_one(left, right)
    assert [(m.left, m.right) for m in matches] == [(0, 1), (1, 0)]
    assert matches[0].similarity == pytest.approx(9 / 11)
    assert match_one_to_one(left, right, threshold=0.9) == [(0, 0, 1.0)]
    assert match_one_to_one([], right) == []


def test_character_overlap_matching_option() -> None:
    left = ["患者は右膝の痛みを訴えた。", "全く別の文章です"]
    right = ["患者は左膝の痛みを訴えた。"]
    matches = match_one_to_one(left, right, similarity="char_overlap")
    assert [(m.left, m.right) for m in matches] == [(0, 0)]
    assert matches[0].similarity >= 0.85


def test_csv_twins_pairing_uses_corrected_text() -> None:
    data = load_pair_dataset(CSV)
    assert data.pairing == "twins" and len(data.sha256) == 64
    assert len(data.pairs) == 5  # every erroneous note has a Corrected Text twin
    assert len(data.notes) == 9 + 5  # the dataset's notes plus the twins
    pair = data.pairs[0]
    assert (pair.pair_id, pair.error_note_id, pair.clean_note_id) == (
        "ms-val-0",
        "ms-val-0",
        "ms-val-0:corrected",
    )
    assert pair.error_sentence == "Culture tests indicate Neisseria gonorrhoeae."
    assert pair.corrected_sentence == "Culture tests indicate Trichomonas vaginalis."
    assert pair.how == "twin" and pair.error_type == "causalOrganism"
    twin = next(n for n in data.notes if n.note_id == "ms-val-0:corrected")
    assert not twin.has_error and "Trichomonas vaginalis" in twin.text
    assert data.pairs_of("ms-val-1") == []  # a dataset clean note: pointwise only


def test_csv_match_pairing_leaves_a_different_scenario_unmatched() -> None:
    data = load_pair_dataset(CSV, pairing="match")
    assert len(data.notes) == 9
    got = {(p.error_note_id, p.clean_note_id) for p in data.pairs}
    assert got == {
        ("ms-val-0", "ms-val-1"),
        ("ms-val-4", "ms-val-5"),
        ("ms-val-24", "ms-val-25"),
        ("ms-val-26", "ms-val-27"),
    }
    assert all(p.how == "matched" and p.similarity >= 0.6 for p in data.pairs)
    assert data.pairs_of("ms-val-3") == []  # best Jaccard 0.19: unmatched
    assert data.provenance()["n_matched_pairs"] == 4


def test_pair_jsonl_matches_the_csv_twins() -> None:
    data = load_pair_dataset(JSONL)
    csv_data = load_pair_dataset(CSV)
    csv_pairs = {(p.error_note_id, p.clean_note_id) for p in csv_data.pairs}
    assert {(p.error_note_id, p.clean_note_id) for p in data.pairs} <= csv_pairs
    texts = {n.note_id: n.text for n in csv_data.notes}
    assert all(texts[n.note_id] == n.text for n in data.notes)
    assert [p.pair_id for p in data.head(2).pairs] == ["ms-val-0", "ms-val-4"]
    assert len(data.head(2).notes) == 4


def test_reused_clean_note_is_judged_once(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in JSONL.read_text().splitlines()][:2]
    rows[1]["corrected_note"] = rows[0]["corrected_note"]
    path = tmp_path / "reuse.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = load_pair_dataset(path)
    assert len(data.notes) == 3
    assert data.pairs[0].clean_note_id == data.pairs[1].clean_note_id
    assert len(data.pairs_of(data.pairs[0].clean_note_id)) == 2


def test_bad_inputs_raise_one_line_dataset_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_pair_dataset(tmp_path / "missing.csv")
    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text("id,text\n1,x\n")
    with pytest.raises(DatasetError, match="missing column"):
        read_medec_csv(bad_csv)
    flag_csv = tmp_path / "flag.csv"
    flag_csv.write_text("Text ID,Text,Error Flag\nx,some text,maybe\n")
    with pytest.raises(DatasetError, match="row 2: Error Flag"):
        load_pair_dataset(flag_csv)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"text_id": "a"}\nnot json\n')
    with pytest.raises(DatasetError, match="line 1: missing"):
        load_pair_dataset(broken)
    with pytest.raises(DatasetError, match="already paired"):
        load_pair_dataset(JSONL, pairing="match")
    with pytest.raises(DatasetError, match="expected a pair"):
        load_pair_dataset(FIXTURES / "PROVENANCE.md")
