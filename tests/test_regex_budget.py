"""Regular expressions that cannot explode (issue 35): every pattern clinjudge runs, found by
:mod:`regex_audit` (module globals, containers, class attributes, ``re.*`` calls in functions,
run-time builders), finishes each operation the code uses on 10 kB hostile strings within
:data:`BUDGET` seconds.

The budget is generous so that a loaded two-core machine does not make the test flaky:
catastrophic backtracking costs seconds to hours on these strings, a linear pattern a few
milliseconds. The strict target (< 50 ms per pattern and string) is measured by
``bench/bench_faults.py --only regex``.
"""

from __future__ import annotations

import re
from functools import cache

import pytest
import regex_audit as audit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: Seconds one operation on one 10 kB string may take.
BUDGET = 1.0


@cache
def _audit() -> tuple[list[audit.Found], list[audit.CallSite], audit.Uses]:
    found, uncovered = audit.collect_patterns()
    return found, uncovered, audit.uses_of(audit.clinjudge_modules())


FOUND, _, _ = _audit()
BY_NAME = {f.where: f for f in FOUND}


def _named(where: str) -> audit.Found:
    return BY_NAME[where]


def test_every_pattern_built_at_run_time_is_covered():
    _, uncovered, _ = _audit()
    assert uncovered == [], "add each call site to regex_audit.BUILDERS"


def test_the_audit_reaches_every_kind_of_pattern():
    wheres = set(BY_NAME)
    assert len(FOUND) > 300
    assert "clinjudge.text.negation:_LIST_THEN_NO" in wheres  # a module global
    assert "clinjudge.text.negation:_RX['neg_pre']" in wheres  # a dict value
    assert any(w.startswith("clinjudge.text.quantities:_COMPILED[") for w in wheres)  # a table
    assert any("@" in w and " re.search" in w for w in wheres)  # a literal in a function
    assert "clinjudge.judges.numeric_answer:value_pattern()" in wheres  # a run-time builder


def test_operations_follow_the_code():
    _, _, uses = _audit()
    ops = {w: audit.operations_for(_named(w), uses) for w in BY_NAME}
    assert ops["clinjudge.text.negation:_LIST_THEN_NO"] == {"match"}
    assert ops["clinjudge.text.sections:_COLON_LABEL_RE"] == {"match"}  # looped, then .match
    assert ops["clinjudge.text.negation:_RX['neg_pre']"] == {"finditer"}  # passed, then .finditer
    assert ops["clinjudge.judges.numeric_answer:value_pattern()"] == audit.ALL_OPERATIONS


def test_an_explosive_pattern_is_caught_and_interrupted():
    nested = re.compile(r"^(?:[a-z'/-]+\s*(?:,|or|and)?\s*){1,8}?,\s*no$")  # today's bug, in short
    seconds, operation, name = audit.slowest(nested, limit=0.2)
    assert seconds == float("inf") and operation == "search"
    assert name  # the hostile string that stopped it


@pytest.mark.parametrize("where", sorted(BY_NAME))
def test_pattern_finishes_hostile_strings(where):
    found = _named(where)
    _, _, uses = _audit()
    operations = audit.operations_for(found, uses)
    for name, text in audit.hostile_for(found.pattern).items():
        for operation in operations:
            seconds = audit.timed_one(found.pattern, text, operation, BUDGET)
            assert seconds <= BUDGET, f"{where}: {operation} on {name!r} ran past {BUDGET} s"


#: Pieces hostile strings are made of: each pattern's own words and the separators between.
_PIECES = [" ", "  ", ",", ", ", ".", "-", "/", "'", ":", ";", "\t", "\n", "(", ")", "*", "#", "1"]


@settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_generated_strings_finish_every_pattern(data):
    found = data.draw(st.sampled_from(FOUND), label="pattern")
    words = audit.literal_words(found.pattern) or ["a"]
    unit = data.draw(
        st.lists(st.sampled_from(words + _PIECES), min_size=1, max_size=12).map("".join),
        label="unit",
    )
    tail = data.draw(st.sampled_from(["", "x", "!", " ", "\u2028"]), label="tail")
    text = (unit * (audit.SIZE // len(unit) + 1))[: audit.SIZE - len(tail)] + tail
    _, _, uses = _audit()
    for operation in audit.operations_for(found, uses):
        seconds = audit.timed_one(found.pattern, text, operation, BUDGET)
        assert seconds <= BUDGET, f"{found.where}: {operation} on {unit!r}… ran past {BUDGET} s"
