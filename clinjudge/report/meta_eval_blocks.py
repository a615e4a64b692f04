"""The blocks of a meta-evaluation report (:mod:`clinjudge.meta_eval`) in the order every
reader shows them: the Markdown report, the plots and the CLI table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

KIND_LABEL = {"error": "injected errors", "rewrite": "legitimate rewrites"}
OVERALL_KEY = {"error": "errors", "rewrite": "rewrites"}


def blocks_by_kind(report: dict[str, Any], kind: str) -> Iterator[tuple[str, str, dict]]:
    """``(type, judge, block)`` for every type of ``kind`` (types in report order, then the
    overall block under the label ``all errors`` / ``all rewrites``), judges in report order."""
    judges: dict[str, dict] = report.get("judges") or {}
    types = list(
        dict.fromkeys(
            t for j in judges.values() for t, b in j["by_type"].items() if b["kind"] == kind
        )
    )
    for t in types:
        for name, j in judges.items():
            if t in j["by_type"]:
                yield t, name, j["by_type"][t]
    for name, j in judges.items():
        yield f"all {OVERALL_KEY[kind]}", name, j["overall"][OVERALL_KEY[kind]]
