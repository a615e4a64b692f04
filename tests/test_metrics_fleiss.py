"""Fleiss' κ (clinjudge.metrics.fleiss) against Fleiss-style worked examples."""

from __future__ import annotations

import pytest

from clinjudge.metrics.fleiss import fleiss_kappa, label_counts

#: The worked example of Fleiss' κ on Wikipedia ("Fleiss' kappa", worked example): 10 subjects,
#: 14 raters each, 5 categories; P̄ = 0.378, P̄_e = 0.213, κ = 0.210.
TEXTBOOK = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_the_textbook_table():
    got = fleiss_kappa([dict(enumerate(row)) for row in TEXTBOOK])
    assert got.observed == pytest.approx(0.378, abs=5e-4)
    assert got.expected == pytest.approx(0.213, abs=5e-4)
    assert got.kappa == pytest.approx(0.210, abs=5e-4) and got.n_subjects == 10


def test_a_small_table_worked_by_hand():
    # 3 raters, met / not met: P_i = 1, 1/3, 1/3, 1 -> P̄ = 2/3; p = 1/2, 1/2 -> P̄_e = 1/2
    subjects = [
        label_counts(["met", "met", "met"]),
        label_counts(["met", "met", "not"]),
        label_counts(["met", "not", "not"]),
        label_counts(["not", "not", "not"]),
    ]
    got = fleiss_kappa(subjects)
    assert (got.observed, got.expected) == (pytest.approx(2 / 3), pytest.approx(0.5))
    assert got.kappa == pytest.approx(1 / 3)


def test_a_rater_missing_a_subject_and_a_subject_rated_once():
    # subject 2 lost one rater (n_i = 2): P_2 = 1; subject 3 has one rating: left out
    subjects = [{"a": 2, "b": 1}, {"a": 2}, {"b": 1}]
    got = fleiss_kappa(subjects)
    assert got.n_subjects == 2 and got.observed == pytest.approx((1 / 3 + 1) / 2)
    assert got.expected == pytest.approx((4 / 5) ** 2 + (1 / 5) ** 2)
    assert got.kappa == pytest.approx((2 / 3 - 0.68) / (1 - 0.68))


def test_undefined_when_chance_explains_everything_or_nothing_is_paired():
    all_met = fleiss_kappa([{"met": 3}, {"met": 3}])
    assert all_met.kappa is None and all_met.observed == 1.0 and all_met.expected == 1.0
    none = fleiss_kappa([{"met": 1}, {}])
    assert none.kappa is None and none.n_subjects == 0
    perfect = fleiss_kappa([{"met": 3}, {"not": 3}])
    assert perfect.kappa == pytest.approx(1.0)


def test_the_majority_of_those_who_voted_and_a_tie_is_no_verdict():
    from clinjudge.metrics.jury import majority

    assert majority({"a": True, "b": False, "c": True}) == (True, ["a", "c"])
    assert majority({"a": True, "b": False}) == (None, [])
    assert majority({"a": "x", "b": "y", "c": "z"}) == (None, [])
    assert majority({}) == (None, [])


def test_each_juror_against_the_verdict():
    from clinjudge.metrics.jury import JurySubject, jury_agreement

    subjects = [
        JurySubject({"a": True, "b": True, "c": False}, True),
        JurySubject({"a": False, "b": False, "c": False}, False),
        JurySubject({"a": True, "b": False}, None, failed=["c"]),  # a tie
        JurySubject({}, None, failed=["a", "b", "c"]),  # no vote
    ]
    got = jury_agreement(subjects, ["a", "b", "c"])
    assert (got["ties"], got["no_votes"], got["subjects"]) == (1, 1, 4)
    assert got["by_juror"]["c"] == {"voted": 2, "failed": 2, "agreement": 0.5, "kappa": 0.0, "n": 2}
    assert got["by_juror"]["a"]["agreement"] == 1.0 and got["by_juror"]["a"]["kappa"] == 1.0
    # subjects with two votes or more: {T2,F1}, {F3}, {T1,F1}: P̄ = (1/3 + 1 + 0) / 3
    assert got["kappa"]["n"] == 3 and got["kappa"]["observed"] == pytest.approx(4 / 9)
