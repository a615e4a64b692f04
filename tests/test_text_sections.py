"""SOAP sectioning on real ACI-Bench, PriMock57 and MTS-Dialog notes (SPEC §1, "Claims")."""

from pathlib import Path

import pytest

from clinjudge.text.headers import soap_of
from clinjudge.text.sections import segment_note

FIXTURES = Path(__file__).parent / "fixtures" / "text"


def _note(name: str):
    text = (FIXTURES / name).read_text()
    return text, segment_note(text)


def _classes(note) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for s in note.sections:
        out.setdefault(s.header, set()).add(s.soap)
    return out


def _assert_partition(text, note):
    prev = 0
    for s in note.sections:
        assert prev <= s.start <= s.end <= len(text)
        assert text[s.start : s.end] == text[s.start : s.end].strip()
        prev = s.end


@pytest.mark.parametrize(
    "name",
    [
        "aci_D2N001_note.txt",
        "aci_D2N005_note.txt",
        "aci_D2N021_note.txt",
        "aci_D2N033_note.txt",
        "primock_day1_consultation01_note.txt",
        "primock_day3_consultation06_note.txt",
        "primock_day4_consultation03_note.txt",
    ],
)
def test_sections_do_not_overlap_and_cover_all_text(name):
    text, note = _note(name)
    _assert_partition(text, note)
    covered = set()
    for s in note.sections:
        covered.update(range(s.start, s.end))
    uncovered = "".join(c for i, c in enumerate(text) if i not in covered)
    # what lies outside the bodies is header text and whitespace only
    assert len(uncovered.split()) <= 4 * len(note.sections) + 4


def test_aci_virtassist_headers_map_to_soap():
    _, note = _note("aci_D2N001_note.txt")
    classes = _classes(note)
    assert classes["CHIEF COMPLAINT"] == {"subjective"}
    assert classes["HISTORY OF PRESENT ILLNESS"] == {"subjective"}
    assert classes["REVIEW OF SYSTEMS"] == {"subjective"}
    assert classes["PHYSICAL EXAMINATION"] == {"objective"}
    assert classes["VITALS REVIEWED"] == {"objective"}
    assert classes["RESULTS"] == {"objective"}
    assert classes["ASSESSMENT AND PLAN"] == {"assessment", "plan"}


def test_assessment_and_plan_splits_at_plan_markers():
    text, note = _note("aci_D2N001_note.txt")
    ap = [s for s in note.sections if s.header == "ASSESSMENT AND PLAN"]
    first_plan = next(s for s in ap if s.soap == "plan")
    assert text[first_plan.start :].startswith("• Additional Testing: We will order a repeat echo")
    back = ap[ap.index(first_plan) + 1]
    assert back.soap == "assessment"
    assert text[back.start :].startswith("Depression.")
    last = ap[-1]
    assert last.soap == "plan"
    assert "Patient Agreements:" in text[last.start : last.end]


def test_numbered_problems_return_to_assessment():
    text, note = _note("aci_D2N033_note.txt")
    ap = [s for s in note.sections if s.header == "ASSESSMENT AND PLAN"]
    assert [s.soap for s in ap] == ["assessment", "plan", "assessment", "plan"]
    assert text[ap[2].start :].startswith("2. Type 2 diabetes.")
    # exam sub-headings ("Respiratory", "Musculoskeletal") are not sections
    assert _classes(note)["PHYSICAL EXAM"] == {"objective"}
    assert "Respiratory" not in _classes(note)


def test_colon_headers_and_impression():
    text, note = _note("aci_D2N005_note.txt")
    headers = [(s.header, s.soap) for s in note.sections]
    assert headers == [
        ("CC", "subjective"),
        ("HPI", "subjective"),
        ("CURRENT MEDICATIONS", "subjective"),
        ("PAST MEDICAL HISTORY", "subjective"),
        ("EXAM", "objective"),
        ("RESULTS", "objective"),
        ("IMPRESSION", "assessment"),
        ("PLAN", "plan"),
    ]
    assert text[note.sections[0].start : note.sections[0].end] == "Right middle finger pain."


def test_virtscribe_sections_and_sub_labels():
    _, note = _note("aci_D2N021_note.txt")
    classes = _classes(note)
    assert classes["PAST HISTORY"] == {"subjective"}
    assert classes["ALLERGIES"] == {"subjective"}
    assert classes["ASSESSMENT"] == {"assessment"}
    assert classes["PLAN"] == {"plan"}
    assert classes["INSTRUCTIONS"] == {"plan"}
    assert "Medical" not in classes  # sub-label under PAST HISTORY


