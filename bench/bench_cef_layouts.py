"""CEF's prompt layouts compared on what a server must read (issue 38): the calls ``bench_cost``
records at its loopback server (the first ``--notes`` aci-demo notes, one request in flight, its
stub answering as CEF's prompts ask) for

    focused    each call shows only its own text (the prompts of before issue 38)
    shared     every call of an item opens with the instructions and both texts; the request,
               naming the text to use, comes last (the default; design (a))
    per-text   design (b), simulated from the shared calls: each call shows only the text it
               names, and an item's calls run in the order that keeps one text's calls
               together as far as the graph allows (generate A, self-check A, generate B,
               self-check B, cross-examine from B, cross-examine from A)

Per layout: calls and prompt tokens a note; the share of each call's prompt equal to the
prefix of the call before it (what llama.cpp reuses); the prompt tokens a server evaluates a
note when it keeps only the previous request's prefix ("1 slot": llama.cpp's server), and when
it keeps every earlier prefix ("all prefixes": vLLM's automatic prefix caching, hosted APIs --
each call reuses the longest prefix it shares with any earlier call). Tokens: Qwen2.5's
tokenizer when its GGUF file is there, else characters / 4.

    PYTHONPATH=. .venv/bin/python bench/bench_cef_layouts.py [--notes 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench_cost import GGUF, common_prefix

HERE = Path(__file__).resolve().parent

TEXT_A, TEXT_B, REQUEST = "Text A, the source:\n", "Text B, the generated text:\n", "\nRequest, "


def named(text: str) -> str:
    return re.findall(r"text ([AB]) alone", text)[-1]


def per_text(text: str) -> str:
    """The shared prompt ``text`` with the block of the text it does not name left out."""
    head, rest = text.split(TEXT_A, 1)
    block_a, rest = rest.split(TEXT_B, 1)
    block_b, tail = rest.split(REQUEST, 1)
    kept = TEXT_A + block_a if named(text) == "A" else TEXT_B + block_b
    return head + kept.rstrip("\n") + "\n" + REQUEST + tail


def per_text_order(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each note's calls in design (b)'s order (module docstring)."""

    def rank(call: dict[str, Any]) -> tuple[int, int]:
        text = call["text"]
        asked = re.findall(r'"id": "([ds])\d+", "question"', text)
        name = named(text)
        if not asked:
            return call["note"], 0 if name == "A" else 2
        own = (asked[0] == "d") == (name == "A")
        if own:
            return call["note"], 1 if name == "A" else 3
        return call["note"], 4 if name == "B" else 5

    return sorted(calls, key=rank)


def read_by_server(calls: list[dict[str, Any]], count) -> dict[str, float]:
    shared, one_slot, every = [], 0, 0
    seen: list[str] = []
    previous = ""
    for k, call in enumerate(calls):
        text, tokens = call["text"], count(call["text"])
        prefix = common_prefix(previous, text)
        best = max((common_prefix(s, text) for s in seen), default=0)
        if k:
            shared.append(prefix / len(text))
        one_slot += tokens - (count(text[:prefix]) if prefix else 0)
        every += tokens - (count(text[:best]) if best else 0)
        seen.append(text)
        previous = text
    return {
        "calls": len(calls),
        "prompt": sum(count(c["text"]) for c in calls),
        "shared": sum(shared) / max(1, len(shared)),
        "one_slot": one_slot,
        "every": every,
    }


def recorded(label: str, notes: int, gguf: Path) -> list[dict[str, Any]]:
    """The calls of ``bench_cost.py --one label`` (its own process, as bench_cost runs it)."""
    command = [sys.executable, str(HERE / "bench_cost.py"), "--one", label]
    command += ["--notes", str(notes), "--gguf", str(gguf)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["calls"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=3)
    parser.add_argument("--gguf", type=Path, default=GGUF)
    args = parser.parse_args()
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("PYTHONPATH", str(HERE.parent))
    from clinjudge.token_count import token_counter

    counter = token_counter(None, args.gguf if args.gguf.is_file() else None)
    shared, focused = (recorded(label, args.notes, args.gguf) for label in ("cef", "cef:focused"))
    designs = {
        "focused": focused,
        "shared (a)": shared,
        "per-text (b)": [{**c, "text": per_text(c["text"])} for c in per_text_order(shared)],
    }
    n = args.notes
    print(
        "| layout | calls/note | prompt tok/note | shared with previous call | "
        "evaluated tok/note, 1 slot | evaluated tok/note, all prefixes |"
    )
    print("|---|---|---|---|---|---|")
    for name, calls in designs.items():
        r = read_by_server(calls, counter.count)
        print(
            f"| {name} | {r['calls'] / n:.0f} | {r['prompt'] / n:,.0f} | {r['shared']:.0%} | "
            f"{r['one_slot'] / n:,.0f} | {r['every'] / n:,.0f} |"
        )
    print(f"\ntokens: {counter.method}; {n} aci-demo notes")


if __name__ == "__main__":
    main()
