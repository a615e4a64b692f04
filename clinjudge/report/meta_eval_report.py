"""Write a meta-evaluation report (``clinjudge meta-eval``, SPEC §4/§5) to a directory:
``report.json``, ``report.md`` and the plots of :mod:`clinjudge.report.meta_eval_plots`.

The ``report`` dict (built by :func:`clinjudge.meta_eval.run_meta_eval`)::

    {"pairs": {"path", "sha256", "n", "by_kind": {kind: n}, "by_type": {type: n}},
     "judges": {name: {"overall": {"errors": BLOCK, "rewrites": BLOCK},
                       "by_type": {type: BLOCK},
                       "by_injector": {injector: {"type", **BLOCK}},
                       "examples": {"missed_errors": [EXAMPLE], "false_flags": [EXAMPLE]}}},
     "overall": <first judge's overall>, "by_type": <first judge's by_type>, "first_judge": name,
     "failed_items": {judge: {item_id: reason}}, "usage": {judge: {...}},
     "seconds": {judge: float}, "resumed_items": {judge: int}, "method": {...},
     "provenance": {...}}

``seconds`` is the wall time of this invocation; items read back from an earlier run
(``resumed_items``) cost none.

    BLOCK = {"kind", "n", "n_judged", "excluded", "flagged", "rate",
             "detection_rate" | "false_flag_rate", "ci95", "wilson95", "differential",
             "differential_n", "differential_rate", "differential_ci95", "auroc", "auroc_ci95",
             "win", "tie", "loss", "auroc_n", "auroc_excluded", "deletions"}
    EXAMPLE = {"pair_id", "type", "before", "after", "score_original", "score_edited"}

report.md holds the tables of errors and rewrites by type, a table by offline injector (when
the pairs name one; a type with several injectors can hide a weak one), and a few pairs per type
each judge got wrong (an error it did not flag, a rewrite it flagged), so the numbers can be
read against real edits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinjudge.report.compare import write_report_files
from clinjudge.report.cost_table import cost_section
from clinjudge.report.formatting import is_number, markdown_table, percent, percent_interval
from clinjudge.report.meta_eval_blocks import KIND_LABEL, blocks_by_kind
from clinjudge.report.meta_eval_plots import write_meta_eval_plots

TABLE_HEADERS = (
    "type",
    "judge",
    "n",
    "rate",
    "95% CI",
    "Wilson 95%",
    "differential",
    "AUROC [95% CI]",
    "win/tie/loss",
    "excluded (rate/AUROC)",
)


def write_meta_eval_report(report: dict[str, Any], out_dir: Path) -> list[Path]:
    """Write ``report.json`` (strict JSON), the plots whose data is present and ``report.md``
    embedding them; return the files written."""
    return write_report_files(report, out_dir, write_meta_eval_plots, render_meta_eval_markdown)


def table_row(type_: str, judge: str, b: dict[str, Any]) -> list[str]:
    """One row of :data:`TABLE_HEADERS` (shared by report.md, the CLI and the benchmark)."""
    wtl = (
        "n/a"
        if b["win"] is None
        else f"{percent(b['win'], 0)}/{percent(b['tie'], 0)}/{percent(b['loss'], 0)}"
    )
    small = b.get("ci_note")  # "n too small": no bootstrap interval from 1-4 notes
    return [
        type_,
        judge,
        str(b["n"]),
        f"{percent(b['rate'])} ({b['flagged']}/{b['n_judged']})",
        small or percent_interval(b["ci95"]),
        percent_interval(b["wilson95"]),
        f"{percent(b['differential_rate'])} ({b['differential']}/{b['differential_n']})",
        _auroc(b["auroc"], b["auroc_ci95"]) + (f" ({small})" if small and b["auroc"] else ""),
        wtl,
        f"{b['excluded']}/{b['auroc_excluded']}",
    ]


def _auroc(value: Any, ci: Any) -> str:
    """``0.912 [0.85, 0.96]``; ``n/a`` without a value."""
    if not is_number(value):
        return "n/a"
    if not ci or not all(is_number(v) for v in ci):
        return f"{value:.3f}"
    return f"{value:.3f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def render_meta_eval_markdown(report: dict[str, Any], images: list[str] | None = None) -> str:
    pairs = report.get("pairs") or {}
    kinds = ", ".join(f"{n} {k}" for k, n in (pairs.get("by_kind") or {}).items())
    lines = [
        "# Judge meta-evaluation on matched pairs",
        "",
        f"Pairs: `{pairs.get('path')}` (sha256 `{str(pairs.get('sha256'))[:12]}…`), "
        f"{pairs.get('n')} pairs ({kinds}). Judges: {', '.join(report.get('judges') or {})}; "
        f"the top-level `overall`/`by_type` of report.json are those of "
        f"`{report.get('first_judge')}`.",
        "",
        "Rate = pairs whose edited text has a flag overlapping the changed span / pairs whose "
        "edited text was judged: the **detection rate** for injected errors (higher is better), "
        "the **false-flag rate** for legitimate rewrites (lower is better). Differential = "
        "flagged at the change in the edited text and not at the same place in the original. "
        "Paired AUROC = P(score original > score edited) + ½·P(tie): near 1 for errors, near "
        "0.5 for rewrites is good. Intervals: 95% percentile bootstrap over pairs clustered by "
        "source note (degenerate at 0% and 100%: read the Wilson interval there). "
        "*excluded* = pairs left out of the rate / of the AUROC because a side could not be "
        "judged.",
    ]
    for kind in ("error", "rewrite"):
        rows = [table_row(t, j, b) for t, j, b in blocks_by_kind(report, kind)]
        if any(r[2] != "0" for r in rows):
            lines += ["", f"## {KIND_LABEL[kind].capitalize()}", ""]
            lines.append(markdown_table(TABLE_HEADERS, rows))
    lines += _deletion_lines(report)
    lines += _injector_lines(report)
    lines += _example_lines(report)
    failed = report.get("failed_items") or {}
    if failed:
        lines += ["", "## Failed items", ""]
        for judge, items in failed.items():
            lines.append(f"- {judge}: {len(items)} items failed (re-run to retry)")
    seconds = report.get("seconds") or {}
    resumed = report.get("resumed_items") or {}
    if seconds:
        times = ", ".join(
            f"{n} {s:.1f} s ({resumed.get(n, 0)} items resumed)" for n, s in seconds.items()
        )
        lines += ["", f"Run time of this invocation: {times}."]
    for part in cost_section(report.get("cost")):
        lines += ["", part]
    for image in images or []:
        lines += ["", f"![{image}]({image})"]
    return "\n".join(lines) + "\n"


INJECTOR_HEADERS = ("injector", "type", "judge", "n", "rate", "differential", "AUROC [95% CI]")


def _injector_lines(report: dict[str, Any]) -> list[str]:
    """The "By offline injector" section (nothing when no pair names an injector)."""
    judges: dict[str, dict] = report.get("judges") or {}
    names = list(dict.fromkeys(n for j in judges.values() for n in j.get("by_injector") or {}))
    rows = []
    for name in names:
        for judge, j in judges.items():
            b = (j.get("by_injector") or {}).get(name)
            if b is None:
                continue
            cells = table_row(b["type"], judge, b)
            rows.append([name, *(cells[k] for k in (0, 1, 2, 3, 6, 7))])
    if not rows:
        return []
    return [
        "",
        "## By offline injector",
        "",
        "Rate as above (detection for error injectors, false flags for rewrite injectors).",
        "",
        markdown_table(INJECTOR_HEADERS, rows),
    ]


def _clip(text: str, width: int = 60) -> str:
    one = " ".join(text.split()).replace("`", "'")
    return one if len(one) <= width else one[: width - 1] + "…"


def _example_lines(report: dict[str, Any]) -> list[str]:
    """The "Where the judges went wrong" section: a few pairs per type and judge."""
    lines: list[str] = []
    for judge, j in (report.get("judges") or {}).items():
        examples = j.get("examples") or {}
        for key, title in (
            ("missed_errors", "errors not flagged"),
            ("false_flags", "rewrites flagged"),
        ):
            rows = [
                [e["type"], e["pair_id"], f"`{_clip(e['before'])}`", f"`{_clip(e['after'])}`"]
                for e in examples.get(key) or []
            ]
            if rows:
                lines += ["", f"### {judge}: {title}", ""]
                lines.append(markdown_table(("type", "pair", "before", "after"), rows))
    if lines:
        lines = [
            "",
            "## Where the judges went wrong",
            "",
            "At most three pairs per type and judge, in pair order; all pairs are in "
            "`pairs_scored.jsonl`.",
            *lines,
        ]
    return lines


def _deletion_lines(report: dict[str, Any]) -> list[str]:
    """A caveat for types whose every pair is a deletion (omissions)."""
    judges: dict[str, dict] = report.get("judges") or {}
    types = list(
        dict.fromkeys(
            t
            for j in judges.values()
            for t, b in j["by_type"].items()
            if b["n"] and b.get("deletions") == b["n"]
        )
    )
    if not types:
        return []
    named = ", ".join(f"`{t}`" for t in types)
    return [
        "",
        f"**Deletions** ({named}): every edit only removes text, so the edited text holds "
        "nothing to flag — a detection rate near 0 is by construction, and the paired AUROC of "
        "a hallucination-rate score moves only because the removed claims leave its "
        "denominator (removing a supported sentence lowers the score, removing a flagged one "
        "raises it). Read omissions with a recall-type score such as CEF coverage.",
    ]