def test_results_sub_label_impression_stays_objective():
    text = "RESULTS\n\nCT abdomen.\nImpression: Normal CT of abdomen.\n\nPLAN\n\nFollow up.\n"
    note = segment_note(text)
    assert [(s.header, s.soap) for s in note.sections] == [
        ("RESULTS", "objective"),
        ("PLAN", "plan"),
    ]


def test_primock_inline_labels():
    text, note = _note("primock_day1_consultation01_note.txt")
    got = [(s.header, s.soap) for s in note.sections]
    assert got == [
        ("", "subjective"),
        ("PMH", "subjective"),
        ("DH", "subjective"),
        ("SH", "subjective"),
        ("Imp", "assessment"),
        ("Plan", "plan"),
    ]
    pmh = note.sections[1]
    assert text[pmh.start : pmh.end] == "Asthma"
    assert text[note.sections[0].start :].startswith("3/7 hx of diarrhea")


def test_primock_loose_separators():
    _, note = _note("primock_day4_consultation03_note.txt")
    got = [(s.header, s.soap) for s in note.sections]
    assert got == [
        ("", "subjective"),
        ("HPC", "subjective"),
        ("PMHx", "subjective"),
        ("Dhx", "subjective"),
        ("Oex", "objective"),
        ("FHx", "subjective"),
        ("DDx", "assessment"),
        ("Plan", "plan"),
    ]


def test_primock_spaced_colon_headers():
    _, note = _note("primock_day3_consultation06_note.txt")
    assert [(s.header, s.soap) for s in note.sections] == [
        ("History", "subjective"),
        ("Past medical history", "subjective"),
        ("Plan", "plan"),
    ]


def test_midline_codes_and_nkda():
    text = "PC: Abdominal pain. HPC: Periumbilical pain. Imp: appendicitis?\nNKDA\nPlan: bloods"
    note = segment_note(text)
    got = [(s.header, s.soap, text[s.start : s.end]) for s in note.sections]
    assert got == [
        ("PC", "subjective", "Abdominal pain."),
        ("HPC", "subjective", "Periumbilical pain."),
        ("Imp", "assessment", "appendicitis?"),
        ("", "subjective", "NKDA"),
        ("Plan", "plan", "bloods"),
    ]


def test_bare_title_line_needs_blank_line_before():
    text = "Plan\nTSH, FBC,\nExamination\nGP review.\n\nFollow-up.\n"
    note = segment_note(text)
    assert [(s.header, s.soap) for s in note.sections] == [("Plan", "plan")]


@pytest.mark.parametrize("name", ["mts_11_section.txt", "mts_307_section.txt"])
def test_mts_section_codes(name):
    text, note = _note(name)
    assert [(s.header, s.soap) for s in note.sections] == [("GENHX", "subjective")]
    assert note.sections[0].start == len("GENHX\n")


@pytest.mark.parametrize(
    ("label", "soap"),
    [
        ("PASTMEDICALHX", "subjective"),
        ("FAM/SOCHX", "subjective"),
        ("ROS", "subjective"),
        ("EXAM", "objective"),
        ("EDCOURSE", "objective"),
        ("DIAGNOSIS", "assessment"),
        ("DISPOSITION", "plan"),
        ("**Assessment and Plan:**", "assessment"),
        ("## Objective", "objective"),
        ("O/E:", "objective"),
        ("Medications", "subjective"),
        ("Lipid panel", None),
    ],
)
def test_header_vocabulary(label, soap):
    assert soap_of(label) == soap


def test_unheaded_note_is_one_subjective_section():
    note = segment_note("Cough for 3 days.\nNo fever.")
    assert [(s.header, s.soap, s.start) for s in note.sections] == [("", "subjective", 0)]


def test_empty_note():
    assert segment_note("").sections == []
    assert segment_note("   \n").sections == []


def test_soap_letter_headers_open_their_sections():
    note = "S: Knee pain for 2 weeks.\nO - Knee swollen.\nA: Sprain.\nP: Ice and rest."
    got = [(s.header, s.soap, note[s.start : s.end]) for s in segment_note(note).sections]
    assert got == [
        ("S", "subjective", "Knee pain for 2 weeks."),
        ("O", "objective", "Knee swollen."),
        ("A", "assessment", "Sprain."),
        ("P", "plan", "Ice and rest."),
    ]


def test_a_lone_p_in_a_vitals_list_is_a_pulse_not_a_plan():
    note = "VITALS\nBP: 120/80\nP: 72\n\nHISTORY\nKnee pain."
    assert [s.soap for s in segment_note(note).sections] == ["objective", "subjective"]
