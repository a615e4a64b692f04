"""Judges from one rubric file (issue 39): the rubric's model and loading, offline grading of
fact criteria, the grader's replies, item scores and the run's aggregate. No LangGraph here:
the graph is :mod:`clinjudge.graphs.rubric`, the judge :mod:`clinjudge.evaluators.rubric`."""
