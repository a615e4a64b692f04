"""Reports: the compare report (JSON, Markdown, PNG plots) and the CLI's per-claim table."""

from clinjudge.report.claim_table import render_claim_table
from clinjudge.report.compare import to_json_ready, write_compare_report
from clinjudge.report.compare_markdown import exclusion_sentence, render_compare_markdown
from clinjudge.report.compare_plots import write_compare_plots

__all__ = [
    "exclusion_sentence",
    "render_claim_table",
    "render_compare_markdown",
    "to_json_ready",
    "write_compare_plots",
    "write_compare_report",
]
