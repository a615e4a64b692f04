"""Benchmark of the SOAP judges on the 87 ACI-Bench train+valid encounters (issue 2 targets).

Offline, both judges over the same claims of the human-written reference notes:
hallucination rate with 95% Wilson intervals, tier distribution, seconds per note (median after
warm-up), peak memory. Then the LLM path with a counting chat model (a scripted LangChain model,
defined here in the benchmark, never in product code): model calls per note against the bound
1 + ceil(claims / 8).

    .venv/bin/python bench/bench_soap.py [--data DIR_WITH_TRAIN_AND_VALID_CSV] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import resource
import tempfile
import time
from pathlib import Path

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from clinjudge.api import ajudge_note, make_setup
from clinjudge.compare import run_compare
from clinjudge.datasets import Dataset, load_aci_bench
from clinjudge.evaluators.soap import SoapEvaluator

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "aci-bench" / "challenge_data"
)


class CountingChatModel(BaseChatModel):
    """Answers every judge batch with 'tier 1' for each claim id it sees; counts calls."""

    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "counting"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls += 1
        text = "\n".join(str(m.content) for m in messages)
        if "read_first" in text:  # a judge batch: its claims carry the turns to read first
            ids = dict.fromkeys(re.findall(r'"id":\s*"(c\d+)"', text))
            body = {
                "verdicts": [
                    {
                        "claim_id": i,
                        "tier": 1,
                        "subtype": "restatement",
                        "rationale": "",
                        "evidence": [],
                    }
                    for i in ids
                ]
            }
        else:
            note = text.split("NOTE", 1)[-1]
            sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", note) if len(s.strip()) > 20]
            body = {"claims": [{"text": s, "section": "subjective", "quote": s} for s in sentences]}
        message = AIMessage(json.dumps(body), response_metadata={"model_name": "counting"})
        return ChatResult(generations=[ChatGeneration(message=message)])


def load(data_dir: Path, limit: int | None) -> Dataset:
    train = load_aci_bench(data_dir / "train.csv")
    valid = load_aci_bench(data_dir / "valid.csv")
    items = (train.items + valid.items)[:limit] if limit else train.items + valid.items
    return Dataset(name="aci-bench train+valid", path=data_dir, items=items, sha256=train.sha256)


async def offline(dataset: Dataset) -> dict:
    judges = {n: SoapEvaluator(n, make_setup(n, "offline")) for n in ("lexical", "inference-aware")}
    warm = dataset.items[0]
    await ajudge_note(warm.transcript, warm.note, setup=judges["inference-aware"].setup)  # warm-up
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        result = await run_compare(dataset, judges, Path(out), concurrency=1)
        wall = time.perf_counter() - started
    report = result.report
    print(f"\n== offline, {report['n_items']} notes, {wall:.1f} s wall ==")
    for name, j in report["judges"].items():
        lo, hi = j["ci95"]
        tiers = " ".join(f"t{t}={n}" for t, n in j["tiers"].items())
        print(
            f"{name:>16}: rate {j['hallucination_rate']:.1%} (95% CI {lo:.1%}–{hi:.1%}), "
            f"{j['n_hallucinated']}/{j['n_claims']} claims, {tiers}, "
            f"median {j['seconds_per_note_median']:.2f} s/note, excluded {j['excluded_claims']}"
        )
        print(
            f"{'':>16}  sections: "
            + ", ".join(f"{s} {v['rate']:.0%} of {v['n_claims']}" for s, v in j["sections"].items())
        )
        print(f"{'':>16}  subtypes: {j['subtypes']}")
    lex = report["judges"]["lexical"]["hallucination_rate"]
    ia = report["judges"]["inference-aware"]["hallucination_rate"]
    print(f"ratio inference-aware / lexical = {ia / lex:.2f} (target ≤ 0.5)")
    for p in report["paired"]:
        print(
            f"paired {p['a']} − {p['b']}: {p['mean_rate_difference']:+.1%} "
            f"(95% CI {p['ci95'][0]:+.1%} to {p['ci95'][1]:+.1%}), flips {len(report['flips'])}"
        )
    return report


async def llm_calls(dataset: Dataset, n: int = 10) -> None:
    worst = 0.0
    for item in dataset.items[:n]:
        model = CountingChatModel()
        setup = make_setup("inference-aware", "llm", chat_model=model, claims="llm")
        result = await ajudge_note(item.transcript, item.note, setup=setup)
        claims = len(result.report.claims)
        bound = 1 + math.ceil(claims / 8)
        worst = max(worst, model.calls / bound)
        print(f"{item.id}: {claims} claims, {model.calls} calls (bound {bound})")
    print(f"max calls / bound = {worst:.2f} (target ≤ 1)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    dataset = load(args.data, args.limit)
    asyncio.run(offline(dataset))
    asyncio.run(llm_calls(dataset))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB (target < 3000)")


if __name__ == "__main__":
    main()
