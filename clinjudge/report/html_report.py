"""``report.html`` of a ``compare`` run: one self-contained page (no CDN, no server) a reviewer
opens from disk to read every note with its claims coloured by verdict.

The page is the Jinja2 template ``templates/compare.html.j2`` with its CSS and plain
JavaScript inlined, and the run's data embedded as JSON (:func:`page_data`):

- per judge: its headline rates with their 95% intervals and n;
- per note (worst first: highest rate of the first SOAP judge): the note text, the transcript,
  and each claim's span with every SOAP judge's verdict on it (tier, subtype, severity, harm
  category, rationale, evidence spans in the transcript, knowledge entries); a claim is a
  *flip* when one judge supports it and another does not;
- the run's cost per judge (and system), and each note's per judge
  (:mod:`clinjudge.report.cost_table`);
- the omission judge's omitted and contradicted facts with their transcript spans, when the run
  has it;
- each rubric judge's criteria: verdict (met, not met, a level, or why ungraded), the grader's
  reason and the transcript turns it cites (issue 39); graded by a jury, every juror's verdict
  and whether they split (a SOAP judge's claims: each juror's tier).

The script renders a note only when it scrolls near the viewport (``IntersectionObserver``), so
a page of 100 notes and 5,000 claims opens fast. Clicking a claim shows its verdicts and the
transcript with the evidence highlighted and scrolled into view; ``n`` / ``p`` move to the next
or previous flagged claim; the flagged-claims table sorts by any column and filters by judge,
tier, section and text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from clinjudge.files import atomic_write_text
from clinjudge.report.cost_table import cost_columns, cost_note, cost_rows, note_cost
from clinjudge.report.rubric_lines import passes, verdict_words

TEMPLATES = Path(__file__).with_name("templates")
#: Judges whose rows hold claims and verdicts (SOAP judges).
CLAIM_KINDS = frozenset({"soap"})


def page_data(
    report: dict[str, Any],
    items: list[Any],
    kinds: dict[str, str],
    rows: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    """What the page shows (module docstring); ``kinds``: judge → kind, ``rows``: judge → its
    rows (``id`` = item id)."""
    soap = [n for n, k in kinds.items() if k in CLAIM_KINDS]
    rubrics = [n for n, k in kinds.items() if k == "rubric"]
    by_id = {n: {str(r["id"]): r for r in rows[n]} for n in rows}
    per_item = {str(p["id"]): p for p in report.get("per_item") or []}  # the rates compare gave
    notes = []
    for item in items:
        claims = _claims(item.id, soap, by_id)
        omission = by_id.get("omission", {}).get(item.id)
        facts = [
            {k: f[k] for k in ("text", "category", "importance", "status", "spans", "rationale")}
            for f in (omission or {}).get("facts") or []
            if f["status"] != "covered"
        ]
        criteria = {n: _criteria(by_id[n].get(item.id)) for n in rubrics if n in by_id}
        scored = per_item.get(item.id, {})
        rates = {n: scored[n].get("hallucination_rate") for n in soap if n in scored}
        costs = {n: by_id[n][item.id].get("cost") for n in by_id if item.id in by_id[n]}
        notes.append(
            {
                "id": item.id,
                "system": str(item.meta.get("system", "")),
                "note": item.note,
                "transcript": item.transcript,
                "claims": claims,
                "rates": rates,
                "facts": facts,
                "criteria": {n: c for n, c in criteria.items() if c},
                "cost": note_cost(costs),
            }
        )
    first = soap[0] if soap else None
    notes.sort(key=lambda n: -(n["rates"].get(first) or 0.0) if first else 0.0)
    judges = {
        name: {"kind": kinds.get(name, ""), "headline": summary.get("headline") or {}}
        for name, summary in (report.get("judges") or {}).items()
    }
    return {
        "dataset": report.get("dataset", ""),
        "n_items": report.get("n_items", len(items)),
        "soap_judges": soap,
        "judges": judges,
        "notes": notes,
        "systems": (report.get("systems") or {}).get("by_system") or {},
        "version": (report.get("provenance") or {}).get("package_version", ""),
        "cost": {
            "columns": list(cost_columns(report.get("cost"))),
            "rows": cost_rows(report.get("cost")),
            "note": cost_note(report.get("cost")),
        },
    }


def _criteria(row: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A rubric row's criteria as the page lists them: verdict in words, whether the text
    passes, the grader's reason and the transcript turns it cites; a jury's, each juror's
    verdict in words and ``split`` when the jurors who voted did not all say the same."""
    out = []
    for c in (row or {}).get("criteria") or []:
        jurors = {n: verdict_words({**g, **_scale(c)}) for n, g in (c.get("jurors") or {}).items()}
        said = {v for n, v in jurors.items() if c["jurors"][n].get("status") == "graded"}
        out.append(
            {
                "id": c["id"],
                "text": c.get("text", ""),
                "verdict": verdict_words(c),
                "passes": passes(c),
                "reason": c.get("reason") or "",
                "turns": c.get("turns") or [],
                "jurors": jurors,
                "split": len(said) > 1,
            }
        )
    return out


