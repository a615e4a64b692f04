"""The paired error-detection report (SPEC §4, §8): ``report.json`` and ``report.md`` from the
rows of a ``predictions.jsonl`` written by ``clinjudge detect``.

Pointwise metrics use every note with a parsed answer; pair metrics use the pairs named in the
rows (a pair with an unparsed member is skipped for BCR, and imputed for the robustness variant);
ECA reads the quoted evidence against the error and corrected sentences stored with each pair.
Intervals: Wilson for proportions, percentile bootstrap over pairs for F1, balanced accuracy, MCC,
expected BCR and the independence ratio (notes of one pair resampled together).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from clinjudge.files import atomic_write_text
from clinjudge.metrics.classification import Estimate, bias_category, wilson_estimate
from clinjudge.metrics.classification import pointwise_metrics as pointwise
from clinjudge.metrics.eca import EcaPair, eca_summary
from clinjudge.metrics.paired import PairPrediction, bcr, paired_metrics
from clinjudge.metrics.safety import brier_score, overconfident_error_rate
from clinjudge.report.formatting import is_number, markdown_table, percent, percent_interval

POINTWISE = ("sensitivity", "specificity", "precision", "f1", "balanced_accuracy", "mcc")


def _flag(row: dict[str, Any] | None) -> bool | None:
    parsed = (row or {}).get("parsed")
    return None if not parsed else bool(parsed["error"])


def _evidence(row: dict[str, Any] | None) -> str | None:
    parsed = (row or {}).get("parsed")
    return None if not parsed else parsed.get("evidence")


def _json(value: Any) -> Any:
    return value.as_json() if isinstance(value, Estimate) else value


def collect_pairs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pairs named in the rows, each ``{pair_id, error, clean, error_sentence,
    corrected_sentence, error_type}`` with both member rows present, in first-seen order."""
    pairs: dict[str, dict[str, Any]] = {}
    for row in rows:
        for p in row.get("pairs") or []:
            entry = pairs.setdefault(p["pair_id"], {"pair_id": p["pair_id"], **p})
            entry[row["member"]] = row
    return [p for p in pairs.values() if "error" in p and "clean" in p]


def build_pairs_report(
    rows: Iterable[dict[str, Any]],
    *,
    run: dict[str, Any] | None = None,
    seed: int = 0,
    n_resamples: int = 2000,
) -> dict[str, Any]:
    """The report dict (``report.json``); see the module docstring."""
    rows = list(rows)
    truth = [bool(r["has_error"]) for r in rows]
    flags = [_flag(r) for r in rows]
    clusters = [r.get("pair_id") or r["note_id"] for r in rows]
    point = pointwise(truth, flags, clusters=clusters, n_resamples=n_resamples, seed=seed)
    pairs = collect_pairs(rows)
    predictions = [PairPrediction(_flag(p["error"]), _flag(p["clean"])) for p in pairs]
    paired = paired_metrics(
        predictions,
        n_error_notes=len({p["error"]["note_id"] for p in pairs}),
        n_clean_notes=len({p["clean"]["note_id"] for p in pairs}),
        n_resamples=n_resamples,
        seed=seed,
    )
    eca = eca_summary(
        [
            EcaPair(
                _flag(p["error"]),
                _flag(p["clean"]),
                _evidence(p["error"]),
                _evidence(p["clean"]),
                p.get("error_sentence") or "",
                p.get("corrected_sentence") or "",
            )
            for p in pairs
        ]
    )
    parsed_truth = [t for t, f in zip(truth, flags, strict=True) if f is not None]
    prevalence = sum(parsed_truth) / len(parsed_truth) if parsed_truth else None
    flag_rate = point["flag_rate"]
    failures = sum(r.get("status") == "parse_failure" for r in rows)
    report: dict[str, Any] = {name: _json(point[name]) for name in POINTWISE}
    report |= {
        "flag_rate": flag_rate.as_json(),
        "bias": bias_category(flag_rate.value, parity=prevalence or 0.5),
        "bias_ci": bias_category(None, parity=prevalence or 0.5, ci95=flag_rate.ci95),
        "prevalence": prevalence,
        **{key: _json(value) for key, value in paired.items()},
        "n_notes": len(rows),
        "parse_failures": {
            **wilson_estimate(failures, len(rows)).as_json(),
            "pairs_excluded": paired["pairs_excluded"],
            "call_errors": sum(r.get("status") == "error" for r in rows),
        },
        "rule_violations": _rule_violations(rows),
        "eca": {key: _json(value) for key, value in eca.items()},
        "calibration": _calibration(rows),
        "by_error_type": _by_error_type(pairs),
        "run": run or {},
        "settings": {"seed": seed, "n_resamples": n_resamples, "interval_level": 0.95},
    }
    return report


