"""``agreement.md`` of rubric runs: each rubric grader against each labeller, the labellers
against each other (the ceiling), what was left out beside every rate, the length bias and the
disagreements (issue 39 item 6; :mod:`clinjudge.agreement.rubric_scores`)."""

from __future__ import annotations

from typing import Any

from clinjudge.report.formatting import is_number, markdown_table, truncate

#: Disagreements and criteria listed per grader and labeller (agreement.json holds more).
SHOWN = 20
MET = (("agreement", "agreement"), ("macro F1", "macro_f1"), ("κ", "kappa"))
SCALE = (("exact", "exact"), ("within one", "within_one"), ("κ quadratic", "kappa_quadratic"))
DEFINITIONS = (
    "Pairs: (item, criterion) both sides graded. Macro F1 = mean of the F1 of met and of not "
    "met (HealthBench's grader-vs-physician measure); κ = Cohen's κ (quadratic-weighted for "
    "levels); 95% intervals resample whole encounters (none below five: n too small). "
    "Left out: labelled criteria the grader did not grade (parse failure, call error, needs a "
    "model), labels naming no criterion of the run, graded criteria of labelled items with no "
    "label. Length bias: β per 100 words of note, regressing the grader's item score on the "
    "labeller's item score and the note's length (0 = none; > 0 = longer notes score higher "
    "at equal labels)."
)


def number(value: Any) -> str:
    return f"{value:.3f}" if is_number(value) else "n/a"


def estimate(entry: dict[str, Any] | None) -> str:
    """``0.864 [0.80, 0.92]``, ``n/a (undefined: …)`` or ``0.5 (n too small)``."""
    if not entry:
        return "n/a"
    if entry.get("value") is None:
        why = entry.get("undefined")
        return f"n/a ({why})" if why else "n/a"
    ci = entry.get("ci95")
    if ci and is_number(ci[0]) and is_number(ci[1]):
        return f"{number(entry['value'])} [{ci[0]:.2f}, {ci[1]:.2f}]"
    return f"{number(entry['value'])} (n too small)"


def left_out(excluded: dict[str, int]) -> str:
    names = {
        "parse_failure": "parse failures",
        "error": "call errors",
        "needs_model": "need a model",
        "tie": "jury ties",
        "label_not_in_run": "labels not in the run",
        "unlabelled": "unlabelled",
    }
    return ", ".join(f"{n} {names[k]}" for k, n in excluded.items() if n) or "none"


def grader_name(grader: dict[str, Any]) -> str:
    """``run:rubric:FILE`` as a table shows it: the run and the rubric file's name."""
    return f"{grader['run']}:{grader['judge'].rsplit('/', 1)[-1]}"


def headline_rows(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Headers and one row per grader × labeller, then per labeller pair (the ceiling)."""
    modes = {g["mode"] for g in report["graders"]} | {p["mode"] for p in report["labellers"]}
    keys = MET if modes <= {"met"} else SCALE if modes == {"scale"} else MET + SCALE
    headers = ["grader", "vs", "pairs", *(name for name, _ in keys), "left out"]
    rows = []
    for g in report["graders"]:
        for a in g["against"]:
            cells = [estimate(a.get(k)) for _, k in keys]
            rows.append(
                [grader_name(g), a["labeller"], str(a["n"]), *cells, left_out(a["excluded"])]
            )
    for p in report["labellers"]:
        cells = [estimate(p.get(k)) for _, k in keys]
        only = f"{p['only_first']} only {p['first']}, {p['only_second']} only {p['second']}"
        rows.append([f"labeller {p['second']} (ceiling)", p["first"], str(p["n"]), *cells, only])
    return headers, rows


def length_cell(bias: dict[str, Any]) -> str:
    if "slope_per_100_words" not in bias:
        return bias.get("unavailable", "n/a")
    slope = estimate(bias["slope_per_100_words"])
    rho = estimate(bias["spearman_excess"])
    span = bias.get("words") or {}
    return (
        f"β {slope} per 100 words; ρ(length, grader − labeller) {rho}; n = {bias['n']} items "
        f"({span.get('min')}–{span.get('max')} words)"
    )


def rubric_agreement_markdown(report: dict[str, Any]) -> str:
    headers, rows = headline_rows(report)
    labellers = ", ".join(
        f"{who} ({v['labels']} labels, {v['items']} items)" for who, v in report["labels"].items()
    )
    out = [
        "# Rubric graders against human criterion labels",
        "",
        f"Labellers: {labellers}.",
        "",
        markdown_table(headers, rows),
        "",
        DEFINITIONS,
        "",
        "## Length bias",
        "",
    ]
    out += [
        f"- {grader_name(g)} vs {a['labeller']}: {length_cell(a['length_bias'])}"
        for g in report["graders"]
        for a in g["against"]
    ]
    for g in report["graders"]:
        for a in g["against"]:
            out += ["", f"## {grader_name(g)} vs {a['labeller']}", ""]
            worst = sorted(a["per_criterion"].items(), key=lambda kv: kv[1]["agreement"]["value"])
            crit_rows = [
                [cid, str(c["n"]), number(c["agreement"]["value"])]
                for cid, c in worst[:SHOWN]
                if c["n"] >= 2
            ]
            if crit_rows:
                out += ["Criteria graded on two items or more, least agreement first:", ""]
                out += [markdown_table(["criterion", "pairs", "agreement"], crit_rows), ""]
            shown = a["disagreements"][:SHOWN]
            out.append(f"Disagreements ({len(a['disagreements'])} listed in agreement.json):")
            out.append("")
            out.append(
                markdown_table(
                    ["item", "criterion", "labeller", "grader", "grader's reason"],
                    [
                        [d["item"], truncate(d["text"] or d["criterion"], 60)]
                        + [_verdict(d["human"]), _verdict(d["grader"]), truncate(d["reason"], 80)]
                        for d in shown
                    ],
                )
                if shown
                else "none"
            )
    return "\n".join(out) + "\n"


def _verdict(value: Any) -> str:
    if isinstance(value, bool):
        return "met" if value else "not met"
    return str(value)
