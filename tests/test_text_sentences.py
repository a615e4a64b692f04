"""Sentence spans with offsets, bullets and clinical abbreviations."""

import pytest

from clinjudge.text.sentences import split_sentences


def _texts(text, *args):
    spans = split_sentences(text, *args)
    for s in spans:
        assert text[s.start : s.end] == s.text
    return [s.text for s in spans]


def test_abbreviations_decimals_and_blood_pressure_stay_whole():
    text = "Dr. Smith saw her. BP 120/80. Take 2.5 mg b.i.d. for 3 days, e.g. with food. Done."
    assert _texts(text) == [
        "Dr. Smith saw her.",
        "BP 120/80.",
        "Take 2.5 mg b.i.d. for 3 days, e.g. with food.",
        "Done.",
    ]


def test_bullets_and_one_item_per_line():
    text = "• Cardiovascular: Denies chest pain.\n1. CHF.\n2)  Diabetes.\n-\tNo pre aura,\n* Item"
    assert _texts(text) == [
        "Cardiovascular: Denies chest pain.",
        "CHF.",
        "Diabetes.",
        "No pre aura,",
        "Item",
    ]


def test_line_starting_with_number_is_not_a_bullet():
    assert _texts("1+ pitting edema.\n2.5 mg daily.") == ["1+ pitting edema.", "2.5 mg daily."]


def test_inline_dash_label_after_sentence():
    text = "- Patient Education: We discussed icing. - Medical Treatment: I prescribed Mobic."
    assert _texts(text) == [
        "Patient Education: We discussed icing.",
        "Medical Treatment: I prescribed Mobic.",
    ]


def test_asr_lowercase_and_cut_inside_token_undone():
    assert _texts("no , no chest pain . dr . smith said so .") == [
        "no , no chest pain .",
        "dr . smith said so .",
    ]
    assert _texts("Imp: ?UTI. also exclude pregnancy") == ["Imp: ?UTI.", "also exclude pregnancy"]


def test_window_offsets_are_into_the_full_text():
    text = "HEADER\n\nFirst one. Second one.\n\nNEXT"
    spans = split_sentences(text, 8, 30)
    assert [(s.start, s.text) for s in spans] == [(8, "First one."), (19, "Second one.")]


@pytest.mark.parametrize("text", ["", "   \n\n", "-\n•\n---"])
def test_nothing_to_split(text):
    assert split_sentences(text) == []


def test_sentences_split_in_threads_match_the_serial_split():
    """The LLM judge prepares a note's transcript in a worker thread while its claims are being
    extracted, so splitting must not share state between calls (pysbd's ``segment`` does)."""
    from concurrent.futures import ThreadPoolExecutor

    lines = [
        f"Patient {i} takes {i}.5 mg b.i.d. since Dr. Lee saw her. She denies pain {i}. "
        f"BP was 1{i % 10}0/80, e.g. high. Come back in {i} weeks."
        for i in range(300)
    ]
    serial = [_texts(line) for line in lines]
    with ThreadPoolExecutor(max_workers=8) as pool:
        threaded = list(pool.map(_texts, lines))
    assert threaded == serial
