"""PNG plots of a judge comparison, drawn with matplotlib's Agg canvas (no display, no pyplot
global state). Each ``plot_*`` returns the file written, or ``None`` when its data is missing.

- ``rates.png``: hallucination rate per judge with 95% Wilson error bars (SPEC §8);
- ``tiers.png``: share of each tier per judge, stacked (SPEC §1 tiers);
- ``per_note.png``: per-note rate of the first two judges against each other, with the diagonal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from clinjudge.metrics.intervals import wilson_interval
from clinjudge.report.formatting import is_number, percent
from clinjudge.types import TIERS

#: Tier 2 light green and tier 3 yellow, the colours report.html uses: supported tiers told apart.
TIER_COLOURS = {1: "#1a9850", 2: "#91cf60", 3: "#fee08b", 4: "#f46d43", 5: "#a50026"}
JUDGE_COLOUR = "#4472c4"
#: Notes named on the per-note scatter (largest differences first).
LABELLED_NOTES = 6
DPI = 150


def write_compare_plots(report: dict[str, Any], out_dir: Path) -> list[Path]:
    """Write every plot whose data is present; return the files written. The SOAP plots show
    the SOAP claim judges only; ``scores.png`` the headline numbers of the others."""
    judges = report.get("judges") or {}
    soap = {n: j for n, j in judges.items() if j.get("kind", "soap") == "soap"}
    soap_report = {**report, "judges": soap}
    plots: list[Callable[[dict[str, Any], Path], Path | None]] = [
        plot_rates,
        plot_tiers,
        plot_per_note,
    ]
    written = [path for plot in plots if (path := plot(soap_report, out_dir)) is not None]
    others = {n: j for n, j in judges.items() if n not in soap}
    if (path := plot_scores(others, out_dir)) is not None:
        written.append(path)
    return written


def plot_scores(judges: dict[str, Any], out_dir: Path) -> Path | None:
    """One panel per judge: its headline numbers as horizontal bars with 95% intervals, each
    labelled with its n and its value and interval written beside the bar (an interval too
    narrow to see at a small n is still read)."""
    panels = []
    for name, j in judges.items():
        bars = [
            (
                f"{metric} (n={h['n']})" if is_number(h.get("n")) else metric,
                h["value"],
                h.get("ci95"),
            )
            for metric, h in (j.get("headline") or {}).items()
            if isinstance(h, dict) and is_number(h.get("value"))
        ]
        if bars:
            panels.append((name, bars))
    if not panels:
        return None
    fig = new_figure(6.5, 1.2 + sum(0.45 * len(bars) + 0.8 for _, bars in panels))
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, (name, bars) in zip(axes, panels, strict=True):
        labels = [metric for metric, _, _ in bars]
        values = [value for _, value, _ in bars]
        errors = None
        if all(ci and all(is_number(x) for x in ci) for _, _, ci in bars):
            errors = [
                [max(0.0, value - ci[0]) for _, value, ci in bars],
                [max(0.0, ci[1] - value) for _, value, ci in bars],
            ]
        ax.barh(labels, values, xerr=errors, color=JUDGE_COLOUR, capsize=3)
        for y, (value, (_, _, ci)) in enumerate(zip(values, bars, strict=True)):
            shown = f"{value:.3g}" if not ci else f"{value:.3g} [{ci[0]:.3g}, {ci[1]:.3g}]"
            right = max(value, ci[1]) if ci and is_number(ci[1]) else value
            ax.annotate(
                shown,
                (right, y),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=7,
            )
        ax.invert_yaxis()
        ax.set_title(f"{name} (95% interval)", fontsize=10)
        ax.margins(x=0.35)  # room for the written values
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    return save_figure(fig, out_dir / "scores.png")


def plot_rates(report: dict[str, Any], out_dir: Path) -> Path | None:
    """Bar per judge: n_hallucinated / n_claims with its Wilson interval as the error bar."""
    bars = []
    for name, j in (report.get("judges") or {}).items():
        k, n = j.get("n_hallucinated"), j.get("n_claims")
        if is_number(k) and is_number(n) and 0 <= k <= n and n > 0:
            bars.append((name, int(k), int(n)))
    if not bars:
        return None
    fig = new_figure(max(4.0, 1.4 * len(bars) + 2), 4.2)
    ax = fig.add_subplot()
    highs = rate_bars(ax, bars, fontsize=9)
    ax.set_ylim(0, min(1.0, max(highs) * 1.3 + 0.02))
    ax.yaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_ylabel("hallucinated claims (tier 4–5) / judged claims")
    ax.set_title(
        f"Hallucination rate per judge — {report.get('dataset', '')}\n(95% Wilson interval)"
    )
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return save_figure(fig, out_dir / "rates.png")


def rate_bars(ax: Any, bars: list[tuple[str, int, int]], *, fontsize: int = 9) -> list[float]:
    """One bar per ``(label, k, n)`` at k/n with its 95% Wilson interval as the error bar and
    "rate (k/n)" written above it; returns the upper bounds (for the axis limit)."""
    rates = [k / n for _, k, n in bars]
    intervals = [wilson_interval(k, n) for _, k, n in bars]
    errors = [
        [r - lo for r, (lo, _) in zip(rates, intervals, strict=True)],
        [hi - r for r, (_, hi) in zip(rates, intervals, strict=True)],
    ]
    xs = range(len(bars))
    ax.bar(xs, rates, color=JUDGE_COLOUR, width=0.6, yerr=errors, capsize=6, ecolor="#333333")
    for x, (_, k, n), rate, (_, high) in zip(xs, bars, rates, intervals, strict=True):
        ax.annotate(
            f"{percent(rate)}\n({k}/{n})",
            (x, high),
            xytext=(0, 4),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=fontsize,
        )
    ax.set_xticks(list(xs), [label for label, _, _ in bars])
    return [high for _, high in intervals]


def plot_tiers(report: dict[str, Any], out_dir: Path) -> Path | None:
    """Horizontal stacked bar per judge: the share of judged claims in each tier."""
    rows = []
    for name, j in (report.get("judges") or {}).items():
        tiers = {str(k): v for k, v in (j.get("tiers") or {}).items()}
        counts = [int(tiers.get(str(t), 0) or 0) for t in TIERS]
        if sum(counts) > 0:
            rows.append((name, counts))
    if not rows:
        return None
    fig = new_figure(8.0, 2.2 + 0.6 * len(rows))
    ax = fig.add_subplot()
    for y, (_, counts) in enumerate(rows):
        total, left = sum(counts), 0.0
        for tier, count in zip(TIERS, counts, strict=True):
            share = count / total
            ax.barh(y, share, left=left, color=TIER_COLOURS[tier], edgecolor="white", height=0.6)
            if share >= 0.05:
                text_colour = "white" if tier in (1, 5) else "black"
                ax.text(
                    left + share / 2,
                    y,
                    percent(share, 0),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color=text_colour,
                )
            left += share
    ax.set_yticks(range(len(rows)), [f"{name}\n(n={sum(c)})" for name, c in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_xlabel("share of judged claims")
    ax.set_title("Tier distribution per judge")
    handles = [ax.bar(0, 0, color=TIER_COLOURS[t], label=f"{t} {TIERS[t][0]}") for t in TIERS]
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=8, frameon=False)
    return save_figure(fig, out_dir / "tiers.png")


def plot_per_note(report: dict[str, Any], out_dir: Path) -> Path | None:
    """Scatter of per-note rates, first judge (x) against second (y); the diagonal is agreement."""
    judges = list(report.get("judges") or {})
    if len(judges) < 2:
        return None
    a, b = judges[:2]
    points = []
    for row in report.get("per_item") or []:
        rate_a = (row.get(a) or {}).get("hallucination_rate")
        rate_b = (row.get(b) or {}).get("hallucination_rate")
        if is_number(rate_a) and is_number(rate_b):
            points.append((rate_a, rate_b, str(row.get("id", ""))))
    if not points:
        return None
    fig = new_figure(5.2, 5.2)
    ax = fig.add_subplot()
    limit = min(1.0, max(0.1, max(max(p[0], p[1]) for p in points) * 1.1))
    ax.plot([0, limit], [0, limit], linestyle="--", color="grey", linewidth=1, label="equal rates")
    ax.scatter(
        [p[0] for p in points],
        [p[1] for p in points],
        color=JUDGE_COLOUR,
        alpha=0.7,
        edgecolor="white",
        s=40,
        label="one note",
    )
    # the notes the judges disagree on most are named
    for x, y, name in sorted(points, key=lambda p: -abs(p[0] - p[1]))[:LABELLED_NOTES]:
        ax.annotate(name, (x, y), xytext=(4, 3), textcoords="offset points", fontsize=7)
    above = sum(1 for x, y, _ in points if y > x)
    below = sum(1 for x, y, _ in points if y < x)
    margin = 0.02 * limit
    ax.set_xlim(-margin, limit)
    ax.set_ylim(-margin, limit)
    ax.set_aspect("equal")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_xlabel(f"{a}: hallucination rate per note")
    ax.set_ylabel(f"{b}: hallucination rate per note")
    ax.set_title(
        f"Per-note hallucination rate, {a} vs {b} (n={len(points)})\n"
        f"{a} higher on {below} notes, {b} higher on {above}, "
        f"equal on {len(points) - above - below}",
        fontsize=10,
    )
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    return save_figure(fig, out_dir / "per_note.png")


def new_figure(width: float, height: float) -> Figure:
    """A figure with constrained layout on an Agg canvas (no display, no pyplot state)."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: Figure, path: Path) -> Path:
    """PNG at ``DPI``, cropped to the drawn content (legends below the axes included)."""
    fig.savefig(path, dpi=DPI, format="png", bbox_inches="tight", pad_inches=0.15)
    return path
