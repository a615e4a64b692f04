"""``report.html`` of an arena run (SPEC §6, issue 25): one self-contained page with the
leaderboard (Elo and Bradley–Terry with their intervals, per criterion), the win/tie/loss
matrix, position bias per criterion, and every judged pair.

The **pair view** shows the two notes side by side (the transcript below, folded) and, per
criterion, the verdict of each order — ``A first`` (note A shown as "Note 1") and ``B first``
— translated from positions to systems, the outcome after the both-orders rule (a win only
when both orders agree, else a draw), whether the verdict followed the position, and what
decided it: the model's reason, or the offline measure with each note's value.

Notes are embedded once by item id and each distinct transcript once, so a run of 10 systems
over 40 encounters (1,766 pairs) stays a page of a few megabytes. ``n`` / ``p`` move to the
next or previous pair of the filtered list; ``Esc`` closes the pair.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from clinjudge.files import atomic_write_text
from clinjudge.report.html_report import render_page

PAIR_KEYS = (
    "id",
    "encounter",
    "system_a",
    "system_b",
    "a",
    "b",
    "outcomes",
    "orders",
    "follows_position",
    "decided_by",
    "failure",
)


def arena_page_data(
    report: dict[str, Any], rows: list[dict[str, Any]], items: list[Any]
) -> dict[str, Any]:
    """What the page shows (module docstring); ``items`` are the run's texts (``id``,
    ``note``, ``transcript``, ``meta['encounter']``) — those no pair names are left out."""
    named = {r[k] for r in rows for k in ("a", "b") if r.get(k)}
    notes: dict[str, str] = {}
    transcripts: dict[str, int] = {}  # encounter -> index into texts: each text once
    texts: dict[str, int] = {}
    for item in items:
        if item.id not in named:
            continue
        notes[item.id] = item.note
        encounter = str(item.meta.get("encounter", item.id))
        transcripts.setdefault(encounter, texts.setdefault(item.transcript or "", len(texts)))
    judge = (report.get("provenance") or {}).get("judges", {}).get(report.get("judge"), {})
    return {
        "dataset": report.get("dataset", ""),
        "version": (report.get("provenance") or {}).get("package_version", ""),
        "created": (report.get("provenance") or {}).get("created", ""),
        "judge": report.get("judge", ""),
        "backend": report.get("backend", ""),
        "model": judge.get("model"),
        "settings": report.get("settings", {}),
        "systems": report.get("systems", []),
        "criteria": list(report.get("criteria", {})),
        "leaderboard": report.get("leaderboard", []),
        "per_criterion": {
            c: {
                "ratings": entry.get("ratings", {}),
                "position_bias": entry.get("position_bias", {}),
                "win_matrix": entry.get("win_matrix", {}),
            }
            for c, entry in (report.get("criteria") or {}).items()
        },
        "n_pairs": report.get("n_pairs", len(rows)),
        "n_failed": report.get("n_failed", 0),
        "n_encounters": report.get("n_encounters"),
        "pairs": [{k: r.get(k) for k in PAIR_KEYS} for r in rows],
        "notes": notes,
        "transcript_of": transcripts,
        "transcripts": list(texts),
    }


def write_arena_html(
    report: dict[str, Any],
    rows: list[dict[str, Any]],
    items: list[Any],
    out_dir: Path,
    plot: Path | None = None,
) -> Path:
    """Write ``out_dir/report.html``; ``plot`` (``ratings.png``) is embedded when given."""
    image = None
    if plot is not None and plot.exists():
        image = "data:image/png;base64," + base64.b64encode(plot.read_bytes()).decode("ascii")
    html = render_page(
        "arena.html.j2", "arena.js", data=arena_page_data(report, rows, items), plot=image
    )
    path = Path(out_dir) / "report.html"
    atomic_write_text(path, html)
    return path
