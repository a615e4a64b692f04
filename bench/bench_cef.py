"""Benchmark of CEF (issue 5) on the 100 human-scored automatic summaries of MTS-Dialog.

Offline backend, source = dialogue, summary = automatic summary, N = N' = 10 (or --n):
- Spearman ρ (95% bootstrap interval resampling whole dialogues: the 100 summaries come from 25
  dialogues) of coverage with human FactualRecall, and of
  consistency with human FactualPrecision (target: coverage–recall ρ ≥ 0.4);
- AUROC of consistency for separating summaries with HallucinationRate > 0 from the others:
  P(consistency of a clean summary > that of a hallucinating one), ties ½, same bootstrap;
- seconds per item (median after warm-up, and mean);
then the LLM path with a counting chat model (a scripted LangChain model defined here, in the
benchmark, never in product code): model calls per item against 4 + ⌈(N + N')/10⌉.

``--model-answers``: the same with a hybrid answerer (issue 23): the offline questions, answered
YES / NO / IDK by the configured model (``CLINJUDGE_MODEL`` at ``OPENAI_BASE_URL``, e.g. a local
GGUF model served by ``clinjudge serve``) instead of the offline verifier; replies are cached.
``--layout shared|focused``: the prompts the model answers with (issue 38: ``shared`` shows both
texts in every call and names the one to answer from; ``focused`` shows that one only);
``--out FILE`` writes each item's result (JSON lines); ``--compare BEFORE.jsonl AFTER.jsonl``
prints the cross answers that changed between two such files and the leakage candidates:
source questions answered IDK from the summary in BEFORE but YES in AFTER (a fact the generated
text lacks, read from the source that AFTER's prompt also showed).

``--split``: the agreement numbers on all summaries, or on the summaries of every other dialogue
(``even``: dialogues 1st, 3rd, 5th, … in ``dialogue_id`` order — the tuning half; ``odd``: the
others — held out), or ``each`` (all three). The ids of the 25 dialogues are multiples of 4, so
the halves go by the dialogue's rank (``dialogue_id // 4`` here), never by the id's own parity.

    .venv/bin/python bench/bench_cef.py [--data human_scored_summaries.jsonl] [--limit N] [--n 10]
        [--split all|even|odd|each] [--no-llm] [--model-answers [--layout focused] [--out F]]
    .venv/bin/python bench/bench_cef.py --compare focused.jsonl shared.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import statistics
import time
from pathlib import Path

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from clinjudge.datasets.items import Item
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.metrics.agreement import agreement, spearman
from clinjudge.metrics.auroc import pair_outcomes
from clinjudge.metrics.intervals import bootstrap_ci

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "mts-dialog"
    / "human_scored_summaries.jsonl"
)


class CountingChatModel(BaseChatModel):
    """Answers CEF prompts with schema-valid JSON (generation: n YES-questions quoting the text;
    answers: YES to every question id) and counts its calls."""

    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "counting"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls += 1
        text = "\n".join(str(m.content) for m in messages)
        wanted = re.search(r"Write (\d+) questions", text)
        if wanted:
            body_text = text.split("<<<", 1)[-1].split(">>>", 1)[0]
            sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", body_text) if s.strip()]
            body = {
                "questions": [
                    {"question": f"Does the text say: {s}?", "answer": "YES", "quote": s}
                    for s in sentences[: int(wanted.group(1))]
                ]
            }
        else:
            ids = dict.fromkeys(re.findall(r'"id":\s*"([ds]\d+)"', text))
            body = {"answers": [{"id": i, "answer": "YES"} for i in ids]}
        message = AIMessage(json.dumps(body), response_metadata={"model_name": "counting"})
        return ChatResult(generations=[ChatGeneration(message=message)])


def load(path: Path, limit: int | None) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return rows[:limit] if limit else rows


def item_of(row: dict) -> Item:
    return Item(id=str(row["row"]), transcript=row["dialogue"], note=row["automatic_summary"])


def auroc(scores: np.ndarray, positive: np.ndarray) -> float:
    """P(score of a negative item > score of a positive item), ties ½ (metrics.auroc)."""
    clean, flagged = scores[positive == 0], scores[positive == 1]
    if not len(clean) or not len(flagged):
        return math.nan
    u = pair_outcomes([c for c in clean for _ in flagged], [f for _ in clean for f in flagged])
    return float(np.mean([x for x in u if x is not None]))


def show(name: str, statistic, a: list, b: list, clusters: list) -> None:
    """``statistic(a, b)`` with its 95% percentile-bootstrap interval, whole dialogues resampled
    (metrics.intervals.bootstrap_ci's resampling); replicates where the statistic is undefined
    (a resample whose scores are all equal, or without a positive) are left out and counted."""
    estimate = agreement(statistic, a, b, clusters=clusters)
    if estimate.value is None:
        print(f"{name}: undefined (n={estimate.n})")
        return
    keep = [i for i in range(len(a)) if a[i] is not None and b[i] is not None]
    x, y = np.array([a[i] for i in keep]), np.array([b[i] for i in keep])
    replicates: list[float] = []

    def record(index: np.ndarray) -> float:
        idx = index.astype(int)
        replicates.append(statistic(x[idx], y[idx]))
        return 0.0

    bootstrap_ci(np.arange(len(keep), dtype=float), record, clusters=[clusters[i] for i in keep])
    undefined = int(np.isnan(replicates).sum())
    lo, hi = np.nanquantile(replicates, [0.025, 0.975])
    dropped = f", {undefined} undefined resamples left out" if undefined else ""
    print(f"{name}: {estimate.value:.3f} (95% CI {lo:.3f} to {hi:.3f}, n={estimate.n}{dropped})")


def dialogue_half(rows: list[dict]) -> dict[object, str]:
    """``even`` or ``odd`` per dialogue id: the parity of the dialogue's rank in id order."""
    ids = sorted({r["dialogue_id"] for r in rows})
    return {d: ("even" if rank % 2 == 0 else "odd") for rank, d in enumerate(ids)}


class OfflineQuestionsModelAnswers:
    """CEF with the offline questions and the model's answers (a bench-only composition)."""

    name = "offline questions, model answers"

    def __init__(self, offline_cef, llm_cef) -> None:
        self.offline, self.llm = offline_cef, llm_cef
        self.batch_size = llm_cef.batch_size

    async def generate(self, side, texts, n):
        return await self.offline.generate(side, texts, n)

    async def answer(self, questions, side, texts):
        return await self.llm.answer(questions, side, texts)


def model_answering_judge(n: int, layout: str = "shared"):
    from clinjudge.cef.factory import CefSetup, build_cef
    from clinjudge.evaluators.cef import CefEvaluator
    from clinjudge.llm import ResponseCache

    offline_cef = build_cef("offline").backend
    llm = build_cef("llm", cache=ResponseCache(), layout=layout)
    hybrid = OfflineQuestionsModelAnswers(offline_cef, llm.backend)
    provenance = {**llm.provenance, "answerer": "model", "questions": "offline"}
    provenance["layout"] = layout
    setup = CefSetup(hybrid, provenance, llm.caller, llm.prompts)
    return CefEvaluator(setup, n_source=n, n_summary=n, task="summary")


async def offline(
    rows: list[dict],
    n: int,
    splits: list[str],
    model: bool = False,
    layout: str = "shared",
    out: Path | None = None,
) -> None:
    judge = (
        model_answering_judge(n, layout)
        if model
        else build_evaluator(
            "cef", BuildOptions(backend="offline", options={"n_source": n, "n_summary": n})
        )
    )
    await judge.evaluate(item_of(rows[0]))  # warm-up: embedding model, knowledge base
    results, seconds = [], []
    started = time.perf_counter()
    for row in rows:
        t = time.perf_counter()
        results.append(await judge.evaluate(item_of(row)))
        seconds.append(time.perf_counter() - t)
    wall = time.perf_counter() - started
    if out is not None:
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in results))
    kind = f"offline questions, model answers ({layout} layout)" if model else "offline CEF"
    print(f"\n== {kind}, {len(rows)} summaries, N = N' = {n}, {wall:.1f} s wall ==")
    if model:
        u = judge.setup.caller.usage
        print(
            f"  model {judge.setup.caller.model_id}: {u.calls} calls, {u.cache_hits} cached, "
            f"{u.parse_failures} parse failures, {u.errors} errors, JSON as {u.output_modes}"
        )
    summary = judge.summarize(results)
    for metric, h in summary["headline"].items():
        value = "n/a" if h["value"] is None else f"{h['value']:.1f}"
        ci = "" if h["ci95"] is None else f" [{h['ci95'][0]:.1f}–{h['ci95'][1]:.1f}]"
        print(f"  mean {metric:>11}: {value}{ci} (n={h['n']}, excluded {h['excluded']})")
    print(f"  totals: {summary['totals']}")
    half = dialogue_half(rows)
    for split in splits:
        keep = [i for i, r in enumerate(rows) if split == "all" or half[r["dialogue_id"]] == split]
        dialogues = len({rows[i]["dialogue_id"] for i in keep})
        print(f"-- split {split}: {len(keep)} summaries of {dialogues} dialogues --")
        agreement_numbers([rows[i] for i in keep], [results[i] for i in keep])
    print(
        f"seconds per item: median {statistics.median(seconds):.2f}, "
        f"mean {statistics.mean(seconds):.2f}, max {max(seconds):.2f}"
    )


