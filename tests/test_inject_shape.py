"""The edit-shape check (clinjudge.inject.shape, SPEC §5 DESTROY / WRITE / SENTENCES / LENGTH):
measurements of single edits, the limits accepting a valid single edit and rejecting a rewrite
of the whole answer, and the verification of a model's claimed spans."""

from __future__ import annotations

from clinjudge.inject.shape import ShapeLimits, check_shape, measure_edit, span_violations
from clinjudge.inject.taxonomy import TAXONOMY

NOTE = (
    "HPI\n\nShe reports right knee pain for 3 days. She denies any fever.\n\n"
    "PLAN\n\nStart meloxicam 15 mg once daily. Follow up in 2 weeks."
)


def test_a_dose_change_is_one_small_region_in_one_sentence():
    shape = measure_edit(NOTE, NOTE.replace("15 mg", "30 mg"))
    assert (shape.chars_removed, shape.chars_added, shape.length_change) == (2, 2, 0)
    assert (shape.regions, shape.sentences_touched) == (1, 1)
    a, b = shape.original_span
    assert NOTE[a:b] == "15"


def test_words_and_punctuation_between_changes_decide_the_regions():
    one = measure_edit(NOTE, NOTE.replace("denies any fever", "reports fever"))
    assert one.regions == 1 and one.chars_removed == len("denies any")
    two = measure_edit(NOTE, NOTE.replace("15 mg once", "30 mg twice"))
    assert two.regions == 2 and two.sentences_touched == 1


def test_a_replaced_word_counts_only_its_changed_letters():
    shape = measure_edit("NECK: No lymphadenopathy.", "NECK: Lymphadenopathy.")
    assert (shape.chars_removed, shape.chars_added, shape.regions) == (4, 1, 1)
    assert shape.original_span == (6, 24)  # the hull covers the whole changed tokens


def test_an_appended_sentence_touches_one_sentence_and_a_deleted_one_too():
    added = NOTE + " Start lisinopril 10 mg daily."
    shape = measure_edit(NOTE, added)
    assert (shape.chars_removed, shape.chars_added, shape.sentences_touched) == (0, 30, 1)
    deleted = NOTE.replace(" She denies any fever.", "")
    shape = measure_edit(NOTE, deleted)
    assert shape.chars_added == 0 and shape.sentences_touched == 1
    assert shape.length_change == -len(" She denies any fever.")


def test_shape_limits_accept_a_valid_single_edit():
    check = check_shape(NOTE, NOTE.replace("15 mg", "30 mg"), TAXONOMY["dosage"].limits)
    assert check.ok and check.violations == [] and check.reason() == ""
    record = check.record()
    assert record["ok"] and record["limits"]["destroy"] == TAXONOMY["dosage"].limits.destroy


def test_shape_limits_reject_a_rewrite_of_the_whole_answer():
    rewritten = (
        "HPI\n\nThe patient has had left hip pain for a month and a fever.\n\n"
        "PLAN\n\nStart ibuprofen 800 mg three times daily. No follow up needed."
    )
    check = check_shape(NOTE, rewritten, TAXONOMY["dosage"].limits)
    assert not check.ok
    names = {v.split(":")[0] for v in check.violations}
    assert {"DESTROY", "WRITE", "SENTENCES", "REGIONS"} <= names
    assert all("> limit" in v for v in check.violations)


def test_each_limit_is_checked_on_its_own():
    edited = NOTE.replace("right knee", "left knee")
    tight = ShapeLimits(destroy=3, write=100, sentences=1, length=100)
    assert check_shape(NOTE, edited, tight).violations == [
        "DESTROY: 4 characters removed > limit 3"  # "righ" → "lef"; the "t" stays
    ]
    short = ShapeLimits(destroy=100, write=100, sentences=1, length=2)
    longer = NOTE.replace("3 days", "3 days and nights")
    assert [v.split(":")[0] for v in check_shape(NOTE, longer, short).violations] == ["LENGTH"]


def test_an_unchanged_text_is_rejected():
    check = check_shape(NOTE, NOTE, TAXONOMY["dosage"].limits)
    assert not check.ok and check.shape is None and "nothing changed" in check.reason()


def test_claimed_spans_must_occur_and_describe_the_edit():
    edited = NOTE.replace("15 mg", "30 mg")
    assert span_violations(NOTE, edited, "15 mg", "30 mg") == []
    assert span_violations(NOTE, edited, "meloxicam 15 mg", "meloxicam 30 mg") == []
    assert (
        "not found verbatim in the original" in span_violations(NOTE, edited, "25 mg", "30 mg")[0]
    )
    assert "not found verbatim in the edited" in span_violations(NOTE, edited, "15 mg", "45 mg")[0]
    wrong = span_violations(NOTE, edited, "3 days", "2 weeks")  # both occur, but not this edit
    assert any("does not give the edited text" in v for v in wrong)
    limits = TAXONOMY["dosage"].limits
    check = check_shape(NOTE, edited, limits, original_span="20 mg", replacement="30 mg")
    assert not check.ok and "original span" in check.reason()
