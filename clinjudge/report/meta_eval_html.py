"""``report.html`` of a ``meta-eval`` run: every matched pair with its change marked and what
each judge made of it (issue 15), one self-contained page like the compare viewer
(:mod:`clinjudge.report.html_report`: Jinja2 template, plain JavaScript, data as JSON).

Per judge and pair type: the rate (detection for errors, false flags for rewrites) with its
95% interval, n and AUROC. Per pair: its type and kind, the text around the change with the
removed words struck through and the inserted ones marked (:data:`CONTEXT` characters each
side), and per judge whether it flagged the changed span, the flagged passages, the scores of
both sides and why a side was not judged. Filters: judge, kind, type, and outcome (missed
errors, false flags on rewrites, detected, clean).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from clinjudge.files import atomic_write_text
from clinjudge.report.html_report import render_page

CONTEXT = 250


def meta_eval_page_data(
    report: dict[str, Any], pairs: Sequence[Any], scores: dict[str, list[Any]]
) -> dict[str, Any]:
    """What the page shows; ``pairs``: :class:`~clinjudge.inject.pairs.PairRecord`,
    ``scores``: judge → its :class:`~clinjudge.meta_eval_scores.PairScore` list."""
    by_judge = {
        name: {s.pair_id: asdict(s) for s in judge_scores} for name, judge_scores in scores.items()
    }
    rows = []
    for p in pairs:
        os_, oe = p.original_span
        es, ee = p.edited_span
        rows.append(
            {
                "id": p.pair_id,
                "source": p.source_id,
                "kind": p.kind,
                "type": p.type,
                "rationale": p.rationale,
                "before_text": p.edited[max(0, es - CONTEXT) : es],
                "removed": p.original[os_:oe],
                "inserted": p.edited[es:ee],
                "after_text": p.edited[ee : ee + CONTEXT],
                "judges": {name: _verdict(by_judge[name].get(p.pair_id)) for name in by_judge},
            }
        )
    summary = []
    for name, judge in (report.get("judges") or {}).items():
        for type_, entry in sorted((judge.get("by_type") or {}).items()):
            summary.append(
                {
                    "judge": name,
                    "type": type_,
                    "kind": entry.get("kind"),
                    "rate": entry.get("rate"),
                    "ci95": entry.get("ci95"),
                    "n": entry.get("n_judged"),
                    "auroc": entry.get("auroc"),
                }
            )
    return {
        "judges": list(by_judge),
        "summary": summary,
        "pairs": rows,
        "version": (report.get("provenance") or {}).get("package_version", ""),
        "n_pairs": len(rows),
    }


def _verdict(score: dict[str, Any] | None) -> dict[str, Any] | None:
    if score is None:
        return None
    return {
        "flagged": score["flagged"],
        "differential": score["differential"],
        "score_original": score["score_original"],
        "score_edited": score["score_edited"],
        "flags": [f["text"] for f in score["flags_edited"]],
        "missing": score["missing"],
    }


def write_meta_eval_html(
    report: dict[str, Any], pairs: Sequence[Any], scores: dict[str, list[Any]], out_dir: Path
) -> Path:
    data = meta_eval_page_data(report, pairs, scores)
    html = render_page("meta_eval.html.j2", "meta_eval.js", data=data)
    path = Path(out_dir) / "report.html"
    atomic_write_text(path, html)
    return path
