"""Judges of ``clinjudge compare`` and ``clinjudge meta-eval`` behind one interface
(:class:`~clinjudge.evaluators.base.Evaluator`): the SOAP judges, CEF and the fact-checker."""

from clinjudge.evaluators.base import (
    EVALUATOR_NAMES,
    REGISTRY,
    BuildOptions,
    Evaluator,
    build_evaluator,
    parse_judge_names,
)

__all__ = [
    "EVALUATOR_NAMES",
    "REGISTRY",
    "BuildOptions",
    "Evaluator",
    "build_evaluator",
    "parse_judge_names",
]
