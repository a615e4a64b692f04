"""Agreement of the SOAP judges with sentence-level reference labels (issue 12; SPEC §9).

Runs each judge over every labelled ACI-Bench test3 note; a labelled unit (sentence) is flagged
when a tier 4–5 claim overlaps it. Prints, per judge: precision, recall, F1, accuracy and
Cohen's κ over units (95% intervals resample whole encounters), the accuracy of answering
"supported" to everything, recall of major errors, labelled vs judged positive share per system,
the per-note Spearman correlation of the two shares, and the misses and false flags grouped by
kind with examples.

The bench judges the notes itself; every number is computed by the code behind
``clinjudge agreement`` (:mod:`clinjudge.agreement.labels` reads the labels,
:mod:`clinjudge.metrics.unit_agreement` and :mod:`clinjudge.metrics.disagreements` score them),
so ``clinjudge compare`` over the same notes followed by ``clinjudge agreement`` gives the same
table.

Labels are read from the shared development labels and the labels committed under
``bench/claim_labels/`` (both by the same GUIDE.md); ``--labels`` picks directories.

    .venv/bin/python bench/bench_agreement.py [--judges lexical,inference-aware]
        [--backend offline|llm] [--protocol batch|claim] [--count-calls]
        [--part open|sealed|all] [--encounters D2N170,...] [--examples 3] [--labels DIR ...]
        [--save OUT.jsonl] [--json OUT.json]

**Sealed encounters.** ``claim_labels/sealed.json`` names the encounters (10 drawn with a
recorded seed, issue 36; one since withdrawn, its reason recorded there) that nobody reads while
writing rules. ``--part open`` (the default) scores the others and prints examples from them only;
``--part sealed`` scores the sealed ones (run it at the end of a round of rules, and trust its
numbers); ``--part all`` scores all 40.

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
import resource
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


from clinjudge.agreement.labels import (  # noqa: E402
    labelled_notes,
    read_label_set,
    read_units,
)
from clinjudge.agreement.runs import judged_claims  # noqa: E402
from clinjudge.api import ajudge_note, make_setup  # noqa: E402
from clinjudge.errors import ConfigError  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402
from clinjudge.llm import ResponseCache  # noqa: E402
from clinjudge.metrics.disagreements import false_flags_by_kind, misses_by_kind  # noqa: E402
from clinjudge.metrics.intervals import wilson_interval  # noqa: E402
from clinjudge.metrics.unit_agreement import (  # noqa: E402
    INTERVAL_KEYS,
    JudgedClaim,
    judge_agreement,
    unit_results,
)
from clinjudge.metrics.unit_labels import UnitResult, overlaps  # noqa: E402
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
    """Notes that have labels, and their labelled units: each label directory is one label set
    (the first set labelling a unit wins), read by :mod:`clinjudge.agreement.labels`."""
    for name in ("notes.jsonl", "units.jsonl"):
        if not (data / name).is_file():
            raise InputError(f"{data / name} not found: --data is the claim-labels directory")
    sets = [read_label_set(folder) for folder in label_dirs if folder.is_dir()]
    units = labelled_notes(sets, read_units(data / "units.jsonl"), encounters).units
    notes = {n["id"]: n for n in map(json.loads, (data / "notes.jsonl").open()) if n["id"] in units}
    return notes, units


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


def claims_of(judged: dict) -> dict[str, list[JudgedClaim]]:
    """The judged claims of every note as the run layer reads them from a run's rows."""
    return {
        note_id: judged_claims(
            {
                "claims": [c.model_dump(mode="json") for c, _ in pairs],
                "verdicts": [v.model_dump(mode="json") for _, v in pairs if v is not None],
            }
        )
        for note_id, pairs in judged.items()
    }


# -- report -------------------------------------------------------------------------------------
def print_severity(severity: dict | None) -> None:
    """Severity of the flags against the labels' (SPEC §9), as
    :func:`clinjudge.metrics.unit_agreement.severity_agreement` computes it."""
    if severity is None:
        return  # this judge rates no severity
    print(
        f"  {'severity':14} major recall {fmt(severity['major_recall'])} "
        f"({severity['hits']} of {severity['flagged_majors']} flagged major errors); precision "
        f"of 'major' {fmt(severity['major_precision'])} over {severity['called_major']} flags "
        f"called major, {fmt(severity['major_precision_errors'])} over the "
        f"{severity['called_major_errors']} of them that are errors"
    )


def print_tier5(tier5: dict | None) -> None:
    """Tier-5 precision against ``contradicted`` units
    (:func:`clinjudge.metrics.unit_agreement.tier5_precision`)."""
    if tier5 is None:
        return
    lo, hi = tier5["ci95"]
    print(
        f"  {'tier 5':14} precision {fmt(tier5['precision'])} [{fmt(lo)}, {fmt(hi)}] "
        f"over {tier5['claims']} tier-5 claims (units labelled contradicted "
        f"{tier5['contradicted']}, unsupported {tier5['unsupported']}, supported "
        f"{tier5['supported']})"
    )


def fmt(x, pct: bool = False) -> str:
    if x is None:
        return "n/a"
    return f"{x:.1%}" if pct else f"{x:.2f}"


