"""The offline arena on ACI-Bench test3 (issue 25; SPEC §6).

The 40 test3 encounters with the reference note and the notes of the 9 systems of
``model_notes/`` (the two baselines — the transcript and its longest doctor turn — left out),
one note column per system, judged by ``clinjudge arena`` (offline pairwise judge: every pair
of systems per encounter, both orders). Prints the overall Elo ratings with their 95%
bootstrap intervals over encounters, Bradley–Terry beside, the per-criterion Elo, the position
bias, seconds per pair, and — to compare — the share of labelled sentences that are unsupported
or contradicted per system (``claim-labels``: the shared labels and this project's).

    .venv/bin/python bench/bench_arena.py [--systems reference,ChatGPT,GPT-4,BART]
        [--limit 40] [--out /tmp/arena-test3] [--replicates 1000] [--k 4] [--count-calls]

The run directory resumes: a second run with the same ``--out`` re-judges nothing.
``--count-calls`` runs the LLM path instead, against a scripted counting chat model (defined
here, never in product code; it names the longer note the winner on every criterion), and
prints the model calls per pair.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
ACI = HERE.parents[1] / "shared" / "data" / "aci-bench"
LABELS = [ACI / "claim-labels" / "labels", HERE / "claim_labels" / "labels"]
#: The labels' system names -> the names here.
LABEL_SYSTEMS = {"reference": "reference", "chatgpt": "ChatGPT", "gpt4": "GPT-4", "bart": "BART"}
#: system name -> its file in model_notes/ (None: the reference notes of challenge_data/).
FILES = {
    "reference": None,
    "ChatGPT": "ChatGPT_test3.csv",
    "GPT-4": "GPT-4_test3.csv",
    "Text-Davinci-003": "Text-Davinci-003_test3.csv",
    "Text-Davinci-002": "Text-Davinci-002_test3.csv",
    "BART": "BART_large_clef_taskC_test3.csv",
    "BioBART": "BioBART_clef_taskC_test3.csv",
    "LED": "LED_clef_taskC_test3.csv",
    "LED-pubmed": "LED_pubmed_clef_taskC_test3.csv",
    "BART-xsum-samsum": "bart-large-xsum-samsum_clef_taskC_test3.csv",
}


def read_csv(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 30)
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def build_wide(systems: list[str], limit: int | None, path: Path) -> None:
    """One row per encounter: its dialogue and each system's note (its own column)."""
    reference = read_csv(ACI / "challenge_data" / "clef_taskC_test3.csv")[:limit]
    notes: dict[str, dict[str, str]] = {}
    for system in systems:
        file = FILES[system]
        rows = reference if file is None else read_csv(ACI / "model_notes" / file)
        notes[system] = {r["encounter_id"]: r["note"] for r in rows}
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["encounter_id", "dialogue", *systems])
        for r in reference:
            enc = r["encounter_id"]
            writer.writerow([enc, r["dialogue"], *(notes[s].get(enc, "") for s in systems)])


def label_shares() -> dict[str, tuple[int, int]]:
    """Per system: labelled sentences that are unsupported or contradicted, and all labelled
    sentences (first label directory wins per encounter and system)."""
    seen: set[tuple[str, str]] = set()
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for folder in LABELS:
        got: set[tuple[str, str]] = set()
        for file in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            for line in file.read_text(encoding="utf-8").splitlines():
                if not line.strip():
                    continue
                lab = json.loads(line)
                system = LABEL_SYSTEMS.get(lab["system"], lab["system"])
                key = (lab["encounter"], system)
                if key in seen:
                    continue
                got.add(key)
                counts[system][0] += lab["label"] in ("unsupported", "contradicted")
                counts[system][1] += 1
        seen |= got
    return {s: (k, n) for s, (k, n) in counts.items()}


