"""Quality of the offline SOAP judges with the knowledge layer (issue 3 benchmark), on the 87
ACI-Bench train+valid encounters.

(a) hallucination rate of the human-written reference notes, lexical vs inference-aware, with
    95% Wilson intervals, next to the paper's 35.2% / 9.1% / 10.4% (SPEC §1);
(b) mechanical perturbations (clinjudge.inject), one per note per type: the share of injected
    errors flagged and of legitimate rewrites flagged — flagged = a tier 4–5 claim whose span
    overlaps the changed span — for both judges, with n and Wilson intervals. "before" is the
    same share on the original note's claims at that place (what the judge flagged anyway),
    "new" the perturbations flagged only after the edit;
(c) run time.

Only the claims that overlap the changed span are judged in a perturbed note (the offline
verifier judges each claim on its own; the transcript facts are built once per encounter and
shared by both judges and every perturbed copy of the note).

    .venv/bin/python bench/bench_knowledge_judge.py [--data DIR] [--limit N] [--seed S]
        [--types dose_change,...] [--no-reference] [--examples K] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from clinjudge.api import make_setup  # noqa: E402
from clinjudge.datasets import Item, load_aci_bench  # noqa: E402
from clinjudge.grounding.note_input import NoteInput  # noqa: E402
from clinjudge.inject import PERTURBERS, Perturbation, spans_touch  # noqa: E402
from clinjudge.knowledge.base import KnowledgeBase  # noqa: E402
from clinjudge.metrics.intervals import wilson_interval  # noqa: E402
from clinjudge.text.claims import split_claims  # noqa: E402
from clinjudge.types import Claim, Outcome, Verdict  # noqa: E402

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench" / "challenge_data"
)
JUDGES = ("lexical", "inference-aware")
PAPER = {"stage 1 (lexical)": 0.352, "stage 2 (inference-aware)": 0.091, "human": 0.104}


def flagged(outcome: Outcome | None) -> bool:
    """A hallucinated verdict (tier 4–5); parse failures and errors are never flags."""
    return isinstance(outcome, Verdict) and not outcome.supported


def rate(k: int, n: int) -> str:
    lo, hi = wilson_interval(k, n)
    share = k / n if n else float("nan")
    return f"{share:6.1%} [{lo:5.1%}–{hi:5.1%}] ({k}/{n})"


class Encounter:
    """One transcript + reference note, judged lazily claim by claim by both judges; the
    transcript facts are computed once and lent to every perturbed copy of the note."""

    def __init__(self, item: Item, verifiers: dict, seconds: dict[str, list[float]]):
        self.item = item
        self.verifiers = verifiers
        self.seconds = seconds
        self.base = NoteInput(item.transcript, item.note)
        self.claims = split_claims(self.base.note)
        self._done: dict[tuple[str, int, int], Outcome] = {}

    async def judge(self, note: NoteInput, claims: list[Claim], timing: str) -> dict:
        """``{judge: [outcome per claim]}``; verdicts on the reference note are memoised."""
        for dense, facts in self.base.facts.items():  # one transcript: its facts serve all
            note.facts.setdefault(dense, facts)
        out = {}
        for name, verifier in self.verifiers.items():
            todo = [c for c in claims if (name, c.start, c.end) not in self._done]
            todo = todo if note is self.base else claims
            started = time.perf_counter()
            got = await verifier.verify(todo, note) if todo else []
            self.seconds[f"{timing}/{name}"].append(time.perf_counter() - started)
            if note is self.base:
                self._done.update(
                    {(name, c.start, c.end): o for c, o in zip(todo, got, strict=True)}
                )
                out[name] = [self._done[(name, c.start, c.end)] for c in claims]
            else:
                out[name] = got
            for dense, facts in note.facts.items():
                self.base.facts.setdefault(dense, facts)
        return out


async def reference_rates(encounters: list[Encounter]) -> dict:
    counts = {name: Counter() for name in JUDGES}
    for enc in encounters:
        outcomes = await enc.judge(enc.base, enc.claims, "reference note, all claims")
        for name, got in outcomes.items():
            verdicts = [o for o in got if isinstance(o, Verdict)]
            counts[name]["judged"] += len(verdicts)
            counts[name]["hallucinated"] += sum(flagged(o) for o in verdicts)
            counts[name]["notes"] += 1
    print(f"\n== (a) reference notes: {len(encounters)} notes, claims judged by each judge ==")
    for name in JUDGES:
        c = counts[name]
        print(f"{name:>16}: hallucination rate {rate(c['hallucinated'], c['judged'])}")
    lex = counts["lexical"]["hallucinated"] / max(1, counts["lexical"]["judged"])
    ia = counts["inference-aware"]["hallucinated"] / max(1, counts["inference-aware"]["judged"])
    print(f"{'':>16}  inference-aware / lexical = {ia / lex:.2f} (target ≤ 0.33; ≤ 12% absolute)")
    print("           paper: " + ", ".join(f"{k} {v:.1%}" for k, v in PAPER.items()))
    return {name: dict(c) for name, c in counts.items()}


def _example(p: Perturbation, claim: Claim, outcome: Outcome, was_flagged: bool) -> dict:
    return {
        "id": p.source_id,
        "flagged_before": was_flagged,
        "edit": f"{p.before!r} → {p.after!r}",
        "claim": claim.text if len(claim.text) <= 160 else claim.text[:157] + "...",
        "tier": getattr(outcome, "tier", None),
        "why": getattr(outcome, "rationale", getattr(outcome, "reason", "")),
    }


async def perturbations(encounters: list[Encounter], types: list[str], seed: int, kb) -> dict:
    stats: dict[str, dict] = {t: defaultdict(Counter) for t in types}
    examples: dict[str, dict[str, list]] = {t: defaultdict(list) for t in types}
    for enc in encounters:
        item = enc.item
        for kind in types:
            rng = random.Random(f"{seed}:{item.id}:{kind}")
            p = PERTURBERS[kind](item.note, item.transcript, seed=rng, kb=kb, source_id=item.id)
            if p is None:
                stats[kind]["count"]["not_applicable"] += 1
                continue
            edited = NoteInput(item.transcript, p.note)
            claims = [c for c in split_claims(edited.note) if p.overlaps(c.start, c.end)]
            if not claims:
                stats[kind]["count"]["no_claim"] += 1
                continue
            a, b = p.original_span
            before = [c for c in enc.claims if a < b and spans_touch(a, b, c.start, c.end)]
            after_outcomes = await enc.judge(edited, claims, "perturbed note, edited claims")
            before_outcomes = await enc.judge(enc.base, before, "original claims") if before else {}
            stats[kind]["count"]["n"] += 1
            for name in JUDGES:
                hit = [
                    (c, o) for c, o in zip(claims, after_outcomes[name], strict=True) if flagged(o)
                ]
                was = any(flagged(o) for o in before_outcomes.get(name, []))
                s = stats[kind][name]
                s["flagged"] += bool(hit)
                s["before"] += was
                s["new"] += bool(hit) and not was
                shown = hit[0] if hit else (claims[0], after_outcomes[name][0])
                if hit:
                    s[f"tier{shown[1].tier}"] += 1
                elif isinstance(shown[1], Verdict):
                    s[f"supported:{shown[1].subtype}"] += 1
                wanted = bool(hit) if PERTURBERS[kind].kind == "rewrite" else not hit
                if wanted:
                    examples[kind][name].append(_example(p, *shown, was))
    return {"stats": stats, "examples": examples}


def report_perturbations(result: dict, types: list[str], n_examples: int) -> None:
    stats, examples = result["stats"], result["examples"]
    for kind_name, label in (("error", "injected errors flagged"), ("rewrite", "rewrites flagged")):
        chosen = [t for t in types if PERTURBERS[t].kind == kind_name]
        if not chosen:
            continue
        print(f"\n== (b) {label} (flag = tier 4–5 claim overlapping the changed span) ==")
        for name in JUDGES:
            total = Counter()
            print(f"-- {name}")
            for t in chosen:
                s, n = stats[t][name], stats[t]["count"]["n"]
                total.update({"n": n, "flagged": s["flagged"], "new": s["new"]})
                total["before"] += s["before"]
                tiers = ", ".join(
                    f"{k}={v}" for k, v in sorted(s.items()) if ":" in k or "tier" in k
                )
                print(
                    f"  {t:>21}: {rate(s['flagged'], n)}  before {s['before']:>2}  "
                    f"new {rate(s['new'], n)}  [{tiers}]"
                )
            print(
                f"  {'all ' + kind_name + 's':>21}: {rate(total['flagged'], total['n'])}  "
                f"before {total['before']:>2}  new {rate(total['new'], total['n'])}"
            )
    print("\napplicability per type (perturbed / no overlapping claim / not applicable):")
    for t in types:
        c = stats[t]["count"]
        print(f"  {t:>21}: {c['n']} / {c['no_claim']} / {c['not_applicable']}")
    if n_examples:
        print("\n== failures of the inference-aware judge (missed errors, flagged rewrites;")
        print("   flags the original claim did not have first) ==")
        for t in types:
            ranked = sorted(examples[t]["inference-aware"], key=lambda ex: ex["flagged_before"])
            for ex in ranked[:n_examples]:
                before = " (flagged before the edit too)" if ex["flagged_before"] else ""
                print(f"  [{t}] {ex['id']} {ex['edit']}: tier {ex['tier']}{before} — {ex['why']}")
                print(f"      claim: {ex['claim']}")


def load(data_dir: Path, limit: int | None) -> list[Item]:
    items = (
        load_aci_bench(data_dir / "train.csv").items + load_aci_bench(data_dir / "valid.csv").items
    )
    return items[:limit] if limit else items


async def main_async(args: argparse.Namespace) -> dict:
    kb = KnowledgeBase.default()
    verifiers = {name: make_setup(name, "offline", knowledge=kb).verifier for name in JUDGES}
    seconds: dict[str, list[float]] = defaultdict(list)
    encounters = [Encounter(item, verifiers, seconds) for item in load(args.data, args.limit)]
    types = args.types.split(",") if args.types else list(PERTURBERS)
    out: dict = {"n_encounters": len(encounters), "types": types, "seed": args.seed}
    started = time.perf_counter()
    if not args.no_reference:
        out["reference"] = await reference_rates(encounters)
    reference_wall = time.perf_counter() - started
    result = await perturbations(encounters, types, args.seed, kb)
    perturb_wall = time.perf_counter() - started - reference_wall
    report_perturbations(result, types, args.examples)
    walls = f"reference {reference_wall:.0f} s, perturbations {perturb_wall:.0f} s"
    print(f"\n== (c) run time: {walls} ==")
    for key, values in sorted(seconds.items()):
        print(
            f"  {key:>28}: median {statistics.median(values):.3f} s per call, "
            f"total {sum(values):.0f} s over {len(values)} calls"
        )
    out.update(result, seconds={k: sum(v) for k, v in seconds.items()})
    out["wall_seconds"] = {"reference": reference_wall, "perturbations": perturb_wall}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--types", default="", help="comma-separated perturbation types")
    parser.add_argument("--no-reference", action="store_true", help="skip part (a)")
    parser.add_argument("--examples", type=int, default=3, help="failure examples per type")
    parser.add_argument("--json", type=Path, default=None, help="write all numbers here")
    args = parser.parse_args()
    out = asyncio.run(main_async(args))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=dict), encoding="utf-8")


if __name__ == "__main__":
    main()