def report(name: str, results: list[UnitResult], claims: dict, examples: int) -> dict:
    """Print one judge's agreement (numbers from :func:`judge_agreement`) and return them."""
    s = judge_agreement(results, claims)
    ci, baseline = s["ci95"], s["all_supported_accuracy"]
    print(
        f"\n== {name}: {s['units']} units of {s['notes']} notes "
        f"({s['excluded_units']} unjudged, excluded); {s['positives']} labelled errors, "
        f"{s['flagged']} flagged =="
    )
    for key in INTERVAL_KEYS:
        lo, hi = ci[key]
        print(f"  {key:14} {fmt(s[key])}  [{fmt(lo)}, {fmt(hi)}]")
    print(f"  {'accuracy':14} {fmt(s['accuracy'])}  (all 'supported': {fmt(baseline)})")
    print(
        f"  {'major recall':14} {fmt(s['major_recall'])}  ({s['majors_flagged']} of {s['majors']})"
    )
    print_severity(s["severity"])
    print_tier5(s["tier5"])
    print("  per system: labelled share → judged share (units)")
    for system, v in s["systems"].items():
        print(
            f"    {system:10} {fmt(v['gold_share'], True):>6} → {fmt(v['judged_share'], True):>6}"
            f"  ({v['units']})"
        )
    print(f"  systems ranked as the labels rank them: {s['system_rank_agrees']}")
    miss_kinds = misses_by_kind(results)
    flag_kinds = false_flags_by_kind(results, claims)
    print(f"  misses by kind ({sum(map(len, miss_kinds.values()))}):")
    for kind, rs in sorted(miss_kinds.items(), key=lambda kv: -len(kv[1])):
        majors = sum(r.unit.major for r in rs)
        print(f"    {len(rs):3} ({majors} major)  {kind}")
        for r in rs[:examples]:
            print(
                f"          - [{r.unit.note_id} u{r.unit.unit}] {r.unit.text[:90]!r}"
                f"  — label: {r.unit.reason}"
            )
    print(f"  false flags by kind ({sum(map(len, flag_kinds.values()))}):")
    for kind, pairs in sorted(flag_kinds.items(), key=lambda kv: -len(kv[1])):
        print(f"    {len(pairs):3}  {kind}")
        for r, why in pairs[:examples]:
            print(
                f"          - [{r.unit.note_id} u{r.unit.unit}] {r.unit.text[:90]!r}"
                f"  — judge: {why[:90]}"
            )
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


def sealed_encounters() -> set[str]:
    """The sealed encounters of ``claim_labels/sealed.json`` (module docstring)."""
    return set(json.loads((HERE / "claim_labels" / "sealed.json").read_text())["sealed"])


def part_encounters(part: str, wanted: set[str] | None) -> set[str]:
    """The encounters ``--part`` (and ``--encounters``) leave to score."""
    every = {f"D2N{n}" for n in range(168, 208)} if wanted is None else wanted
    sealed = sealed_encounters()
    return {"all": every, "open": every - sealed, "sealed": every & sealed}[part]


async def main_async(args) -> None:
    chosen = part_encounters(args.part, args.encounters)
    print(f"part {args.part}: {len(chosen)} encounters")
    notes, units = load_labelled(args.data, args.labels, chosen)
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
        changed = args.attribution or args.combiner_threshold is not None
        if changed and setup.provenance.backend == "offline" and name != "lexical":
            from clinjudge.judges.offline import OfflineConfig, OfflineVerifier

            config = OfflineConfig(
                attribution=args.attribution, combiner_threshold=args.combiner_threshold
            )
            setup.verifier = OfflineVerifier(name, kb, config)
            setup.provenance.verifier = setup.verifier.fingerprint()
        if setup.provenance.backend == "offline":  # warm the embedding model and caches
            first = next(iter(notes.values()))
            await ajudge_note(first["dialogue"], first["note"], setup=setup)
        seconds: list[float] = []
        judged = await judge_notes(name, setup, notes, seconds)
        claims = claims_of(judged)
        results = unit_results(units, claims)
        summaries[name] = report(name, results, claims, args.examples)
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
            n_claims = sum(len(n) for n in judged.values())
            print(
                f"  model {setup.caller.model_id} ({args.protocol} protocol): {u.calls} calls "
                f"({u.calls / len(notes):.1f} per note; {u.cache_hits} answered from the "
                f"cache), {u.input_tokens} tokens in / {u.output_tokens} out, JSON asked as "
                f"{u.output_modes}; claims without a verdict {failures} of {n_claims} "
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
        "--part",
        choices=("open", "sealed", "all"),
        default="open",
        help="open: the encounters rules may be fitted on (default); sealed: those of "
        "claim_labels/sealed.json nobody reads (score them at the end); all: the 40",
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
        "--attribution",
        action="store_true",
        help="offline: turn the attribution rule on (inference-aware.attribution=true)",
    )
    parser.add_argument(
        "--combiner-threshold",
        type=float,
        default=None,
        help="offline: the combiner's flagging threshold (inference-aware.combiner_threshold)",
    )
    parser.add_argument(
        "--json", type=Path, default=None, help="write the summaries as JSON to this file"
    )
    args = parser.parse_args()
    args.labels = args.labels or default_labels(args.data)
    if args.part == "sealed" and args.examples:
        print("(sealed part: no examples are printed, whatever --examples says)")
        args.examples = 0
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