def compare(before: Path, after: Path) -> None:
    """The cross answers that differ between two ``--out`` files, and the leakage candidates
    (module docstring)."""

    def answers(path: Path) -> dict[tuple[str, str], dict]:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line]
        return {(r["id"], q["id"]): q for r in rows for q in r["questions"]}

    old, new = answers(before), answers(after)
    common = [k for k in old if k in new]
    changed = [k for k in common if old[k]["cross_answer"] != new[k]["cross_answer"]]
    own = [k for k in common if old[k]["own_answer"] != new[k]["own_answer"]]
    leaks = [
        k
        for k in changed
        if new[k]["side"] == "source"
        and old[k]["cross_answer"] == "IDK"
        and new[k]["cross_answer"] == "YES"
    ]
    asked = sum(1 for k in common if old[k]["cross_answer"] or new[k]["cross_answer"])
    print(f"{len(common)} questions in both; own answers changed: {len(own)}")
    print(f"cross answers changed: {len(changed)} of {asked} cross-examined")
    for side in ("source", "summary"):
        moves: dict[str, int] = {}
        for k in changed:
            if old[k]["side"] == side:
                move = f"{old[k]['cross_answer']}→{new[k]['cross_answer']}"
                moves[move] = moves.get(move, 0) + 1
        print(f"  {side} questions: {moves or 'none'}")
    print(f"leakage candidates (source question IDK → YES from the summary): {len(leaks)}")
    for k in leaks:
        print(f"  item {k[0]} {k[1]}: {old[k]['question']}")


