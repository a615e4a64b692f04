"""``agreement.html``: the agreement report as a self-contained page of the report viewer (the
tables of ``agreement.md`` and every disagreement, worst first; SPEC §9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinjudge.files import atomic_write_text
from clinjudge.report.agreement_markdown import (
    DEFINITIONS,
    first_set,
    judge_table,
    number,
    plural,
    rank_line,
    reviewed_table,
    reviewer_table,
    set_name,
    system_table,
)
from clinjudge.report.formatting import percent
from clinjudge.report.html_report import render_page


def write_agreement_html(report: dict[str, Any], out_dir: Path) -> Path:
    headers, rows = judge_table(report)
    system_headers, system_rows = system_table(report)
    html = render_page(
        "agreement.html.j2",
        r=report,
        table={"headers": headers, "rows": rows},
        systems={"headers": system_headers, "rows": system_rows},
        reviewers=dict(zip(("headers", "rows"), reviewer_table(report), strict=True)),
        reviewed=dict(zip(("headers", "rows"), reviewed_table(report), strict=True)),
        definitions=DEFINITIONS,
        ranks=rank_line(report),
        first=set_name(first_set(report)),
        plural=plural,
        num=number,
        pct=percent,
    )
    path = Path(out_dir) / "agreement.html"
    atomic_write_text(path, html)
    return path