def counting_model():
    """A scripted chat model that counts its calls (bench only)."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class CountingPairModel(BaseChatModel):
        calls: int = 0

        @property
        def _llm_type(self) -> str:
            return "counting"

        def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
            self.calls += 1
            text = "\n".join(str(m.content) for m in messages)
            first = text.split("Note 1:\n<<<", 1)[1].split(">>>", 1)[0]
            second = text.split("Note 2:\n<<<", 1)[1].split(">>>", 1)[0]
            winner = "1" if len(first) >= len(second) else "2"
            criteria = re.findall(r"^- (\w+):", text, re.M)
            body = {
                "criteria": [{"criterion": c, "winner": winner, "reason": ""} for c in criteria],
                "overall": {"winner": winner, "reason": ""},
            }
            message = AIMessage(json.dumps(body), response_metadata={"model_name": "counting"})
            return ChatResult(generations=[ChatGeneration(message=message)])

    return CountingPairModel()


async def count_calls(data, systems: list[str], out: Path) -> None:
    from clinjudge.arena.standings import RatingSettings
    from clinjudge.arena_run import run_arena
    from clinjudge.evaluators import BuildOptions
    from clinjudge.evaluators.pairwise import build_pairwise
    from clinjudge.llm import LLMSettings

    model = counting_model()
    options = BuildOptions(backend="llm", settings=LLMSettings(model="counting"), chat_model=model)
    pairwise = build_pairwise(options)
    result = await run_arena(
        data, systems, {}, pairwise, out, settings=RatingSettings(replicates=20, n_orders=5)
    )
    pairs = result.report["n_pairs"]
    print(
        f"== counting chat model: {model.calls} calls for {pairs} pairs "
        f"({model.calls / pairs:.2f} per pair; one criterion group of "
        f"{len(pairwise.criteria)} criteria and overall: bound 2) =="
    )


def _ci(ci: list[float] | None) -> str:
    return "n/a" if not ci else f"{ci[0]:.0f}–{ci[1]:.0f}"


def print_results(report: dict, settings, systems: list[str]) -> None:
    print(
        f"== offline arena, ACI-Bench test3: {report['n_encounters']} encounters, "
        f"{len(systems)} systems, {report['n_pairs']} pairs ({report['n_failed']} failed) =="
    )
    print(
        f"   Elo initial {settings.initial:g}, K {settings.k:g}, mean of {settings.n_orders} "
        f"shuffled orders; 95% CI: {settings.replicates} bootstrap replicates over encounters"
    )
    shares = label_shares()
    print(
        f"  {'rank':>4} {'system':18} {'Elo':>6} {'95% CI':>11} {'BT':>6} {'95% CI':>11} "
        f"{'BT rank':>7}  {'labelled wrong':>16}"
    )
    for e in report["leaderboard"]:
        k, n = shares.get(e["system"], (0, 0))
        label = f"{k / n:.0%} ({k}/{n})" if n else "not labelled"
        cells = [
            f"{e['rank']:>4}",
            f"{e['system']:18}",
            f"{e['elo']:6.0f}",
            f"{_ci(e['elo_ci95']):>11}",
            f"{e['bt']:6.0f}",
            f"{_ci(e['bt_ci95']):>11}",
            f"{e['bt_rank']:>7}",
            f" {label:>16}",
        ]
        print("  " + " ".join(cells))
    print("  per criterion (Elo):")
    for criterion, entry in report["criteria"].items():
        r = entry["ratings"]
        order = sorted(r, key=lambda s: -r[s]["elo"])
        cells = ", ".join(f"{s} {r[s]['elo']:.0f} [{_ci(r[s]['elo_ci95'])}]" for s in order)
        bias = entry["position_bias"]
        print(f"    {criterion:12} position bias {bias['rate']:.1%} of {bias['n']}: {cells}")
    t = report["timing"]
    if t["seconds_per_pair"] is not None:
        per_text = ", ".join(
            f"{n} {s:.2f} s" for n, s in t["seconds_per_text"].items() if s is not None
        )
        print(
            f"  seconds per pair: {t['seconds_per_pair']:.4f} (pair judging alone), "
            f"{t['seconds_per_pair_with_text_judging']:.2f} with the judging of each text "
            f"once; per text: {per_text}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", default=",".join(FILES))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("/tmp/arena-test3"))
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--k", type=float, default=4.0)
    parser.add_argument("--count-calls", action="store_true")
    args = parser.parse_args()
    systems = [s.strip() for s in args.systems.split(",")]
    if unknown := [s for s in systems if s not in FILES]:
        print(f"error: unknown system {unknown[0]!r}: choose from {', '.join(FILES)}")
        return 2
    from clinjudge.arena.standings import RatingSettings
    from clinjudge.arena_run import run_arena
    from clinjudge.cli.arena import build_arena_judges
    from clinjudge.datasets.systems import load_system_columns

    args.out.mkdir(parents=True, exist_ok=True)
    wide = args.out.parent / f"{args.out.name}-notes.csv"
    build_wide(systems, args.limit, wide)
    data = load_system_columns(wide, systems)
    if args.count_calls:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(count_calls(data, systems, Path(tmp) / "run"))
        return 0
    started = time.perf_counter()
    text_judges, pairwise = build_arena_judges()
    print(f"judges built in {time.perf_counter() - started:.1f} s", file=sys.stderr)

    def progress(name: str, total: int):
        state = {"n": 0, "t": time.perf_counter()}

        def advance() -> None:
            state["n"] += 1
            if state["n"] % 20 == 0 or state["n"] == total:
                rate = (time.perf_counter() - state["t"]) / state["n"]
                print(f"  {name}: {state['n']}/{total} ({rate:.2f} s each)", file=sys.stderr)

        return advance

    settings = RatingSettings(k=args.k, replicates=args.replicates)
    result = asyncio.run(
        run_arena(data, systems, text_judges, pairwise, args.out, settings=settings,
                  progress=progress)
    )  # fmt: skip
    print_results(result.report, settings, systems)
    print(f"  wrote {', '.join(str(f) for f in result.files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
