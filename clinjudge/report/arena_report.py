"""The files of an arena run (SPEC §6, issue 25): ``report.json`` (everything, settings and
provenance included), ``pairs.jsonl`` (one judged pair a line), ``leaderboard.md`` (the ratings
with their intervals, Bradley–Terry beside, the win/tie/loss matrix, position bias, the
settings), ``ratings.png`` (overall Elo and Bradley–Terry per system with 95% intervals,
matplotlib's Agg canvas) and ``report.html`` (:mod:`clinjudge.report.arena_page`: the same
tables and every pair side by side)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from clinjudge.files import atomic_write, atomic_write_text, dump_line
from clinjudge.report.arena_page import write_arena_html

DPI = 150


def write_arena_report(
    report: dict[str, Any], rows: list[dict], out_dir: Path, items: list[Any]
) -> list[Path]:
    """Write the five files (``items``: the run's texts, for the pair view); return their
    paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [out_dir / n for n in ("report.json", "pairs.jsonl", "leaderboard.md", "ratings.png")]
    atomic_write_text(files[0], json.dumps(report, indent=2, ensure_ascii=False))
    atomic_write(files[1], (dump_line(row) for row in rows))
    atomic_write_text(files[2], leaderboard_markdown(report))
    plot_ratings(report, files[3])
    return [*files, write_arena_html(report, rows, items, out_dir, plot=files[3])]


def rating_interval(rating: dict[str, Any], key: str = "elo") -> str:
    """A rating's 95% interval (``key`` "elo" or "bt": "1138–1233"), else why there is none
    ("n too small", or "n/a")."""
    ci = rating.get(f"{key}_ci95")
    return (rating.get("ci_note") or "n/a") if not ci else f"{ci[0]:.0f}–{ci[1]:.0f}"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0f}"


def leaderboard_markdown(report: dict[str, Any]) -> str:
    s = report["settings"]
    lines = [
        f"# Arena: {report['dataset']}",
        "",
        f"{len(report['systems'])} systems, {report['n_encounters']} encounters, "
        f"{report['n_pairs']} pairs ({report['n_failed']} failed, left out); judge "
        f"`{report['judge']}`, backend {report['backend']}.",
        "",
        f"Elo: initial rating {s['initial']:g}, K = {s['k']:g}, {s['elo_point']}; intervals: "
        f"{s['intervals']}, seed {s['seed']}. A win counts only when the same note wins with "
        "either note shown first, else a draw. Bradley–Terry on the Elo scale "
        f"({s['initial']:g} + 400·log10 strength), order-free.",
        "",
        "## Overall",
        "",
        "| rank | system | Elo | 95% CI | Bradley–Terry | 95% CI | BT rank | matches |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in report["leaderboard"]:
        lines.append(
            f"| {e['rank']} | {e['system']} | {e['elo']:.0f} | {rating_interval(e)} | "
            f"{_num(e['bt'])} | {rating_interval(e, 'bt')} | {e['bt_rank']} | {e['n_matches']} |"
        )
    lines += ["", "## Per criterion (Elo, 95% CI)", ""]
    criteria = [c for c in report["criteria"] if c != "overall"]
    lines.append("| system | " + " | ".join(criteria) + " |")
    lines.append("|---" * (len(criteria) + 1) + "|")
    for e in report["leaderboard"]:
        cells = []
        for c in criteria:
            r = report["criteria"][c]["ratings"].get(e["system"])
            cells.append("n/a" if r is None else f"{r['elo']:.0f} ({rating_interval(r)})")
        lines.append(f"| {e['system']} | " + " | ".join(cells) + " |")
    lines += ["", "## Win / tie / loss (overall, row against column)", ""]
    matrix = report["criteria"]["overall"]["win_matrix"]
    names = list(matrix)
    lines.append("| | " + " | ".join(names) + " |")
    lines.append("|---" * (len(names) + 1) + "|")
    for a in names:
        cells = ["—" if a == b else "{win}/{tie}/{loss}".format(**matrix[a][b]) for b in names]
        lines.append(f"| {a} | " + " | ".join(cells) + " |")
    lines += ["", "## Position bias", ""]
    lines.append(
        "Share of (pair, criterion) verdicts where the same position won in both orders "
        "(so the winner changed with the order)."
    )
    lines += ["", "| criterion | rate | 95% CI | first | second | n |", "|---|---|---|---|---|---|"]
    for c, entry in report["criteria"].items():
        b = entry["position_bias"]
        rate = "n/a" if b["rate"] is None else f"{b['rate']:.1%}"
        ci = "n/a" if not b["ci95"] else f"{b['ci95'][0]:.1%}–{b['ci95'][1]:.1%}"
        lines.append(
            f"| {c} | {rate} | {ci} | {b['first_position']} | {b['second_position']} | {b['n']} |"
        )
    t = report["timing"]
    if t.get("seconds_per_pair_with_text_judging") is not None:
        lines += [
            "",
            f"Seconds per pair: {t['seconds_per_pair']:.4f} for the pair itself, "
            f"{t['seconds_per_pair_with_text_judging']:.2f} with the judging of the texts.",
        ]
    return "\n".join(lines) + "\n"


def plot_ratings(report: dict[str, Any], path: Path) -> Path:
    """Overall Elo and Bradley–Terry per system (best on top) with 95% bootstrap intervals."""
    board = list(reversed(report["leaderboard"]))
    fig = Figure(figsize=(7, 0.45 * len(board) + 1.6))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ys = list(range(len(board)))
    for offset, key, colour, label in (
        (0.15, "elo", "#4472c4", "Elo"),
        (-0.15, "bt", "#ed7d31", "Bradley–Terry"),
    ):
        xs, lows, highs, at = [], [], [], []
        for y, e in zip(ys, board, strict=True):
            if e[key] is None:
                continue
            ci = e[f"{key}_ci95"] or [e[key], e[key]]
            xs.append(e[key])
            lows.append(max(e[key] - ci[0], 0))
            highs.append(max(ci[1] - e[key], 0))
            at.append(y + offset)
        ax.errorbar(xs, at, xerr=[lows, highs], fmt="o", color=colour, capsize=3, label=label)
    ax.axvline(report["settings"]["initial"], color="#999999", linewidth=0.8, linestyle=":")
    ax.set_yticks(ys, [e["system"] for e in board])
    ax.set_xlabel("rating (Elo scale), 95% bootstrap interval over encounters")
    ax.set_title(f"{report['dataset']}: overall, K = {report['settings']['k']:g}")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    return path
