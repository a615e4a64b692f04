"""Normalised tokens shared by BM25 retrieval and the lexical judge."""

import pytest

from clinjudge.text.normalize import content_tokens, word_tokens


def test_stems_match_across_inflections():
    assert content_tokens("The patient denies knee pain.") == ["deni", "knee", "pain"]
    assert content_tokens("i , i denied , um , any pain in my knees") == ["deni", "pain", "knee"]
    assert set(content_tokens("knees")) == set(content_tokens("knee"))
    assert content_tokens("fevers") == content_tokens("fever")


def test_spelled_numbers_become_digits_and_units_canonical():
    assert content_tokens("I take forty milligrams for two wks") == [
        "take",
        "40",
        "mg",
        "2",
        "week",
    ]
    assert content_tokens("twenty five units, two point five mg") == ["25", "units", "2.5", "mg"]


def test_fillers_boilerplate_and_markup_removed_negation_and_sides_kept():
    got = content_tokens(
        "okay , all right . <UNSURE>um</UNSURE> the patient reports no right knee pain"
    )
    assert got == ["no", "right", "knee", "pain"]
    assert (
        content_tokens("she doesn't smoke")
        == content_tokens("she does n't smoke")
        == [
            "not",
            "smoke",
        ]
    )


def test_deterministic():
    text = "Lisinopril 40 mg daily; BP 120/80. No chest pain."
    assert content_tokens(text) == content_tokens(text)
    assert content_tokens(text) == ["lisinopril", "40", "mg", "daili", "bp", "120", "80", "no",
                                    "chest", "pain"]  # fmt: skip


def test_word_tokens_offsets_skip_markup():
    text = "<UNIN/> Sorry, 2.5 mg"
    toks = word_tokens(text)
    assert toks == [("sorry", 8, 13), ("2.5", 15, 18), ("mg", 19, 21)]
    for w, s, e in toks:
        assert text[s:e].lower() == w


@pytest.mark.parametrize(
    ("spoken", "written"),
    [
        ("third and fourth fingers", "3rd and 4th fingers"),
        ("the second toe", "the 2nd toe"),
        ("her first visit", "her 1st visit"),
        ("the eleventh", "the 11th"),
    ],
)
def test_ordinals_are_one_reading_in_words_or_digits(spoken, written):
    # issue 36 item 5: "third and fourth fingers" restates "3rd and 4th"
    assert content_tokens(spoken) == content_tokens(written)


def test_second_as_a_unit_of_time_is_not_an_ordinal():
    assert content_tokens("wait a second") == ["wait", "second"]
    assert content_tokens("hold it 30 seconds") == ["hold", "30", "second"]
    assert content_tokens("the 3 rd") != content_tokens("the 3rd")  # a space parts them
