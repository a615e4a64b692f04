"""The offline judge's combiner threshold as a user setting (``--option
inference-aware.combiner_threshold=0.83``): higher flags fewer claims, the setting is part of
the judge's identity (so a run does not mix verdicts of two settings), and a bad value is a
one-line error."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinjudge.errors import ConfigError
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.knowledge.base import KnowledgeBase

FIXTURES = Path(__file__).parent / "fixtures" / "soap"
#: The fixture note and three sentences the visit does not say, so the combiner weighs them.
NOTE = (FIXTURES / "note.txt").read_text() + (
    "\nHe reports good adherence to his regimen and feels his knee is improving with rest."
    "\nHe plays tennis on weekends with friends."
    "\nHe was counseled on the importance of activity modification.\n"
)


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def _flags(kb, **options) -> tuple[int, dict]:
    from clinjudge.api import evaluate

    row = evaluate(
        "inference-aware",
        NOTE,
        source=(FIXTURES / "transcript.txt").read_text(),
        options=BuildOptions(backend="offline", knowledge=kb, options=options),
    )
    return sum(v["tier"] >= 4 for v in row["verdicts"]), row


def test_a_higher_threshold_flags_no_more_and_a_lower_one_no_fewer(kb):
    default, _ = _flags(kb)
    strict, _ = _flags(kb, combiner_threshold=0.99)
    loose, _ = _flags(kb, combiner_threshold=0.05)
    assert strict < default < loose


def test_the_threshold_is_part_of_the_judges_identity(kb):
    default = build_evaluator("inference-aware", BuildOptions(backend="offline", knowledge=kb))
    strict = build_evaluator(
        "inference-aware",
        BuildOptions(backend="offline", knowledge=kb, options={"combiner_threshold": 0.83}),
    )
    assert strict.identity() != default.identity()
    assert strict.identity()["verifier"]["config"]["combiner_threshold"] == 0.83


@pytest.mark.parametrize("value", [1.5, 0, "high", True])
def test_a_threshold_outside_0_1_is_refused(kb, value):
    with pytest.raises(ConfigError, match="combiner_threshold must be a number between 0 and 1"):
        build_evaluator(
            "inference-aware",
            BuildOptions(backend="offline", knowledge=kb, options={"combiner_threshold": value}),
        )
