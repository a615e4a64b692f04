"""``clinjudge compare --dry-run``: what a run would send, before it starts (issue 38, item 3).

Each judge that can say builds the prompts a run would send (``planned_prompts(item)``: the
same prompt templates and claim cutting the judge uses, no model call) and their tokens are
counted (:mod:`clinjudge.token_count`). Items a run directory already holds a finished row for
are left out, as the run would leave them (the rows file is read, never written). CEF's answer
calls carry the questions its model writes first: it is estimated at its bound, with stand-in
questions (:meth:`clinjudge.cef.llm_backend.LLMCef.planned`). Judges whose prompts depend on
the model's earlier replies in ways a bound cannot say (the fact-checker's searches follow its
decomposition) are listed as not estimated; offline judges make no call. Completion tokens
are not estimated: they depend on the replies.

``prefix_tokens``: of a judge's prompt tokens, those each prompt shares with the prompt before
it, in the order a run with one request in flight sends them (one visit's notes back to back,
:func:`clinjudge.datasets.items.visit_order`) -- what a server that keeps the
previous request's prefix (llama.cpp) reads once, and about what a hosted API bills as cached
(OpenAI caches prefixes of 1,024 tokens and more, which are most of a judge's shared prefixes).

A prompt planned twice word for word (CEF's questions about one transcript, for each system's
note) is counted once: a run's response cache answers the repeat, or shares the first call's
reply while it is in flight (:mod:`clinjudge.llm_flights`).

Money, when prices are given: ``prefix_tokens`` at the cached price (``--price-cached``, else
the input price), the other prompt tokens at the input price.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from clinjudge.datasets.items import Dataset, Item, visit_order
from clinjudge.evaluators.base import Evaluator
from clinjudge.files import read_jsonl
from clinjudge.llm_usage import Prices
from clinjudge.run_dir import RunDir
from clinjudge.token_count import TokenCounter

NOT_ESTIMATED = "not estimated: its prompts depend on the model's earlier replies"


def finished_items(rows_file: Path) -> set[str]:
    """Ids of the items a rows file holds a finished row for (read only)."""
    if not rows_file.is_file():
        return set()
    return {
        str(line.value["id"])
        for line in read_jsonl(rows_file, skip_bom=False)
        if line.ok and isinstance(line.value, dict) and "id" in line.value
        if not line.value.get("retry")
    }


def shared_prefix_tokens(previous: str, prompt: str, counter: TokenCounter) -> int:
    """Tokens of ``prompt``'s common prefix with ``previous``, counted alone: a server matches
    tokens, so it may reuse a token or two fewer where the prefix ends inside a word."""
    shared = len(os.path.commonprefix([previous, prompt]))
    return counter.count(prompt[:shared]) if shared else 0


def estimate_run(
    dataset: Dataset,
    judges: dict[str, Evaluator],
    counter: TokenCounter,
    *,
    out_dir: Path | None = None,
    prices: Prices | None = None,
    order: Callable[[Sequence[Item]], list[Item]] = visit_order,
) -> dict[str, Any]:
    """Per judge: ``items`` to judge, ``calls``, ``prompt_tokens`` and ``prefix_tokens``
    (module docstring; ``None`` when not estimated) and a ``note``; the ``total`` over the
    estimated judges (``usd`` when priced), and how tokens were counted. ``order``: the order
    the items are planned in (a run's, by default)."""
    found: dict[str, dict[str, Any]] = {}
    for name, judge in judges.items():
        done = finished_items(RunDir(out_dir).rows_path(name)) if out_dir else set()
        items = [item for item in order(dataset.items) if item.id not in done]
        entry: dict[str, Any] = {
            "items": len(items),
            "calls": 0,
            "prompt_tokens": 0,
            "prefix_tokens": 0,
        }
        planner = getattr(judge, "planned_prompts", None)
        if judge.usage() is None:
            entry["note"] = "offline: no model call"
        elif planner is None:
            entry |= {
                "calls": None,
                "prompt_tokens": None,
                "prefix_tokens": None,
                "note": NOT_ESTIMATED,
            }
        else:
            previous, seen, repeats = "", set(), 0
            for item in items:
                prompts, caveat = planner(item)
                for prompt in prompts:
                    if prompt in seen:  # answered by the response cache (or its flight)
                        repeats += 1
                        continue
                    seen.add(prompt)
                    entry["calls"] += 1
                    entry["prompt_tokens"] += counter.count(prompt)
                    entry["prefix_tokens"] += shared_prefix_tokens(previous, prompt, counter)
                    previous = prompt
                entry["note"] = caveat
            if repeats:
                said = "(the cache answers them: not counted)"
                entry["note"] += f"; {repeats} repeats of an earlier prompt {said}"
        if done:
            entry["note"] = f"{entry.get('note', '')}; {len(done)} items already judged".lstrip(
                "; "
            )
        found[name] = entry
    counted = [e for e in found.values() if e["calls"] is not None]
    total: dict[str, Any] = {
        key: sum(e[key] for e in counted) for key in ("calls", "prompt_tokens", "prefix_tokens")
    }
    if prices is not None:
        for entry in [*counted, total]:
            tokens = {
                "prompt_tokens": entry["prompt_tokens"],
                "cached_prompt_tokens": entry["prefix_tokens"],
            }
            entry["usd"] = round(prices.usd(tokens), 6)
    return {
        "judges": found,
        "total": total,
        "tokenizer": counter.method,
        "exact_tokenizer": counter.exact,
        "prices": None if prices is None else prices.as_dict(),
        "completion_tokens": "not estimated (they depend on the replies)",
    }