def _scale(criterion: dict[str, Any]) -> dict[str, Any]:
    return {"top_level": criterion["top_level"]} if "top_level" in criterion else {}


def _claims(item_id: str, soap: list[str], by_id: dict) -> list[dict[str, Any]]:
    """The item's claims (cut once, shared by the SOAP judges) with each judge's verdict."""
    claims: dict[str, dict[str, Any]] = {}
    for judge in soap:
        row = by_id[judge].get(item_id)
        if row is None:
            continue
        for c in row.get("claims") or []:
            claims.setdefault(
                c["id"],
                {
                    "id": c["id"],
                    "text": c["text"],
                    "section": c.get("section", ""),
                    "start": c["start"],
                    "end": c["end"],
                    "verdicts": {},
                },
            )
        for v in row.get("verdicts") or []:
            if v["claim_id"] in claims:
                claims[v["claim_id"]]["verdicts"][judge] = {
                    "tier": v["tier"],
                    "subtype": v.get("subtype", ""),
                    "severity": v.get("severity"),
                    "harm_category": v.get("harm_category"),
                    "rationale": v.get("rationale", ""),
                    "evidence": [
                        [e["start"], e["end"]]
                        for e in v.get("evidence") or []
                        if e.get("source", "transcript") == "transcript" and e.get("start", -1) >= 0
                    ],
                    "knowledge": [_knowledge(k) for k in v.get("knowledge") or []],
                    "jurors": _juror_tiers((row.get("jury") or {}).get(v["claim_id"])),
                }
    out = sorted(claims.values(), key=lambda c: (c["start"], c["end"]))
    for c in out:
        tiers = {v["tier"] >= 4 for v in c["verdicts"].values()}
        c["flip"] = len(tiers) > 1
    return out


def _juror_tiers(vote: dict[str, Any] | None) -> str:
    """A jury's claim: each juror's tier, or what became of it (``m1 tier 1; m2 error``)."""
    jurors = (vote or {}).get("jurors") or {}
    return "; ".join(
        f"{n} tier {j['tier']}" if "tier" in j else f"{n} {j['status']}" for n, j in jurors.items()
    )


def _knowledge(entry: Any) -> str:
    if isinstance(entry, dict):
        return str(entry.get("term") or entry.get("preferred") or entry.get("id") or entry)
    return str(entry)


def environment() -> Environment:
    """The Jinja2 environment of the report templates (HTML autoescaped)."""
    return Environment(
        loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"])
    )


def render_page(template: str, script: str | None = None, **values: Any) -> str:
    """One report page: the template with the shared stylesheet and its ``script`` (a file of
    ``templates/``, after the helpers every script shares, ``common.js``) inlined, so the page
    needs nothing beside itself."""
    assets = {"css": (TEMPLATES / "report.css").read_text(encoding="utf-8")}
    if script is not None:
        assets["js"] = "\n".join(
            (TEMPLATES / name).read_text(encoding="utf-8") for name in ("common.js", script)
        )
    return environment().get_template(template).render(**assets, **values)


def render_html(data: dict[str, Any]) -> str:
    return render_page("compare.html.j2", "report.js", data=data)


def write_compare_html(
    report: dict[str, Any],
    items: list[Any],
    kinds: dict[str, str],
    rows: dict[str, list[dict[str, Any]]],
    out_dir: Path,
) -> Path:
    path = Path(out_dir) / "report.html"
    atomic_write_text(path, render_html(page_data(report, items, kinds, rows)))
    return path


def data_of_page(html: str) -> dict[str, Any]:
    """The data embedded in a page (for tests and tools)."""
    start = html.index('<script id="data" type="application/json">') + len(
        '<script id="data" type="application/json">'
    )
    return json.loads(html[start : html.index("</script>", start)])
