"""PNG plots of a meta-evaluation report (SPEC §4/§5), drawn on matplotlib's Agg canvas. Each
``plot_*`` returns the file written, or ``None`` when it has nothing to draw.

- ``detection.png``: detection rate per error type (and all errors), one bar per judge, with the
  95% bootstrap interval as the error bar;
- ``false_flags.png``: the same for the false-flag rate of each rewrite type;
- ``auroc.png``: paired AUROC per type and judge with its 95% interval, a line at 0.5 (chance).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib import colormaps

from clinjudge.report.compare_plots import new_figure, save_figure
from clinjudge.report.formatting import is_number
from clinjudge.report.meta_eval_blocks import blocks_by_kind


def write_meta_eval_plots(report: dict[str, Any], out_dir: Path) -> list[Path]:
    """Write every plot whose data is present; return the files written."""
    out_dir = Path(out_dir)
    written = []
    for kind, name, title, label in (
        ("error", "detection.png", "Detection rate", "pairs flagged at the injected error"),
        ("rewrite", "false_flags.png", "False-flag rate", "pairs flagged at the rewrite"),
    ):
        bars = [(t, j, b["rate"], b["ci95"]) for t, j, b in blocks_by_kind(report, kind)]
        path = grouped_bars(
            bars, out_dir / name, title=f"{title} per type", ylabel=label, percent=True
        )
        if path is not None:
            written.append(path)
    auroc = [
        (t, j, b["auroc"], b["auroc_ci95"])
        for kind in ("error", "rewrite")
        for t, j, b in blocks_by_kind(report, kind)
    ]
    path = grouped_bars(
        auroc,
        out_dir / "auroc.png",
        title="Paired AUROC per type (errors: 1 is best; rewrites: 0.5 is best)",
        ylabel="P(original scored higher) + ½ P(tie)",
        chance=0.5,
    )
    if path is not None:
        written.append(path)
    return written


def grouped_bars(
    bars: list[tuple[str, str, Any, Any]],
    path: Path,
    *,
    title: str,
    ylabel: str,
    percent: bool = False,
    chance: float | None = None,
) -> Path | None:
    """Bars ``(group, series, value, [low, high])``: one cluster per group, one colour per
    series, the interval as an asymmetric error bar. Missing values are left out; no value at
    all draws nothing."""
    drawn = [b for b in bars if is_number(b[2])]
    if not drawn:
        return None
    groups = list(dict.fromkeys(g for g, _, _, _ in bars))
    series = list(dict.fromkeys(s for _, s, _, _ in bars))
    width = 0.8 / len(series)
    colours = colormaps["tab10"]
    fig = new_figure(min(13.0, max(5.0, 0.45 * len(groups) * (len(series) + 1) + 2.0)), 4.8)
    ax = fig.add_subplot()
    for i, name in enumerate(series):
        xs, ys, lows, highs = [], [], [], []
        for g, s, value, ci in drawn:
            if s != name:
                continue
            xs.append(groups.index(g) - 0.4 + width * (i + 0.5))
            ys.append(value)
            ok = ci is not None and len(ci) == 2 and all(is_number(v) for v in ci)
            lows.append(max(0.0, value - ci[0]) if ok else 0.0)
            highs.append(max(0.0, ci[1] - value) if ok else 0.0)
        ax.bar(xs, ys, width=width * 0.95, color=colours(i % 10), label=name)
        ax.errorbar(xs, ys, yerr=[lows, highs], fmt="none", ecolor="#333333", capsize=3)
        for x, y, up in zip(xs, ys, highs, strict=True):
            text = f"{100 * y:.0f}%" if percent else f"{y:.2f}"
            ax.annotate(
                text,
                (x, y + up),  # above the interval's upper bound
                xytext=(0, 2),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=7,
            )
    if chance is not None:
        ax.axhline(chance, color="grey", linestyle="--", linewidth=1, label=f"chance ({chance})")
    ax.set_xticks(range(len(groups)), [g.replace("_", " ") for g in groups], rotation=25)
    ax.set_ylim(0.0, 1.1)
    if percent:
        ax.yaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_ylabel(ylabel, fontsize=9)
    ax.set_title(
        f"{title}\n(bars: 95% bootstrap interval over pairs, clustered by note)", fontsize=10
    )
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    fig.legend(loc="outside lower center", ncol=len(series) + 1, fontsize=8, frameon=False)
    return save_figure(fig, path)
