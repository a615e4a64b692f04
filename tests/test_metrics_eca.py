"""Evidence Contrastive Analysis (SPEC §4): the hit rule and the five categories."""

from __future__ import annotations

import pytest

from clinjudge.metrics.eca import (
    EcaPair,
    eca_category,
    eca_summary,
    evidence_hits,
    fp_evidence_hit,
    is_cjk,
    tp_localization,
)

SENTENCE = "Culture tests indicate Neisseria gonorrhoeae."
CORRECTED = "Culture tests indicate Trichomonas vaginalis."


def test_substring_hit_ignores_case_whitespace_and_quotes() -> None:
    assert evidence_hits("Neisseria gonorrhoeae", SENTENCE)
    assert evidence_hits('"culture   tests INDICATE neisseria"', SENTENCE)


def test_word_coverage_boundary_at_60_percent() -> None:
    # sentence words: culture tests indicate neisseria gonorrhoeae (5)
    three_of_five = "culture indicates Neisseria gonorrhoeae"  # covers culture, neisseria, gono.
    assert evidence_hits(three_of_five, SENTENCE)  # 3/5 = 0.6
    two_of_five = "Neisseria gonorrhoeae infection"  # not a substring, covers 2/5
    assert not evidence_hits(two_of_five, SENTENCE)
    assert evidence_hits(two_of_five, SENTENCE, coverage=0.4)
    # evidence quoting a longer passage that contains the whole sentence covers 100%
    assert evidence_hits("She has no history. " + SENTENCE + " Her pulse is 106.", SENTENCE)


def test_missing_or_na_evidence_never_hits() -> None:
    for evidence in (None, "", "NA", "n/a", "  None "):
        assert not evidence_hits(evidence, SENTENCE)
    assert not evidence_hits("Neisseria", "")


def test_cjk_text_is_compared_character_by_character() -> None:
    sentence = "培养显示淋病奈瑟菌。"  # 9 CJK characters + punctuation
    assert is_cjk(sentence) and not is_cjk(SENTENCE)
    assert evidence_hits("显示淋病奈瑟菌感染", sentence)  # 7/9 characters covered
    assert not evidence_hits("淋病奈瑟菌感染", sentence)  # 5/9 = 0.56
    # word-level counting would see one "word" per sentence and miss the hit
    assert not evidence_hits("显示淋病奈瑟菌感染", sentence, cjk=False)
    assert evidence_hits("メトホルミン", "メトホルミンを投与した。", cjk=None)


def pair(error_flag, clean_flag, error_evidence, clean_evidence) -> EcaPair:
    return EcaPair(error_flag, clean_flag, error_evidence, clean_evidence, SENTENCE, CORRECTED)


HAND_MADE = [
    pair(True, True, "Neisseria gonorrhoeae", "Trichomonas vaginalis"),  # both hit
    pair(True, True, "Culture tests indicate Neisseria gonorrhoeae.", "Her pulse is 106/min"),
    pair(True, True, "Her pulse is 106/min", "indicate Trichomonas vaginalis"),  # clean only
    pair(True, True, "facial flushing", "profuse sweating"),  # no hit
    pair(True, True, "NA", "Trichomonas vaginalis"),  # flagged without evidence
    pair(None, False, None, "NA"),  # unparsed member
    pair(True, False, "Neisseria gonorrhoeae", "NA"),  # correct pair: not an ECA pair
    pair(False, True, "NA", "Trichomonas vaginalis"),  # error missed, clean flagged: not ECA
]


def test_categories_of_hand_made_outputs() -> None:
    assert [eca_category(p) for p in HAND_MADE] == [
        "both_hit",
        "error_only_hit",
        "clean_only_hit",
        "no_hit",
        "extraction_fail",
        "extraction_fail",
        None,
        None,
    ]


def test_summary_counts_rates_and_localization() -> None:
    summary = eca_summary(HAND_MADE)
    assert summary["n"] == 6 and summary["n_pred1"] == 5
    counts = {k: v["count"] for k, v in summary["categories"].items()}
    assert counts == {
        "both_hit": 1,
        "error_only_hit": 1,
        "clean_only_hit": 1,
        "no_hit": 1,
        "extraction_fail": 2,
    }
    assert summary["categories"]["extraction_fail"]["rate"] == pytest.approx(2 / 6)
    # TP-localization over the 6 flagged error notes: hits in pairs 1, 2 and 7
    tp = tp_localization(HAND_MADE)
    assert (tp.k, tp.n) == (3, 6)
    # FP-evidence-hit over the 6 flagged clean notes: hits in pairs 1, 3, 5 and 8
    fp = fp_evidence_hit(HAND_MADE)
    assert (fp.k, fp.n) == (4, 6)
    assert fp.ci95[0] < 4 / 6 < fp.ci95[1]
