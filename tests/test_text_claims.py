"""Offline claim splitting on real notes (SPEC §1, "Claims")."""

from pathlib import Path

import pytest

from clinjudge.text.claims import is_label_only, split_claims
from clinjudge.text.sections import segment_note
from clinjudge.text.sentences import split_sentences

FIXTURES = Path(__file__).parent / "fixtures" / "text"
NOTES = [
    "aci_D2N001_note.txt",
    "aci_D2N005_note.txt",
    "aci_D2N021_note.txt",
    "aci_D2N033_note.txt",
    "primock_day1_consultation01_note.txt",
    "primock_day3_consultation06_note.txt",
    "primock_day4_consultation03_note.txt",
    "mts_11_section.txt",
]


def _claims(name: str):
    note = segment_note((FIXTURES / name).read_text())
    return note, split_claims(note)


@pytest.mark.parametrize("name", NOTES)
def test_claim_spans_round_trip_and_ids_in_order(name):
    note, claims = _claims(name)
    assert claims
    assert [c.id for c in claims] == [f"c{i}" for i in range(1, len(claims) + 1)]
    assert [c.start for c in claims] == sorted(c.start for c in claims)
    for c in claims:
        assert note.text[c.start : c.end] == c.text
        assert c.text == c.text.strip()
        sec = next(s for s in note.sections if s.start <= c.start and c.end <= s.end)
        assert (c.section, c.header) == (sec.soap, sec.header)


@pytest.mark.parametrize("name", NOTES)
def test_every_checkable_sentence_is_covered(name):
    note, claims = _claims(name)
    for sec in note.sections:
        for sent in split_sentences(note.text, sec.start, sec.end):
            covered = any(c.start < sent.end and c.end > sent.start for c in claims)
            assert covered or is_label_only(sent.text), sent.text


def test_ros_bullet_is_one_subjective_claim():
    _, claims = _claims("aci_D2N001_note.txt")
    cv = [
        c for c in claims if c.text == "Cardiovascular: Denies chest pain or dyspnea on exertion."
    ]
    assert len(cv) == 1
    assert (cv[0].section, cv[0].header) == ("subjective", "REVIEW OF SYSTEMS")
    ent = [c for c in claims if c.text.startswith("Ears, Nose, Mouth and Throat:")]
    assert len(ent) == 1  # commas inside a label do not cut


def test_coordinated_list_is_not_split():
    _, claims = _claims("aci_D2N001_note.txt")
    texts = [c.text for c in claims]
    assert (
        "The patient denies any chest pain, shortness of breath, or swelling in her legs." in texts
    )


def test_plan_markers_give_plan_claims_and_boilerplate_labels_are_skipped():
    _, claims = _claims("aci_D2N033_note.txt")
    by_text = {c.text: c for c in claims}
    assert by_text["Medical Treatment: I am going to put her in a straight leg brace and I will "
                   "prescribe some Mobic."].section == "plan"  # fmt: skip
    assert by_text["Right knee pain."].section in ("subjective", "assessment")
    assert by_text["McMurray's Test: Negative."].section == "objective"
    texts = set(by_text)
    assert "Special Testing:" not in texts
    assert "Respiratory" not in texts
    assert not any(t.endswith(":") for t in texts)


def test_semicolons_and_label_value_lists_are_cut():
    text = (
        "VITALS\n\nBlood pressure: 120/80, Heart rate: 72; Temperature: 98.6 (stable; afebrile).\n"
    )
    claims = split_claims(segment_note(text))
    assert [c.text for c in claims] == [
        "Blood pressure: 120/80",
        "Heart rate: 72",
        "Temperature: 98.6 (stable; afebrile).",
    ]
    assert {c.section for c in claims} == {"objective"}


def test_primock_terse_lines():
    _, claims = _claims("primock_day1_consultation01_note.txt")
    got = {c.text: (c.section, c.header) for c in claims}
    assert got["Asthma"] == ("subjective", "PMH")
    assert got["gastroenteritis"] == ("assessment", "Imp")
    assert got["3/7 hx of diarrhea, mainly watery."] == ("subjective", "")
    assert got["To see earlier if feeling more unwell."] == ("plan", "Plan")


def test_lone_patient_agreements_label_is_skipped():
    note = segment_note("PLAN\n\nStart lisinopril.\n\nPatient Agreements:\n")
    assert [c.text for c in split_claims(note)] == ["Start lisinopril."]


@pytest.mark.parametrize(
    ("text", "label_only"),
    [
        ("Patient Agreements:", True),
        ("- Special Testing:", True),
        ("Medical", True),
        ("HPI", True),
        ("Hypothyroidism", False),
        ("Lipid panel: Elevated cholesterol.", False),
        ("NKDA", False),
    ],
)
def test_is_label_only(text, label_only):
    assert is_label_only(text) is label_only
