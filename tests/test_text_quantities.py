"""Doses, frequencies, durations and vitals from digits and ASR spelled numbers."""

import pytest

from clinjudge.text.numbers import iter_numbers, parse_number_words
from clinjudge.text.quantities import extract_quantities, quantities_agree


def _one(text: str, kind: str | None = None):
    qs = [q for q in extract_quantities(text) if kind is None or q.kind == kind]
    assert len(qs) == 1, qs
    q = qs[0]
    assert text[q.start : q.end] == q.text
    return q


@pytest.mark.parametrize(
    ("text", "kind", "value", "value2", "unit"),
    [
        ("lisinopril forty milligrams", "dose", 40, None, "mg"),
        ("twenty five mg", "dose", 25, None, "mg"),
        ("two point five milligrams", "dose", 2.5, None, "mg"),
        ("a half tablet", "dose", 0.5, None, "tablet"),
        ("one and a half tablets", "dose", 1.5, None, "tablet"),
        ("40 mg", "dose", 40, None, "mg"),
        ("2.5mg", "dose", 2.5, None, "mg"),
        ("1,000 units", "dose", 1000, None, "units"),
        ("500 mcg", "dose", 500, None, "mcg"),
        ("one hundred and twenty over eighty", "vital", 120, 80, "mmhg"),
        ("BP 120/80", "vital", 120, 80, "mmhg"),
        ("blood pressure was 130 over 85", "vital", 130, 85, "mmhg"),
        ("heart rate 72 bpm", "vital", 72, None, "bpm"),
        ("HR: 98.", "vital", 98, None, "bpm"),
        ("SPO2: 98%.", "vital", 98, None, "%"),
        ("Temperature: 98.6", "vital", 98.6, None, "degf"),
        ("ejection fraction of 45%", "percent", 45, None, "%"),
        ("once a day", "frequency", 1, None, "per_day"),
        ("daily", "frequency", 1, None, "per_day"),
        ("qd", "frequency", 1, None, "per_day"),
        ("q.d.", "frequency", 1, None, "per_day"),
        ("twice a day", "frequency", 2, None, "per_day"),
        ("bid", "frequency", 2, None, "per_day"),
        ("b.i.d.", "frequency", 2, None, "per_day"),
        ("two times a day", "frequency", 2, None, "per_day"),
        ("three times daily", "frequency", 3, None, "per_day"),
        ("tid", "frequency", 3, None, "per_day"),
        ("qid", "frequency", 4, None, "per_day"),
        ("every 8 hours", "frequency", 3, None, "per_day"),
        ("q6h", "frequency", 4, None, "per_day"),
        ("weekly", "frequency", 1, None, "per_week"),
        ("every other day", "frequency", 0.5, None, "per_day"),
        ("at night", "frequency", 1, None, "per_day"),
        ("qhs", "frequency", 1, None, "per_day"),
        ("Opening bowels x6/day", "frequency", 6, None, "per_day"),
        ("six or seven times a day", "frequency", 6, 7, "per_day"),
        ("for three weeks", "duration", 3, None, "week"),
        ("x 2 weeks", "duration", 2, None, "week"),
        ("3/7 hx of diarrhea", "duration", 3, None, "day"),
        ("2/52 ago", "duration", 2, None, "week"),
        ("6/12", "duration", 6, None, "month"),
        ("Review in 3-5d", "duration", 3, 5, "day"),
        ("for the past couple of weeks", "duration", 2, None, "week"),
        ("vomited twice today", "count", 2, None, "times"),
        ("50-year-old female", "other", 50, None, "years_old"),
        ("Severity 8/10.", "other", 8, 10, "/10"),
        ("pain is seven out of ten", "other", 7, 10, "/10"),
        ("a three out of six systolic murmur", "other", 3, 6, "ratio"),
        ("Total cholesterol 222 mg/dL", "other", 222, None, "mg/dl"),
    ],
)
def test_extract_quantity(text, kind, value, value2, unit):
    q = _one(text)
    assert (q.kind, q.unit) == (kind, unit)
    assert q.value == pytest.approx(value)
    assert q.value2 == (pytest.approx(value2) if value2 is not None else None)


def test_dose_and_frequency_in_one_sentence():
    text = "i take , uh , twenty milligrams once a day for two weeks"
    got = [(q.kind, q.value, q.unit) for q in extract_quantities(text)]
    assert got == [("dose", 20, "mg"), ("frequency", 1, "per_day"), ("duration", 2, "week")]


def test_bare_numbers_and_noise():
    assert [q.kind for q in extract_quantities("dispense 8")] == ["other"]
    assert extract_quantities("no one knows") == []
    assert extract_quantities("HbA1c is high") == []
    assert extract_quantities("activities of daily living") == []


@pytest.mark.parametrize(
    ("a", "b", "agree"),
    [
        ("0.5 mg", "500 mcg", True),
        ("1 g", "1000 mg", True),
        ("2 weeks", "14 days", True),
        ("20 mg", "10 mg", False),
        ("twenty milligrams", "20 mg", True),
        ("bid", "twice a day", True),
        ("every 8 hours", "tid", True),
        ("weekly", "every 7 days", True),
        ("daily", "bid", False),
        ("120/80", "one hundred twenty over eighty", True),
        ("120/80", "120/90", False),
        ("six or seven times a day", "6 times a day", True),
        ("3-5 days", "4 days", True),
        ("6/12", "26 weeks", True),
        ("37 degrees c", "98.6 degrees f", True),
        ("Grade 3/6", "three out of six", True),
        ("Grade 3/6", "2/6", False),
        ("20 mg", "2 tablets", None),
        ("2 weeks", "bid", None),
        ("dispense 8", "dispense 10", None),
    ],
)
def test_quantities_agree(a, b, agree):
    qa, qb = extract_quantities(a)[0], extract_quantities(b)[0]
    assert quantities_agree(qa, qb) is agree
    assert quantities_agree(qb, qa) is agree


@pytest.mark.parametrize(
    ("words", "value"),
    [
        (["one", "hundred", "twenty"], 120),
        (["three", "thousand", "two", "hundred"], 3200),
        (["point", "five"], 0.5),
        (["twenty", "five"], 25),
        (["five", "six"], None),
        (["twelve", "three"], None),
    ],
)
def test_parse_number_words(words, value):
    assert parse_number_words(words) == value


def test_number_runs_are_cut_into_valid_numbers():
    text = "five six , twenty-five and COVID-19"
    assert [(text[s:e], v) for s, e, v in iter_numbers(text)] == [
        ("five", 5),
        ("six", 6),
        ("twenty-five", 25),
        ("19", 19),
    ]


def test_digits_then_a_scale_word_are_one_number():
    text = "metformin 5 hundred mg, 2 thousand five hundred steps, 8 hundred"
    assert [(text[s:e], v) for s, e, v in iter_numbers(text)] == [
        ("5 hundred", 500),
        ("2 thousand five hundred", 2500),
        ("8 hundred", 800),
    ]


def test_a_spoken_repetition_is_the_same_number_twice():
    text = "guaifenesin six hundred six hundred milligrams, five five"
    assert [(text[s:e], v) for s, e, v in iter_numbers(text)] == [
        ("six hundred", 600),
        ("six hundred", 600),
        ("five", 5),
        ("five", 5),
    ]
