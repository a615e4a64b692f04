"""PNG plots of paired error detection (SPEC §4), matplotlib Agg canvas, no pyplot state.

- ``bcr_vs_f1.png``: each run as a point (F1, BCR) with the reference points an observer needs —
  the always-error detector (F1 = 2π/(1+π), BCR 0) and a fair coin (F1 = π/(π+½), BCR = the
  random baseline) at the run's error prevalence π — and the random-baseline line: high F1 with
  low BCR is the signature of a yes-biased detector;
- ``flag_rate.png``: share of notes flagged overall, among erroneous notes (sensitivity) and among
  clean notes (1 − specificity), with 95% Wilson intervals and the prevalence as the parity line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clinjudge.report.compare_plots import JUDGE_COLOUR, new_figure, rate_bars, save_figure
from clinjudge.report.formatting import is_number, percent

REFERENCE_COLOUR = "#999999"


def write_pairs_plots(report: dict[str, Any], out_dir: Path, label: str = "this run") -> list[Path]:
    """Both plots of one report; returns the files written (a plot without data is skipped)."""
    written = [plot_bcr_vs_f1({label: report}, out_dir / "bcr_vs_f1.png")]
    written.append(plot_flag_rate(report, out_dir / "flag_rate.png"))
    return [p for p in written if p is not None]


def plot_bcr_vs_f1(reports: Mapping[str, dict[str, Any]], path: Path) -> Path | None:
    """One point per run (label → report); reference points at the first run's prevalence."""
    points = [
        (label, r["f1"]["value"], r["bcr"]["value"])
        for label, r in reports.items()
        if is_number((r.get("f1") or {}).get("value"))
        and is_number((r.get("bcr") or {}).get("value"))
    ]
    if not points:
        return None
    first = next(iter(reports.values()))
    prevalence = first.get("prevalence") if is_number(first.get("prevalence")) else 0.5
    baseline = first.get("random_baseline") if is_number(first.get("random_baseline")) else 0.25
    fig = new_figure(6.0, 4.8)
    ax = fig.add_subplot()
    ax.axhline(baseline, color=REFERENCE_COLOUR, linestyle="--", linewidth=1)
    ax.annotate(
        f"random baseline {percent(baseline)}",
        (0.01, baseline),
        xytext=(0, 3),
        textcoords="offset points",
        fontsize=8,
        color="#555555",
    )
    references = [
        ("always-error", 2 * prevalence / (1 + prevalence), 0.0),
        ("fair coin", prevalence / (prevalence + 0.5), baseline),
    ]
    for name, x, y in references:
        ax.scatter([x], [y], marker="x", color=REFERENCE_COLOUR, s=60)
        ax.annotate(
            f"({name})",
            (x, y),
            xytext=(5, -12) if y < 0.1 else (-5, 6),
            textcoords="offset points",
            ha="left" if y < 0.1 else "right",
            fontsize=8,
            color="#555555",
        )
    merged: dict[tuple[float, float], list[str]] = {}
    for label, x, y in points:  # runs on the same spot share one point and one label
        merged.setdefault((round(x, 3), round(y, 3)), []).append(label)
    for (x, y), labels in merged.items():
        ax.scatter([x], [y], color=JUDGE_COLOUR, s=60, edgecolor="white", zorder=3)
        ax.annotate(
            ", ".join(labels),
            (x, y),
            xytext=(5, -14 if y > 0.1 else 10),
            textcoords="offset points",
            fontsize=9,
            color=JUDGE_COLOUR,
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.05, 1)
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(lambda v, _: f"{v:.1f}")
    ax.set_xlabel("F1 (pointwise)")
    ax.set_ylabel("Both-Correct Rate (pairs)")
    ax.set_title("BCR against F1: a high F1 can hide zero discrimination", fontsize=10)
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def plot_flag_rate(report: dict[str, Any], path: Path) -> Path | None:
    """Bars: flagged share overall, of erroneous notes, of clean notes (Wilson error bars)."""
    sens, spec, flag = (
        report.get("sensitivity") or {},
        report.get("specificity") or {},
        report.get("flag_rate") or {},
    )
    if not all(is_number(e.get("n")) and e.get("n") for e in (sens, spec, flag)):
        return None
    bars = [
        ("all notes", flag["k"], flag["n"]),
        ("erroneous notes", sens["k"], sens["n"]),
        ("clean notes", spec["n"] - spec["k"], spec["n"]),
    ]
    fig = new_figure(5.5, 4.2)
    ax = fig.add_subplot()
    rate_bars(ax, bars, fontsize=8)
    parity = report.get("prevalence")
    if is_number(parity):
        ax.axhline(
            parity,
            color=REFERENCE_COLOUR,
            linestyle="--",
            linewidth=1,
            label=f"error prevalence {percent(parity)} (parity)",
        )
        fig.legend(loc="outside lower center", fontsize=8, frameon=False)
    ax.set_ylim(0, 1.18)
    ax.yaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_ylabel("flagged as erroneous")
    ax.set_title(
        f"Flag rate — {report.get('bias') or 'n/a'} by the point rule, "
        f"{report.get('bias_ci') or 'n/a'} by the 95% interval",
        fontsize=10,
    )
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return save_figure(fig, path)
