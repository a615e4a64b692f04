"""Agreement of the SOAP judges with sentence-level reference labels (issue 12; SPEC §9).

Runs each judge over every labelled ACI-Bench test3 note; a labelled unit (sentence) is flagged
when a tier 4–5 claim overlaps it. Prints, per judge: precision, recall, F1, accuracy and
Cohen's κ over units (95% intervals resample whole encounters), the accuracy of answering
"supported" to everything, recall of major errors, labelled vs judged positive share per system,
the per-note Spearman correlation of the two shares, and the misses and false flags grouped by
kind with examples.

Labels are read from the shared development labels and the labels committed under
``bench/claim_labels/`` (both by the same GUIDE.md); ``--labels`` picks directories.

    .venv/bin/python bench/bench_agreement.py [--judges lexical,inference-aware]
        [--backend offline|llm] [--protocol batch|claim] [--count-calls]
        [--encounters D2N170,...] [--examples 3] [--labels DIR ...]
        [--save OUT.jsonl] [--json OUT.json]

``--backend llm`` uses the configured endpoint (``CLINJUDGE_MODEL``, ``OPENAI_BASE_URL``); its
replies are cached, so a re-run costs no call. ``--count-calls`` runs the LLM path against a
scripted counting chat model (defined here, never in product code) to report calls per note.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import re
import resource
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from clinjudge.api import ajudge_note, make_setup  # noqa: E402
from clinjudge.errors import ConfigError  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402
from clinjudge.llm import ResponseCache  # noqa: E402
from clinjudge.metrics.intervals import wilson_interval  # noqa: E402
from clinjudge.metrics.unit_labels import (  # noqa: E402
    ClaimCall,
    LabelledUnit,
    UnitResult,
    agreement_summary,
    overlaps,
    unit_call,
)
from clinjudge.text.sections import segment_note  # noqa: E402

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "data" / "aci-bench" / "claim-labels"


def default_labels(data: Path) -> list[Path]:
    """The label directories read unless ``--labels`` names others: the claim-labels
    directory's own ``labels/`` (the shared development labels) and this project's."""
    return [data / "labels", HERE / "claim_labels" / "labels"]


JUDGES = ("lexical", "inference-aware")


# -- data ---------------------------------------------------------------------------------------
class InputError(Exception):
    """A bad argument or missing data file: reported in one line, exit code 2."""


def load_labelled(data: Path, label_dirs: list[Path], encounters: set[str] | None):
    """Notes that have labels, and their labelled units (first directory wins per encounter)."""
    for name in ("notes.jsonl", "units.jsonl"):
        if not (data / name).is_file():
            raise InputError(f"{data / name} not found: --data is the claim-labels directory")
    labels: dict[tuple[str, str, int], dict] = {}
    seen: set[str] = set()
    for folder in label_dirs:
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            if path.stem in seen or (encounters and path.stem not in encounters):
                continue
            seen.add(path.stem)
            for line in path.open():
                if line.strip():
                    r = json.loads(line)
                    labels[(r["encounter"], r["system"], r["unit"])] = r
    notes = {
        n["id"]: n for n in map(json.loads, (data / "notes.jsonl").open()) if n["encounter"] in seen
    }
    units: dict[str, list[LabelledUnit]] = defaultdict(list)
    for u in map(json.loads, (data / "units.jsonl").open()):
        r = labels.get((u["encounter"], u["system"], u["unit"]))
        if u["kind"] != "text" or r is None:
            continue
        note_id = f"{u['encounter']}/{u['system']}"
        units[note_id].append(
            LabelledUnit(
                note_id=note_id,
                encounter=u["encounter"],
                system=u["system"],
                unit=u["unit"],
                start=u["start"],
                end=u["end"],
                text=u["text"],
                label=r["label"],
                severity=r.get("severity"),
                span=r.get("span"),
                reason=r.get("reason") or "",
            )
        )
    return {k: v for k, v in notes.items() if k in units}, units


# -- kinds of misses and false flags --------------------------------------------------------------
MISS_KINDS = [  # (kind, pattern over the label's reason + span), first match wins
    (
        "name / age / demographic",
        r"\bname|surname|\bage\b|year[- ]old|\bsex\b|occupation|demograph",
    ),
    ("speaker", r"speaker|who said|said by|attribut|patient (?:said|asked)|doctor (?:said|asked)"),
    (
        "symptom status (denied ↔ reported)",
        r"\bden(?:y|ies|ied)\b|affirm|negat|reported .* as|"
        r"not deni|opposite|said yes|said no|endorse",
    ),
    (
        "value / frequency / dose",
        r"frequen|\bdose|\bdaily|weekly|twice|once|\bmg\b|value|number|"
        r"\bunit|reading|level",
    ),
    ("side / body site", r"\bside\b|\bleft\b|\bright\b|\bsite\b|location|laterality|body part"),
    ("vital signs", r"vital|blood pressure|heart rate|temperature|pulse|oxygen|saturation|\bbp\b"),
    ("exam finding", r"exam|auscultat|palpat|inspect|finding|tender|range of motion|normal"),
    (
        "counselling / plan / follow-up",
        r"counsel|educat|advis|instruct|plan|referr|follow|"
        r"discuss|recommend|return|schedul|order",
    ),
    ("history / medication", r"history|medication|drug|prescri|surgery|allerg"),
    ("timing", r"\btim|week|month|year|day|duration|ago|since"),
]
FLAG_KINDS = [  # (kind, pattern over the flagging verdict's rationale)
    ("medication not named", r"^medication '"),
    ("procedure/test not named", r"^procedure/test"),
    ("diagnosis not stated or inferable", r"^diagnosis '"),
    ("citation", r"^cites a source"),
    ("value not stated", r"^value .* not stated|has no equivalent"),
    ("value disagrees", r"disagrees with what the visit says"),
    ("affirmed ↔ denied", r"^claim (?:affirms|denies)"),
    ("left ↔ right", r"contradicts '(?:left|right)"),
    ("no basis (wording)", r"^nothing in the visit supports|^the visit does not say this word"),
    ("exam never voiced", r"^the visit (?:voices no examination|reads out no vital)"),
    ("combiner: words the visit never says", r"^never said in the visit"),
    ("combiner: words missing near the claim", r"^the passages that match it"),
    ("combiner: exam never voiced", r"^an examination finding the visit never voices"),
    ("combiner: statement not made", r"^the visit does not say this"),
]


def kind_of(text: str, kinds: list[tuple[str, str]], default: str = "other") -> str:
    for name, pattern in kinds:
        if re.search(pattern, text, re.I):
            return name
    return default


# -- judging ---------------------------------------------------------------------------------
async def judge_notes(name: str, setup, notes: dict, seconds: list[float]) -> dict:
    """``{note_id: [(claim, outcome)]}`` for every labelled note."""
    out = {}
    for i, (note_id, note) in enumerate(notes.items(), 1):
        started = time.perf_counter()
        result = await ajudge_note(note["dialogue"], note["note"], setup=setup, note_id=note_id)
        seconds.append(time.perf_counter() - started)
        by_id = {v.claim_id: v for v in result.report.verdicts}
        out[note_id] = [(c, by_id.get(c.id)) for c in result.report.claims]
        print(f"\r{name}: {i}/{len(notes)} notes", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def unit_results(units: dict[str, list[LabelledUnit]], judged: dict) -> list[UnitResult]:
    results = []
    for note_id, note_units in units.items():
        calls = [
            ClaimCall(c.start, c.end, None if v is None else not v.supported)
            for c, v in judged[note_id]
        ]
        results += [UnitResult(u, unit_call(u.start, u.end, calls)) for u in note_units]
    return results


def flagging_verdicts(result: UnitResult, judged: dict) -> list[tuple]:
    u = result.unit
    return [
        (c, v)
        for c, v in judged[u.note_id]
        if v is not None and not v.supported and overlaps(u.start, u.end, c.start, c.end)
    ]


# -- statistics ----------------------------------------------------------------------------------
def encounter_bootstrap(results: list[UnitResult], keys: tuple[str, ...], n: int = 1000) -> dict:
    """Percentile 95% intervals of summary statistics, resampling whole encounters."""
    by_enc: dict[str, list[UnitResult]] = defaultdict(list)
    for r in results:
        by_enc[r.unit.encounter].append(r)
    names = sorted(by_enc)
    rng = np.random.default_rng(0)
    draws: dict[str, list[float]] = {k: [] for k in keys}
    for _ in range(n):
        picked = rng.choice(len(names), size=len(names), replace=True)
        sample = [r for i in picked for r in by_enc[names[i]]]
        summary = agreement_summary(sample)
        for k in keys:
            if summary[k] is not None:
                draws[k].append(float(summary[k]))
    return {
        k: (float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))) if v else (None, None)
        for k, v in draws.items()
    }


def print_severity(results: list[UnitResult], judged: dict) -> None:
    """Severity of the flags against the labels' (SPEC §9): a flagged unit is called major
    when a flagging verdict is; recall = labelled-major flagged units called major / labelled-
    major flagged units; precision over the flagged units called major (all, and errors only)."""
    flagged = [r for r in results if r.flagged]
    called = {
        id(r)
        for r in flagged
        if any(v.severity == "major" for _, v in flagging_verdicts(r, judged))
    }
    if not called and not any(v.severity for r in flagged for _, v in flagging_verdicts(r, judged)):
        return  # this judge rates no severity
    majors = [r for r in flagged if r.unit.major]
    hits = sum(1 for r in majors if id(r) in called)
    errors_called = sum(1 for r in flagged if id(r) in called and r.unit.positive)
    print(
        f"  {'severity':14} major recall {fmt(hits / len(majors) if majors else None)} "
        f"({hits} of {len(majors)} flagged major errors); precision of 'major' "
        f"{fmt(hits / len(called) if called else None)} over {len(called)} flags called major, "
        f"{fmt(hits / errors_called if errors_called else None)} over the {errors_called} "
        "of them that are errors"
    )


def tier5_precision(results: list[UnitResult], judged: dict) -> dict | None:
    """Tier-5 claims against the labels of the units they overlap: precision = claims
    overlapping a unit labelled ``contradicted`` / tier-5 claims with a labelled unit (an
    unsaid claim is tier 4, so ``unsupported`` units do not count as hits)."""
    by_note: dict[str, list[UnitResult]] = defaultdict(list)
    for r in results:
        by_note[r.unit.note_id].append(r)
    counts = {"contradicted": 0, "unsupported": 0, "supported": 0}
    for note_id, rs in by_note.items():
        for c, v in judged[note_id]:
            if v is None or v.tier != 5:
                continue
            labels = {
                r.unit.label for r in rs if overlaps(r.unit.start, r.unit.end, c.start, c.end)
            }
            if labels:
                worst = next(k for k in counts if k in labels)
                counts[worst] += 1
    n = sum(counts.values())
    if not n:
        return None
    lo, hi = wilson_interval(counts["contradicted"], n)
    print(
        f"  {'tier 5':14} precision {fmt(counts['contradicted'] / n)} [{fmt(lo)}, {fmt(hi)}] "
        f"over {n} tier-5 claims (units labelled contradicted {counts['contradicted']}, "
        f"unsupported {counts['unsupported']}, supported {counts['supported']})"
    )
    return {"claims": n, **counts, "precision": counts["contradicted"] / n}


def fmt(x, pct: bool = False) -> str:
    if x is None:
        return "n/a"
    return f"{x:.1%}" if pct else f"{x:.2f}"


def report(name: str, results: list[UnitResult], judged: dict, notes: dict, examples: int) -> dict:
    s = agreement_summary(results)
    ci = encounter_bootstrap(results, ("precision", "recall", "f1", "kappa", "note_spearman"))
    baseline = 1 - s["positives"] / s["units"] if s["units"] else None
    print(
        f"\n== {name}: {s['units']} units of {s['notes']} notes "
        f"({s['excluded_units']} unjudged, excluded); {s['positives']} labelled errors, "
        f"{s['flagged']} flagged =="
    )
    for key in ("precision", "recall", "f1", "kappa", "note_spearman"):
        lo, hi = ci[key]
        print(f"  {key:14} {fmt(s[key])}  [{fmt(lo)}, {fmt(hi)}]")
    print(f"  {'accuracy':14} {fmt(s['accuracy'])}  (all 'supported': {fmt(baseline)})")
    print(
        f"  {'major recall':14} {fmt(s['major_recall'])}  ({s['majors_flagged']} of {s['majors']})"
    )
    print_severity(results, judged)
    tier5 = tier5_precision(results, judged)
    print("  per system: labelled share → judged share (units)")
    for system, v in s["systems"].items():
        print(
            f"    {system:10} {fmt(v['gold_share'], True):>6} → {fmt(v['judged_share'], True):>6}"
            f"  ({v['units']})"
        )
    print(f"  systems ranked as the labels rank them: {s['system_rank_agrees']}")
    misses = [r for r in results if r.unit.positive and r.call == "cleared"]
    false_flags = [r for r in results if not r.unit.positive and r.flagged]
    miss_kinds: dict[str, list[UnitResult]] = defaultdict(list)
    for r in misses:
        miss_kinds[kind_of(f"{r.unit.reason} {r.unit.span}", MISS_KINDS)].append(r)
    flag_kinds: dict[str, list[tuple]] = defaultdict(list)
    for r in false_flags:
        why = flagging_verdicts(r, judged)[0][1].rationale
        flag_kinds[kind_of(why, FLAG_KINDS, default="llm / other")].append((r, why))
    print(f"  misses by kind ({len(misses)}):")
    for kind, rs in sorted(miss_kinds.items(), key=lambda kv: -len(kv[1])):
        majors = sum(r.unit.major for r in rs)
        print(f"    {len(rs):3} ({majors} major)  {kind}")
        for r in rs[:examples]:
            print(
                f"          - [{r.unit.note_id} u{r.unit.unit}] {r.unit.text[:90]!r}"
                f"  — label: {r.unit.reason}"
            )
    print(f"  false flags by kind ({len(false_flags)}):")
    for kind, rs in sorted(flag_kinds.items(), key=lambda kv: -len(kv[1])):
        print(f"    {len(rs):3}  {kind}")
        for r, why in rs[:examples]:
            print(
                f"          - [{r.unit.note_id} u{r.unit.unit}] {r.unit.text[:90]!r}"
                f"  — judge: {why[:90]}"
            )
    s["ci95"] = ci
    s["tier5"] = tier5
    s["all_supported_accuracy"] = baseline
    s["miss_kinds"] = {k: len(v) for k, v in miss_kinds.items()}
    s["false_flag_kinds"] = {k: len(v) for k, v in flag_kinds.items()}
    return s


async def copy_notes(name: str, setup, limit: int | None) -> None:
    """Share of claims flagged when the note is the transcript itself (ACI-Bench's
    ``transcript`` baseline for test3): every claim is stated, so every flag is false."""
    path = SHARED.parent / "model_notes" / "transcript_clef_taskC_test3.csv"
    with path.open() as f:
        rows = list(csv.DictReader(f))[:limit]
    flagged = total = 0
    for r in rows:
        result = await ajudge_note(r["dialogue"], r["note"], setup=setup)
        flagged += result.report.n_hallucinated
        total += result.report.n_judged
    lo, hi = wilson_interval(flagged, total)
    print(
        f"  transcript-copy notes: {flagged}/{total} claims flagged = {flagged / total:.1%} "
        f"[{lo:.1%}, {hi:.1%}] over {len(rows)} notes (target ≤ 3%)"
    )


def save_rows(path: Path, name: str, results: list[UnitResult], judged: dict, notes: dict) -> None:
    with path.open("a") as out:
        for r in results:
            u = r.unit
            section = next(
                (
                    s.soap
                    for s in segment_note(notes[u.note_id]["note"]).sections
                    if s.start <= u.start < s.end
                ),
                None,
            )
            claims = [
                {
                    "text": c.text,
                    "tier": v.tier,
                    "rationale": v.rationale,
                    "severity": v.severity,
                    "harm_category": v.harm_category,
                }
                for c, v in judged[u.note_id]
                if v is not None and overlaps(u.start, u.end, c.start, c.end)
            ]
            row = {
                "judge": name,
                "note_id": u.note_id,
                "unit": u.unit,
                "section": section,
                "text": u.text,
                "label": u.label,
                "severity": u.severity,
                "span": u.span,
                "reason": u.reason,
                "call": r.call,
                "claims": claims,
            }
            out.write(json.dumps(row) + "\n")


async def main_async(args) -> None:
    notes, units = load_labelled(args.data, args.labels, args.encounters)
    if not notes:
        wanted = f" for {', '.join(sorted(args.encounters))}" if args.encounters else ""
        raise InputError(f"no labelled notes{wanted} under {', '.join(map(str, args.labels))}")
    unknown = [j for j in args.judges if j not in JUDGES]
    if unknown:
        raise InputError(f"unknown judge {unknown[0]!r}: use {' or '.join(JUDGES)}")
    n_units = sum(map(len, units.values()))
    encounters = sorted({n["encounter"] for n in notes.values()})
    print(
        f"{len(notes)} labelled notes of {len(encounters)} encounters, {n_units} units; "
        "95% intervals resample whole encounters"
    )
    kb = KnowledgeBase.default()
    summaries = {}
    if args.save:
        args.save.write_text("")
    for name in args.judges:
        if args.count_calls:
            from bench_soap import CountingChatModel  # a scripted model, bench only

            model = CountingChatModel()
            setup = make_setup(name, "llm", chat_model=model, knowledge=kb)
        else:
            cache = ResponseCache() if args.backend != "offline" else None  # re-runs are free
            setup = make_setup(
                name, args.backend, knowledge=kb, protocol=args.protocol, cache=cache
            )
        if setup.provenance.backend == "offline":  # warm the embedding model and caches
            first = next(iter(notes.values()))
            await ajudge_note(first["dialogue"], first["note"], setup=setup)
        seconds: list[float] = []
        judged = await judge_notes(name, setup, notes, seconds)
        results = unit_results(units, judged)
        summaries[name] = report(name, results, judged, notes, args.examples)
        summaries[name]["seconds_per_note_median"] = statistics.median(seconds)
        print(
            f"  {statistics.median(seconds):.2f} s per note (median), "
            f"{sum(seconds):.0f} s for {len(seconds)} notes; backend {setup.provenance.backend}"
        )
        if args.count_calls:
            print(
                f"  counting model: {model.calls} calls for {len(notes)} notes "
                f"({model.calls / len(notes):.1f} per note)"
            )
        elif setup.caller is not None:
            u = setup.caller.usage
            failures = sum(1 for n in judged.values() for _, v in n if v is None)
            claims = sum(len(n) for n in judged.values())
            print(
                f"  model {setup.caller.model_id} ({args.protocol} protocol): {u.calls} calls "
                f"({u.calls / len(notes):.1f} per note; {u.cache_hits} answered from the "
                f"cache), {u.input_tokens} tokens in / {u.output_tokens} out, JSON asked as "
                f"{u.output_modes}; claims without a verdict {failures} of {claims} "
                f"({u.parse_failures} parse failures, {u.errors} call errors)"
            )
            summaries[name]["usage"] = u.as_dict()
        if args.save:
            save_rows(args.save, name, results, judged, notes)
        if args.copies:
            await copy_notes(name, setup, None)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS {peak:.0f} MB")
    if args.json:
        args.json.write_text(json.dumps({"encounters": encounters, "judges": summaries}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="A unit is flagged when a tier 4-5 claim overlaps it; 'major' recall counts the "
        "labels' major errors. Exit 2 on missing data or labels.",
    )
    parser.add_argument(
        "--judges",
        default=",".join(JUDGES),
        type=lambda s: s.split(","),
        help=f"comma-separated judges to score (default: {','.join(JUDGES)})",
    )
    parser.add_argument(
        "--backend",
        default="offline",
        choices=("offline", "llm", "local"),
        help="offline verifier (default), the configured OpenAI-compatible endpoint, or a GGUF "
        "file served on 127.0.0.1 (local, with --gguf)",
    )
    parser.add_argument("--gguf", type=Path, default=None, help="the GGUF file of --backend local")
    parser.add_argument(
        "--protocol",
        default="batch",
        choices=("batch", "claim"),
        help="how the llm backend asks: batch (8 claims a call) or claim (one call a claim)",
    )
    parser.add_argument(
        "--count-calls",
        action="store_true",
        help="run the LLM path against a scripted counting chat model and report calls per note",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=SHARED,
        help="claim-labels directory with notes.jsonl and units.jsonl (default: %(default)s)",
    )
    parser.add_argument(
        "--labels",
        type=Path,
        nargs="+",
        default=None,
        help="label directories, one JSONL per encounter; the first holding an encounter wins",
    )
    parser.add_argument(
        "--encounters",
        type=lambda s: set(s.split(",")),
        default=None,
        help="only these encounters (comma-separated, e.g. D2N170,D2N171)",
    )
    parser.add_argument(
        "--examples", type=int, default=2, help="examples printed per kind of miss and false flag"
    )
    parser.add_argument(
        "--save", type=Path, default=None, help="write every unit with its label and call (JSONL)"
    )
    parser.add_argument(
        "--copies",
        action="store_true",
        help="also judge the 40 transcript-copy notes (every flag is false)",
    )
    parser.add_argument(
        "--json", type=Path, default=None, help="write the summaries as JSON to this file"
    )
    args = parser.parse_args()
    args.labels = args.labels or default_labels(args.data)
    if args.gguf is not None:
        os.environ["CLINJUDGE_GGUF"] = str(args.gguf)
    sys.path.insert(0, str(HERE))
    try:
        asyncio.run(main_async(args))
    except (InputError, ConfigError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
