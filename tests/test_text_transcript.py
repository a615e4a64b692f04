"""Transcript turns and sentences on ACI-Bench, PriMock57 and MTS-Dialog dialogues."""

from collections import Counter
from pathlib import Path

import pytest

from clinjudge.text.transcript import detect_format, parse_transcript, transcript_sentences

FIXTURES = Path(__file__).parent / "fixtures" / "text"


@pytest.mark.parametrize(
    ("name", "fmt", "speakers"),
    [
        ("aci_D2N001_dialogue.txt", "aci", {"doctor": 29, "patient": 27}),
        ("aci_D2N005_dialogue.txt", "aci", {"doctor": 19, "patient": 19}),
        ("aci_D2N033_dialogue.txt", "aci", {"doctor": 19, "patient": 18}),
        ("primock_day1_consultation01_transcript.txt", "aci", {"doctor": 53, "patient": 56}),
        ("mts_11_dialogue.txt", "mts", {"doctor": 20, "patient": 20, "other": 1}),
        ("mts_307_dialogue.txt", "mts", {"doctor": 14, "patient": 8, "other": 9}),
    ],
)
def test_turn_counts_and_speakers(name, fmt, speakers):
    text = (FIXTURES / name).read_text()
    tr = parse_transcript(text)
    assert tr.format == fmt
    assert Counter(t.speaker for t in tr.turns) == speakers
    assert [t.index for t in tr.turns] == list(range(len(tr.turns)))
    for t in tr.turns:
        assert text[t.start : t.end] == t.text
        assert not t.text.startswith(("[", "Doctor:", "Patient:"))


def test_aci_first_turn_and_untagged_continuation():
    text = (FIXTURES / "aci_D2N005_dialogue.txt").read_text()
    tr = parse_transcript(text)
    assert tr.turns[0].text == "hey , ms. hill . nice to see you ."
    # 39 non-empty lines, one of them untagged: it continues the previous turn
    cont = next(t for t in tr.turns if "all right . any other questions for me ?" in t.text)
    assert "\n" in cont.text and not cont.text.startswith("all right")


def test_mts_guest_and_trailing_untagged_line():
    tr = parse_transcript((FIXTURES / "mts_307_dialogue.txt").read_text())
    assert tr.turns[-1].speaker == "patient"
    assert tr.turns[-1].text.endswith("playing soccer.\n\nSp 3")
    tr11 = parse_transcript((FIXTURES / "mts_11_dialogue.txt").read_text())
    guest = [t for t in tr11.turns if t.speaker == "other"]
    assert guest[0].text.startswith("Hello doctor, I'm her daughter.")


def test_bracket_guest_tag_and_tag_on_its_own_line():
    text = "[doctor] any pain ?\n[patient_guest] she says no .\n[doctor]\nok , next .\n"
    tr = parse_transcript(text)
    assert [(t.speaker, t.text) for t in tr.turns] == [
        ("doctor", "any pain ?"),
        ("other", "she says no ."),
        ("doctor", "ok , next ."),
    ]


@pytest.mark.parametrize(
    ("text", "turns"),
    [
        ("Hello there.\nHow are you?\n\n", ["Hello there.", "How are you?"]),
        (
            "First para\ncontinues.\n\n  Second para.  \n",
            ["First para\ncontinues.", "Second para."],
        ),
    ],
)
def test_plain_text_turns(text, turns):
    tr = parse_transcript(text)
    assert tr.format == "plain"
    assert [t.text for t in tr.turns] == turns
    assert {t.speaker for t in tr.turns} == {"unknown"}


def test_format_detection_needs_tags():
    assert detect_format("Blood pressure: 120/80\nfine") == "plain"
    assert detect_format("Doctor: hi\nPatient: hello") == "mts"
    assert detect_format("[doctor] hi\n[patient] hello") == "aci"
    assert detect_format("") == "plain"


def test_transcript_sentences_keep_offsets_and_markup():
    text = (FIXTURES / "primock_day1_consultation01_transcript.txt").read_text()
    tr = parse_transcript(text)
    sents = transcript_sentences(tr)
    assert len(sents) > len(tr.turns)
    for s in sents:
        assert text[s.start : s.end] == s.text
        turn = tr.turns[s.turn_index]
        assert turn.start <= s.start and s.end <= turn.end and s.speaker == turn.speaker
    first = [s.text for s in sents if s.turn_index == 0]
    assert first[:3] == ["Hello?", "Hi.", "Um, should we start?"]
    assert any("<UNSURE>" in s.text for s in sents)


def test_asr_sentences():
    text = "[patient] no , no chest pain . and , um , i take lisinopril twenty milligrams ."
    sents = transcript_sentences(parse_transcript(text))
    assert [s.text for s in sents] == [
        "no , no chest pain .",
        "and , um , i take lisinopril twenty milligrams .",
    ]
