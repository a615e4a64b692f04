"""Who said it, on demand (issue 36, item 6): the attribution swap gives an examination
finding only the clinician voiced to the patient; its rewrite restates the patient's own report
in the note's voice. Both are single edits within the taxonomy's limits, and leave alone what
they must."""

from __future__ import annotations

import pytest

from clinjudge.inject.injectors import INJECTORS
from clinjudge.inject.shape import check_shape
from clinjudge.inject.taxonomy import TAXONOMY
from clinjudge.knowledge.base import KnowledgeBase

VISIT = """[doctor] what brings you in today ?
[patient] my knee has been hurting for about two weeks , mostly the right one .
[doctor] any swelling ?
[patient] a little bit after i walk .
[doctor] okay . on exam i hear a soft systolic murmur , and the right knee has an effusion .
[doctor] i think this is osteoarthritis of the right knee .
[patient] okay .
"""

NOTE = """SUBJECTIVE
She reports right knee pain for two weeks.
She reports swelling after walking.
She thinks it may be arthritis.

OBJECTIVE
Soft systolic murmur.
Right knee effusion.
No erythema.

ASSESSMENT
Osteoarthritis of the right knee.
"""


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def within_limits(kind: str, found: list) -> None:
    """Every edit is one within the shape limits of its taxonomy type."""
    taxonomy_type = next(t for t in TAXONOMY.values() if kind in t.injectors)
    for p in found:
        checked = check_shape(p.original_note, p.note, taxonomy_type.limits)
        assert checked.ok, checked.violations


def test_a_finding_only_the_clinician_voiced_is_given_to_the_patient(kb):
    found = INJECTORS["attribution_swap"].candidates(NOTE, VISIT, kb=kb, source_id="e1")
    changed = {p.note[p.start :].split("\n", 1)[0] for p in found}
    assert "The patient reports soft systolic murmur." in changed
    assert not any("osteoarthritis" in c for c in changed)  # an assessment: history too
    # the patient said "knee" herself; a negated finding asserts nothing
    assert "The patient reports right knee effusion." not in changed
    assert not any("erythema" in c for c in changed)
    assert all(p.kind == "error" and p.type == "attribution_swap" for p in found)
    within_limits("attribution_swap", found)


def test_the_patients_own_report_is_restated_in_the_notes_voice(kb):
    found = INJECTORS["voice_rewrite"].candidates(NOTE, VISIT, kb=kb, source_id="e1")
    changed = {p.note[p.start :].split("\n", 1)[0] for p in found}
    assert "Right knee pain for two weeks." in changed
    assert not any("arthritis" in c for c in changed)  # a supposition stays hers
    assert all(p.kind == "rewrite" and p.type == "voice_rewrite" for p in found)
    within_limits("voice_rewrite", found)


def test_an_untagged_transcript_gives_neither(kb):
    plain = "\n".join(line.split("] ", 1)[1] for line in VISIT.strip().splitlines())
    for kind in ("attribution_swap", "voice_rewrite"):
        assert INJECTORS[kind].candidates(NOTE, plain, kb=kb) == []