def _rule_violations(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Answers that break the prompt's rules without being unparseable."""
    flagged = [r for r in rows if _flag(r)]
    return {
        "flag_without_evidence": sum(_evidence(r) is None for r in flagged),
        "evidence_not_in_note": sum(r.get("evidence_in_note") is False for r in rows),
    }


def _calibration(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Brier score and overconfident errors (SPEC §8) of the stated confidence (0–100 → 0–1)."""
    parsed = [r for r in rows if r.get("parsed")]
    confidences = [r["parsed"]["confidence"] / 100 for r in parsed]
    correct = [bool(r["parsed"]["error"]) == bool(r["has_error"]) for r in parsed]
    return {
        "brier": brier_score(confidences, correct),
        "overconfident_error": overconfident_error_rate(confidences, correct).as_json(),
    }


def _by_error_type(pairs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pairs:
        groups[p.get("error_type") or "unknown"].append(p)
    out = {}
    for name, members in sorted(groups.items()):
        preds = [PairPrediction(_flag(p["error"]), _flag(p["clean"])) for p in members]
        flagged = [f for f in (_flag(p["error"]) for p in members) if f is not None]
        out[name] = {
            "n_pairs": len(members),
            "bcr": bcr(preds).as_json(),
            "sensitivity": wilson_estimate(sum(flagged), len(flagged)).as_json(),
        }
    return out


# --------------------------------------------------------------------------- Markdown


def _est(entry: dict[str, Any] | None, *, signed: bool = False) -> tuple[str, str]:
    """(value, interval) cells of an estimate object; MCC-like values shown as numbers."""
    if not entry or not is_number(entry.get("value")):
        return "n/a", "n/a"
    if signed:
        ci = entry.get("ci95")
        shown = (
            "n/a" if not ci or not all(is_number(v) for v in ci) else f"[{ci[0]:.3f}, {ci[1]:.3f}]"
        )
        return f"{entry['value']:.3f}", shown
    return percent(entry["value"]), percent_interval(entry.get("ci95"))


def render_pairs_markdown(report: dict[str, Any], plots: Iterable[Path] = ()) -> str:
    """``report.md``: pointwise, paired, ECA, parse failures and per-error-type tables."""
    run = report.get("run") or {}
    lines = [f"# Paired error detection: {run.get('detector', 'detector')}", ""]
    if run:
        dataset = run.get("dataset") or {}
        lines += [
            f"Dataset `{dataset.get('name', '?')}` ({dataset.get('pairing', '?')} pairing), "
            f"{report['n_notes']} notes, {report['n_pairs']} pairs. "
            f"Prompt: `{(run.get('prompt') or {}).get('name', 'none')}`; "
            f"decoding: `{json.dumps(run.get('decoding') or {})}`.",
            "",
        ]
    lines += ["## Pointwise metrics", ""]
    rows = []
    for name in (*POINTWISE, "flag_rate"):
        value, interval = _est(report.get(name), signed=name == "mcc")
        rows.append([name.replace("_", " "), value, interval])
    lines += [markdown_table(["metric", "value", "95% CI"], rows), ""]
    lines += [
        f"Bias: **{report.get('bias') or 'n/a'}** (flag rate against the error prevalence "
        f"{percent(report.get('prevalence'))}); by the flag rate's 95% interval: "
        f"**{report.get('bias_ci') or 'n/a'}**.",
        "",
        "## Paired metrics (BCR)",
        "",
    ]
    paired_rows = [
        ["BCR (skip parse failures)", *_est(report.get("bcr"))],
        ["BCR (random imputation)", *_est(report.get("bcr_imputed"))],
        ["expected BCR = sens × spec", *_est(report.get("bcr_expected"))],
        ["independence ratio", *_est(report.get("independence_ratio"), signed=True)],
        ["upper bound min(sens, spec)", percent(report.get("bcr_upper_bound")), ""],
        ["random baseline", percent(report.get("random_baseline")), ""],
    ]
    lines += [markdown_table(["metric", "value", "95% CI"], paired_rows), ""]
    lines += [
        f"{report.get('n_pairs_used')} of {report['n_pairs']} pairs used; "
        f"{report['parse_failures']['pairs_excluded']} excluded for a parse failure.",
        "",
        "## Evidence Contrastive Analysis",
        "",
    ]
    eca = report["eca"]
    lines += [
        markdown_table(
            ["category", "pairs", "rate"],
            [
                [name.replace("_", " "), c["count"], percent(c["rate"])]
                for name, c in eca["categories"].items()
            ],
        ),
        "",
        f"ECA pairs: {eca['n']} ({eca['n_pred1']} with both notes flagged). "
        f"TP-localization {percent(eca['tp_localization']['value'])} "
        f"{percent_interval(eca['tp_localization']['ci95'])}; FP-evidence-hit "
        f"{percent(eca['fp_evidence_hit']['value'])} "
        f"{percent_interval(eca['fp_evidence_hit']['ci95'])}.",
        "",
        "## Parse failures and rule violations",
        "",
    ]
    pf, rv = report["parse_failures"], report["rule_violations"]
    lines += [
        f"- parse failures: {pf['k']} of {pf['n']} notes ({percent(pf['value'])}, 95% CI "
        f"{percent_interval(pf['ci95'])}); call errors: {pf['call_errors']}",
        f"- flagged without evidence: {rv['flag_without_evidence']}; evidence not quoted from "
        f"the note: {rv['evidence_not_in_note']}",
        f"- calibration: Brier {_num(report['calibration']['brier'])}, overconfident errors "
        f"{percent(report['calibration']['overconfident_error']['value'])}",
        "",
        "## By error type",
        "",
        markdown_table(
            ["error type", "pairs", "BCR", "sensitivity"],
            [
                [name, g["n_pairs"], percent(g["bcr"]["value"]), percent(g["sensitivity"]["value"])]
                for name, g in report["by_error_type"].items()
            ],
        ),
        "",
    ]
    plots = list(plots)
    if plots:
        lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots] + [""]
    return "\n".join(lines)


def _num(value: Any) -> str:
    return f"{value:.3f}" if is_number(value) else "n/a"


# --------------------------------------------------------------------------- files


def _finite_json(value: Any) -> Any:
    """NaN/inf → ``None`` all the way down, so the file is strict JSON."""
    if isinstance(value, float) and not is_number(value):
        return None
    if isinstance(value, dict):
        return {k: _finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_json(v) for v in value]
    return value


def write_pairs_report(
    rows: Iterable[dict[str, Any]],
    out_dir: Path,
    *,
    run: dict[str, Any] | None = None,
    seed: int = 0,
    n_resamples: int = 2000,
) -> tuple[dict[str, Any], list[Path]]:
    """Write ``report.json``, ``report.md`` and the plots to ``out_dir``; return the report and
    the files written."""
    from clinjudge.report.pairs_plots import write_pairs_plots

    out_dir.mkdir(parents=True, exist_ok=True)
    report = _finite_json(build_pairs_report(rows, run=run, seed=seed, n_resamples=n_resamples))
    plots = write_pairs_plots(report, out_dir, label=(run or {}).get("detector", "this run"))
    json_path, md_path = out_dir / "report.json", out_dir / "report.md"
    atomic_write_text(
        json_path, json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    )
    atomic_write_text(md_path, render_pairs_markdown(report, plots))
    return report, [json_path, md_path, *plots]
