"""Body side mentions and left/right conflicts (SPEC §1 tier 5, SPEC §5 laterality error)."""

import pytest

from clinjudge.text.laterality import Laterality, lateralities_conflict, laterality_mentions


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("right knee pain", [("right", "right", "knee")]),
        ("right middle finger distal phalanx fracture", [("right", "right", "finger")]),
        ("l knee swelling", [("left", "l", "knee")]),
        ("Rt shoulder", [("right", "Rt", "shoulder")]),
        ("left-sided headache", [("left", "left", "head")]),
        ("Headache on left side.", [("left", "left", "head")]),
        ("pain in my knee on the right", [("right", "right", "knee")]),
        ("both knees", [("bilateral", "both", "knee")]),
        ("edema of the bilateral lower extremities", [("bilateral", "bilateral", "leg")]),
        ("Auscultation of Lungs: Clear bilaterally.", [("bilateral", "bilaterally", "lung")]),
        ("Associated LLQ pain", [("left", "LLQ", "abdomen")]),
        ("right side", [("right", "right", None)]),
        # discourse uses of right / left / both are not sides
        ("all right , so your knee", []),
        ("right now my left knee hurts", [("left", "left", "knee")]),
        ("i left work early", []),
        ("both of us", []),
    ],
)
def test_laterality_mentions(text, expected):
    got = laterality_mentions(text)
    assert [(m.side, text[m.start : m.end], m.site) for m in got] == expected


@pytest.mark.parametrize(
    ("a", "b", "conflict"),
    [
        (("left", "knee"), ("right", "knee"), True),
        (("left", "knee"), ("right", "ankle"), False),
        (("left", None), ("right", "knee"), True),
        (("left", "knee"), ("left", "knee"), False),
        (("bilateral", "knee"), ("right", "knee"), True),
        (("bilateral", None), ("right", "knee"), False),
        (("bilateral", "knee"), ("left", "hip"), False),
    ],
)
def test_lateralities_conflict(a, b, conflict):
    la, lb = Laterality(a[0], 0, 1, a[1]), Laterality(b[0], 0, 1, b[1])
    assert lateralities_conflict(la, lb) is conflict
    assert lateralities_conflict(lb, la) is conflict


def test_note_vs_transcript_conflict():
    note = laterality_mentions("Examination of the left knee: Some swelling present.")
    said = laterality_mentions("okay which knee was it ? my right knee")
    assert lateralities_conflict(note[0], said[0])
