"""Write a judge-comparison report to a directory: ``report.json``, ``report.md`` and PNG plots.

The ``report`` dict (produced by the compare pipeline)::

    {"dataset": str, "n_items": int,
     "judges": {name: {"hallucination_rate": float|None, "ci95": [lo, hi], "n_claims": int,
                       "n_hallucinated": int, "n_notes": int, "tiers": {"1": int, ..., "5": int},
                       "subtypes": {subtype: int},
                       "sections": {soap: {"n_claims": int, "n_hallucinated": int,
                                           "rate": float|None}},
                       "parse_failures": int, "errors": int, "seconds": float,
                       "seconds_per_note_median": float, "mode": str, "backend": str}},
     "paired": [{"a": judge, "b": judge, "n_notes": int, "mean_rate_difference": float,
                 "ci95": [lo, hi]}],
     "per_item": [{"id": str, judge: {"hallucination_rate": float|None, "n_claims": int}, ...}],
     "flips": [{"id": str, "claim_id": str, "section": str, "text": str,
                "verdicts": {judge: {"tier": int, "supported": bool}}}],
     "provenance": {...}}
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clinjudge.files import atomic_write_text
from clinjudge.report.compare_markdown import render_compare_markdown
from clinjudge.report.compare_plots import write_compare_plots


def write_compare_report(
    report: dict[str, Any], out_dir: Path, flagged: list[dict[str, Any]] | None = None
) -> list[Path]:
    """Write ``report.json`` (indent 2, strict JSON: NaN/inf become ``null``), the PNG plots
    whose data is present, and ``report.md`` embedding them and listing the ``flagged`` claims;
    return the files written."""

    def markdown(report: dict[str, Any], images: list[str]) -> str:
        return render_compare_markdown(report, images=images, flagged=flagged or [])

    return write_report_files(report, out_dir, write_compare_plots, markdown)


def write_report_files(
    report: dict[str, Any],
    out_dir: Path,
    write_plots: Callable[[dict[str, Any], Path], list[Path]],
    render_markdown: Callable[..., str],
) -> list[Path]:
    """``report.json`` (strict JSON), the plots ``write_plots`` draws, and ``report.md`` from
    ``render_markdown(report, images=[plot file names])``; returns the files written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "report.json"
    text = json.dumps(to_json_ready(report), indent=2, ensure_ascii=False, allow_nan=False)
    atomic_write_text(json_path, text + "\n")
    try:
        plots = write_plots(report, out_dir)
    except Exception as exc:  # noqa: BLE001 - a plot must never cost the report its other files
        print(f"clinjudge: plots not drawn: {type(exc).__name__}: {exc}", file=sys.stderr)
        plots = []
    md_path = out_dir / "report.md"
    atomic_write_text(md_path, render_markdown(report, images=[p.name for p in plots]))
    return [json_path, md_path, *plots]


def to_json_ready(value: Any) -> Any:
    """Plain JSON types: tuples → lists, numpy scalars/arrays → Python, Path → str, non-finite
    floats → ``None``, pydantic models → their ``model_dump``."""
    if hasattr(value, "model_dump"):
        return to_json_ready(value.model_dump(mode="json"))
    if isinstance(value, dict):
        return {str(k): to_json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_json_ready(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalar or array
        return to_json_ready(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value
