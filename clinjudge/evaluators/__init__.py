"""Judges of ``clinjudge compare`` and ``clinjudge meta-eval`` behind one interface
(:class:`~clinjudge.evaluators.base.Evaluator`), each registered by ``@judge`` in a module of
this package (:mod:`.registry`): the SOAP judges, CEF, the fact-checker, the numeric-answer
check."""

from clinjudge.evaluators.base import BaseEvaluator, BuildOptions, Evaluator, check_options
from clinjudge.evaluators.registry import (
    build_evaluator,
    judge,
    judge_names,
    parse_judge_names,
    registry,
)

__all__ = [
    "BaseEvaluator",
    "BuildOptions",
    "Evaluator",
    "build_evaluator",
    "check_options",
    "judge",
    "judge_names",
    "parse_judge_names",
    "registry",
]
