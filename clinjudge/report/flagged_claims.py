"""Every flagged claim of a compare run, for ``report.md`` (issue 15: the Markdown lists each
tier 4–5 claim with the reason and the evidence, not only the flips).

A row per (judge, claim) with tier ≥ 4, notes in dataset order: note id, section, claim text,
tier and subtype, severity, the judge's rationale and the first transcript passage it cites.
At most :data:`MAX_ROWS` rows are written; the rest are counted and left to
``verdicts.jsonl`` and ``report.html``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinjudge.report.formatting import markdown_table, truncate

MAX_ROWS = 2000


def flagged_claims(
    kinds: dict[str, str], rows: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """The flagged claims of the SOAP judges' rows."""
    out = []
    for judge, kind in kinds.items():
        if kind != "soap":
            continue
        for row in rows.get(judge, []):
            claims = {c["id"]: c for c in row.get("claims") or []}
            for v in row.get("verdicts") or []:
                claim = claims.get(v["claim_id"])
                if claim is None or v["tier"] < 4:
                    continue
                evidence = next((e["text"] for e in v.get("evidence") or [] if e.get("text")), "")
                out.append(
                    {
                        "judge": judge,
                        "id": row["id"],
                        "section": claim.get("section", ""),
                        "text": claim["text"],
                        "tier": v["tier"],
                        "subtype": v.get("subtype", ""),
                        "severity": v.get("severity") or "",
                        "rationale": v.get("rationale", ""),
                        "evidence": evidence,
                    }
                )
    return out


def flagged_section(flagged: list[dict[str, Any]]) -> Iterator[str]:
    if not flagged:
        return
    yield "## Flagged claims"
    shown = flagged[:MAX_ROWS]
    more = len(flagged) - len(shown)
    tail = f" (the first {len(shown)}; the rest are in verdicts.jsonl and report.html)"
    yield f"{len(flagged)} tier 4–5 claims{tail if more else ''}."
    rows = [
        [
            f["id"],
            f["judge"],
            f["section"],
            f"{f['tier']} {f['subtype']}",
            f["severity"],
            truncate(f["text"], 160),
            truncate(f["rationale"], 160),
            truncate(f["evidence"], 120) or "none found",
        ]
        for f in shown
    ]
    headers = ["note", "judge", "section", "tier", "severity", "claim", "why", "closest evidence"]
    yield markdown_table(headers, rows)