def agreement_numbers(rows: list[dict], results: list[dict]) -> None:
    """Spearman ρ of the CEF scores with the human ones and the AUROC, dialogues resampled."""
    human = [r["human"] for r in rows]
    dialogues = [r["dialogue_id"] for r in rows]
    cov = [r["coverage"] for r in results]
    cons = [r["consistency"] for r in results]
    recall = [h["FactualRecall"] for h in human]
    show("Spearman coverage vs FactualRecall", spearman, cov, recall, dialogues)
    precision = [h["FactualPrecision"] for h in human]
    show("Spearman consistency vs FactualPrecision", spearman, cons, precision, dialogues)
    overall, f1 = [r["overall"] for r in results], [h["FactualF1"] for h in human]
    show("Spearman overall vs FactualF1", spearman, overall, f1, dialogues)
    hallucinating = [1.0 if h["HallucinationRate"] > 0 else 0.0 for h in human]
    positives = sum(1 for c, h in zip(cons, hallucinating, strict=True) if c is not None and h)
    name = f"AUROC consistency, HallucinationRate > 0 ({positives} positives)"
    show(name, auroc, cons, hallucinating, dialogues)


async def llm_calls(rows: list[dict], n: int, count: int = 10) -> None:
    bound = 4 + math.ceil((n + n) / 10)
    worst = 0
    for row in rows[:count]:
        model = CountingChatModel()
        judge = build_evaluator(
            "cef",
            BuildOptions(backend="llm", chat_model=model, options={"n_source": n, "n_summary": n}),
        )
        result = await judge.evaluate(item_of(row))
        worst = max(worst, model.calls)
        print(
            f"item {row['row']}: {result['n_source_questions']}+{result['n_summary_questions']} "
            f"questions asked, {model.calls} calls"
        )
    print(f"max calls per item {worst} (bound 4 + ⌈(N+N')/10⌉ = {bound}; reference code: 32)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--n", type=int, default=10, help="N = N' questions per side")
    parser.add_argument("--split", choices=["all", "even", "odd", "each"], default="all")
    parser.add_argument("--no-llm", action="store_true", help="skip the LLM call count")
    parser.add_argument(
        "--model-answers",
        action="store_true",
        help="answer the offline questions with the configured model (CLINJUDGE_MODEL)",
    )
    parser.add_argument("--layout", choices=["shared", "focused"], default="shared")
    parser.add_argument("--out", type=Path, help="write each item's result here (JSON lines)")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    rows = load(args.data, args.limit)
    splits = ["all", "even", "odd"] if args.split == "each" else [args.split]
    if args.split in ("even", "odd") and args.model_answers:  # only the half asked about
        half = dialogue_half(rows)
        rows = [r for r in rows if half[r["dialogue_id"]] == args.split]
        splits = ["all"]  # of those rows
    asyncio.run(
        offline(rows, args.n, splits, model=args.model_answers, layout=args.layout, out=args.out)
    )
    if not args.no_llm:
        asyncio.run(llm_calls(rows, args.n))


if __name__ == "__main__":
    main()
