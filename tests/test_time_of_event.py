"""A time given to the wrong event (issue 36): the visit dates a worsening, the note dates the
onset with it. Synthetic visits; the injector's time reading is the judge's (text.times)."""

from __future__ import annotations

import pytest

from clinjudge.api import judge_note, make_setup
from clinjudge.text.times import read_times, same_time

VISIT = """[doctor] so james , what's going on ?
[patient] my knee pain has been killing me , just more so in the last three or four days or so .
[doctor] and how long have the knees been bothering you overall ?
[patient] oh , on and off for years .
[doctor] and the cough ?
[patient] the cough started about two weeks ago .
"""


@pytest.fixture(scope="module")
def setup():
    return make_setup("inference-aware", "offline")


def verdict(setup, sentence: str, transcript: str = VISIT):
    note = f"HISTORY OF PRESENT ILLNESS\n\n{sentence}\n"
    result = judge_note(transcript, note, setup=setup)
    assert len(result.report.verdicts) == 1, result.report
    return result.report.verdicts[0]


def test_times_are_read_with_their_length_and_form():
    (t,) = read_times("the cough started about two weeks ago .")
    assert t.point and t.days == 14
    (u,) = read_times("a cough for 14 days")
    assert not u.point and same_time(t, u)
    assert read_times("recheck in four months") == []  # a follow-up is no time of the history


def test_the_time_of_a_worsening_given_as_the_onset_has_no_basis(setup):
    v = verdict(setup, "The onset of the pain began 3 or 4 days ago.")
    assert v.tier == 4
    assert "got worse" in v.rationale and "three or four days" in v.rationale


def test_the_worsening_with_its_own_time_stays_supported(setup):
    assert verdict(setup, "His knee pain has worsened over the last 3 or 4 days.").tier < 4


def test_an_onset_the_visit_gives_stays_supported(setup):
    assert verdict(setup, "The cough started about 2 weeks ago.").tier < 4


def test_a_time_also_said_of_something_else_is_not_moved(setup):
    # the same length given to an onset elsewhere in the visit: no single event owns it
    visit = VISIT + "[patient] and my back pain started three or four days ago too .\n"
    assert (
        "got worse" not in verdict(setup, "The knee pain began 3 or 4 days ago.", visit).rationale
    )


def test_the_same_pain_dated_loosely_stays_supported(setup):
    # reviewers accept the worsening's time as the pain's when the claim dates the same pain
    assert (
        "got worse" not in verdict(setup, "Bilateral knee pain for the last 3 to 4 days.").rationale
    )
    assert verdict(setup, "His knees have been hurting more over the past 3 or 4 days.").tier < 4


def test_the_time_of_a_worsening_given_to_another_event_has_no_basis(setup):
    visit = VISIT + (
        "[patient] i wear the splint on the right wrist . both have really gotten worse over the "
        "last month .\n"
    )
    v = verdict(setup, "He has been wearing a splint for the last month.", visit)
    assert v.tier == 4 and "last month" in v.rationale


def test_the_rationale_quotes_whole_words(setup):
    v = verdict(setup, "The onset of the pain began 3 or 4 days ago.")
    quoted = v.rationale.split("('", 1)[1].split("')", 1)[0]
    assert quoted.split()[0] in VISIT.split()  # no word cut in half


MOVED = """[doctor] how long have you been biking ?
[patient] for like three years now .
[doctor] and the blood sugars ?
[patient] they have been in the three hundreds over the last two weeks .
[doctor] okay , and the back surgery ?
[patient] i had back surgery about ten years ago .
"""


def test_a_time_the_visit_gives_to_another_event_has_no_basis(setup):
    v = verdict(setup, "His blood sugars have been in the 300s over the last three years.", MOVED)
    assert v.tier == 4
    assert "another event" in v.rationale
    assert "three years" in v.rationale and "two weeks" in v.rationale


def test_an_answer_dates_what_its_question_asked(setup):
    # "for like three years" names no event: the question it answers does (biking)
    assert verdict(setup, "He has been biking for 3 years.", MOVED).tier < 4
    assert verdict(setup, "His sugars were in the 300s over the last 2 weeks.", MOVED).tier < 4


def test_a_time_the_visit_never_gives_this_event_is_left_to_the_other_checks(setup):
    v = verdict(setup, "He started a new diet 10 years ago.", MOVED)
    assert "another event" not in v.rationale
