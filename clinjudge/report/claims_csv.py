"""``claims.csv``: every SOAP claim of a compare run on one flat line, for spreadsheet users
(issue 37). Columns:

    note  system  judge  claim_id  section  claim  tier  supported  severity  harm_category
    rationale  evidence_turns

``note`` is the item id (``<encounter>/<system>`` in a run of several systems), ``system`` the
system that wrote it (empty in a one-system run), ``evidence_turns`` the transcript turns the
verdict's evidence lies in, counted from 1 as the viewer shows them, ``;``-separated. A rubric
judge's criteria are rows too (:func:`criterion_line`). Judges whose units are not claims with
a tier or criteria (CEF questions, fact-check claims without tiers) are left out;
``verdicts.jsonl`` holds every judge's units.
"""

from __future__ import annotations

import csv
import io
from bisect import bisect_right
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from clinjudge.datasets.items import Item
from clinjudge.files import atomic_write_text
from clinjudge.report.rubric_lines import passes, verdict_words
from clinjudge.text.transcript import turn_spans

COLUMNS = (
    "note",
    "system",
    "judge",
    "claim_id",
    "section",
    "claim",
    "tier",
    "supported",
    "severity",
    "harm_category",
    "rationale",
    "evidence_turns",
)


def turn_starts(transcript: str) -> list[int]:
    """Where each turn of ``transcript`` starts (character offsets, in order; turn N is the
    N-th, :func:`clinjudge.text.transcript.turn_spans`)."""
    return [start for start, _ in turn_spans(transcript)]


def evidence_turns(starts: list[int], evidence: Iterable[dict[str, Any]]) -> list[int]:
    """The turns (from 1) holding the transcript evidence spans, given the transcript's
    :func:`turn_starts`; sorted, each once."""
    found: list[int] = []
    for span in evidence:
        if span.get("source") != "transcript" or not isinstance(span.get("start"), int):
            continue
        turn = bisect_right(starts, span["start"])  # the turn starting at or before it, from 1
        if turn and turn not in found:
            found.append(turn)
    return sorted(found)


def claim_lines(lines: Iterable[dict[str, Any]], items: list[Item]) -> list[dict[str, Any]]:
    """The rows of :data:`COLUMNS` for the verdict lines that are tiered claims."""
    by_id = {i.id: i for i in items}
    starts: dict[str, list[int]] = {}
    out = []
    for line in lines:
        if isinstance(line.get("criterion"), dict):
            out.append(criterion_line(line, by_id.get(line["id"])))
            continue
        if "tier" not in line or "claim_id" not in line:
            continue
        item = by_id.get(line["id"])
        if line["id"] not in starts:
            starts[line["id"]] = turn_starts(item.transcript) if item else []
        out.append(
            {
                "note": line["id"],
                "system": (item.meta.get("system", "") if item else "") or "",
                "judge": line["judge"],
                "claim_id": line["claim_id"],
                "section": line.get("section") or "",
                "claim": line.get("text") or "",
                "tier": line["tier"],
                "supported": line.get("supported"),
                "severity": line.get("severity") or "",
                "harm_category": line.get("harm_category") or "",
                "rationale": line.get("rationale") or "",
                "evidence_turns": ";".join(
                    str(t) for t in evidence_turns(starts[line["id"]], line.get("evidence") or [])
                ),
            }
        )
    return out


def criterion_line(line: dict[str, Any], item: Item | None) -> dict[str, Any]:
    """A rubric criterion's row: its id and text, ``supported`` whether the text passes it (a
    positive criterion met, a negative one not met; empty for levels and ungraded ones), the
    verdict in words before the grader's reason, the turns it cites."""
    c = line["criterion"]
    return {
        **dict.fromkeys(COLUMNS, ""),
        "note": line["id"],
        "system": (item.meta.get("system", "") if item else "") or "",
        "judge": line["judge"],
        "claim_id": c["id"],
        "section": " ".join(c.get("tags") or []),
        "claim": c.get("text") or "",
        "supported": "" if passes(c) is None else passes(c),
        "rationale": f"{verdict_words(c)}: {c.get('reason') or ''}".rstrip(": "),
        "evidence_turns": ";".join(str(t) for t in c.get("turns") or []),
    }


def write_claims_csv(path: Path, lines: Iterable[dict[str, Any]], items: list[Item]) -> None:
    """Write ``claims.csv`` (UTF-8, a header line; written whole or not at all)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(claim_lines(lines, items))
    atomic_write_text(path, buffer.getvalue())
