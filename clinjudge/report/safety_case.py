"""The safety case's Markdown and forest plot (:mod:`clinjudge.safety_case`).

``forest.png``: one row per (system, endpoint), the point estimate with its Wilson 95% interval,
and the endpoint's gate limit as a dashed line; a row whose upper bound is beyond its gate is
drawn in red. The n (units) is printed at the end of each row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clinjudge.files import atomic_write_text
from clinjudge.report.compare_plots import new_figure, save_figure
from clinjudge.report.formatting import markdown_table, percent, percent_interval

PASS, FAIL = "#4472c4", "#c00000"


def safety_case_markdown(case: dict[str, Any]) -> str:
    lines = ["# Safety case", ""]
    joined = case.get("metadata")
    how = (
        f" (joined on `{joined['key_column']}`: {joined['matched']} of {joined['items']} notes "
        "matched)"
        if joined
        else ""
    )
    lines += [
        f"Gates: `{case['gates_file']}`; subgroup column: `{case.get('subgroup') or '-'}`{how}."
    ]
    lines += [f"Calibration: {case['calibration']}.", ""]
    rows = []
    for s in case["systems"]:
        for name, e in s["endpoints"].items():
            gate = next((g for g in s["gates"] if g["endpoint"] == name), None)
            verdict = "-" if gate is None else "pass" if gate["passed"] else "FAIL"
            need = "" if gate is None or gate["passed"] else gate.get("clean_cases_needed")
            limit = "" if gate is None or "limit" not in gate else f"≤ {gate['limit']:g}"
            rows.append(
                [
                    s["system"],
                    name,
                    percent(e["value"], 2),
                    percent_interval(e["ci95"], 2),
                    clustered(e),
                    e["n"],
                    limit,
                    verdict,
                    need,
                ]
            )
    headers = [
        "system", "endpoint", "rate", "95% CI", "95% CI by item (deff)", "n", "gate", "result",
        "clean cases needed",
    ]  # fmt: skip
    lines += [markdown_table(headers, rows), ""]
    lines += [
        "A rate pooled over claims treats the claims of one note as independent; they are not. "
        "The interval by item widens the plain one by the design effect (deff: the variance "
        "of the rate over items, against the binomial's); gates are judged on the plain one.",
        "",
    ]
    for s in case["systems"]:
        status = "passes every gate" if s["passed"] else "fails"
        lines.append(
            f"- **{s['system']}** {status}: {s['n_items']} items, {s['excluded_items']} excluded "
            f"(failed calls)."
        )
        for g in s["gates"]:
            if not g["passed"] and g.get("reason") == "not measured by this run":
                lines.append(f"  - `{g['endpoint']}`: not measured by this run.")
    for s in case["systems"]:
        groups = s.get("subgroups")
        if not groups:
            continue
        lines += ["", f"## {s['system']} by {case['subgroup']}", ""]
        rows = []
        small = [label for label, g in groups.items() if not g["enough_cases"]]
        for label, g in groups.items():
            for name, e in g["endpoints"].items():
                rate, ci = percent(e["value"], 2), percent_interval(e["ci95"], 2)
                rows.append([label, g["n_items"], name, rate, ci, clustered(e), e["n"]])
        if rows:
            headers = ["subgroup", "items", "endpoint", "rate", "95% CI", "by item (deff)", "n"]
            lines.append(markdown_table(headers, rows))
        if small:
            lines += [
                "",
                f"Too few items (< {case['min_n']}) for rates: "
                + ", ".join(f"{label} (n={groups[label]['n_items']})" for label in small)
                + ".",
            ]
    return "\n".join(lines) + "\n"


def plot_forest(case: dict[str, Any], out_dir: Path) -> Path | None:
    rows = [
        (s["system"], name, e, next((g for g in s["gates"] if g["endpoint"] == name), None))
        for s in case["systems"]
        for name, e in s["endpoints"].items()
    ]
    if not rows:
        return None
    fig = new_figure(8.0, 0.45 * len(rows) + 1.2)
    ax = fig.add_subplot(1, 1, 1)
    for y, (_, _, e, gate) in enumerate(reversed(rows)):
        lo, hi = e["ci95"]
        failed = gate is not None and not gate["passed"]
        colour = FAIL if failed else PASS
        ax.plot([lo, hi], [y, y], color=colour, linewidth=2)
        ax.plot([e["value"]], [y], "o", color=colour)
        if gate is not None and "limit" in gate:
            ax.plot([gate["limit"]] * 2, [y - 0.4, y + 0.4], "--", color="#555555")
        ax.annotate(f"n={e['n']}", (hi, y), xytext=(4, -3), textcoords="offset points", fontsize=7)
    labels = [f"{system}: {name.replace('_rate', '')}" for system, name, _, _ in reversed(rows)]
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.set_xlabel("rate (95% Wilson interval); dashed: gate limit; red: gate fails")
    ax.set_xlim(0, 1.15 * max(e["ci95"][1] for _, _, e, _ in rows))  # room for the n labels
    return save_figure(fig, out_dir / "forest.png")


def write_safety_case_html(case: dict[str, Any], forest: Path | None, out_dir: Path) -> Path:
    """``report.html``: the case's tables and its forest plot embedded (one self-contained
    file)."""
    import base64

    from clinjudge.report.html_report import render_page

    image = base64.b64encode(forest.read_bytes()).decode() if forest else ""
    html = render_page("safety_case.html.j2", case=case, forest=image)
    path = Path(out_dir) / "report.html"
    atomic_write_text(path, html)
    return path


def clustered(entry: dict) -> str:
    """The interval that accounts for clustering by item, with its design effect."""
    ci = entry.get("ci95_clustered")
    if ci is None:
        return "-"
    return f"{percent_interval(ci, 2)} ({entry['design_effect']:.2f})"
