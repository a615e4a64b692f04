"""What judging one visit's notes back to back saves (issue 38): the prompts a compare run
over several systems would send, planned as ``compare --dry-run`` plans them (no model, no
server), in the file's order -- one system's notes after another's, as ``--systems`` columns
load -- and in visit order (:func:`clinjudge.datasets.items.visit_order`, the order a run
judges in). Per judge: prompt tokens, the share of each call's prompt equal to the prefix of
the call before it, and the rest, what a server keeping only its previous prefix (llama.cpp)
reads. Tokens: Qwen2.5's tokenizer when its GGUF file is there, else characters / 4.

The notes: ``--systems`` of ``--encounters`` (open ACI-Bench test3 encounters of the claim
labels; a sealed one is refused), from ``../shared``.

    PYTHONPATH=. .venv/bin/python bench/bench_visit_order.py \
        [--encounters D2N168,D2N170,D2N174] [--systems reference,gpt4,chatgpt,bart]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from bench_cost import GGUF, encounter_items

#: judge label → (judge, options)
JUDGES = {
    "inference-aware batch": ("inference-aware", {}),
    "inference-aware claim": ("inference-aware", {"protocol": "claim"}),
    "lexical batch": ("lexical", {}),
    "cef focused": ("cef", {}),
    "cef shared": ("cef", {"layout": "shared"}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encounters", default="D2N168,D2N170,D2N174")
    parser.add_argument("--systems", default="reference,gpt4,chatgpt,bart")
    args = parser.parse_args()
    os.environ.setdefault("CLINJUDGE_MODEL", "qwen2.5-coder-1.5b-instruct")
    os.environ.setdefault("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never contacted
    from clinjudge.datasets.items import Dataset, visit_order
    from clinjudge.estimate import estimate_run
    from clinjudge.evaluators import BuildOptions, build_evaluator
    from clinjudge.llm_dialects import ENDPOINTS
    from clinjudge.token_count import token_counter

    systems = args.systems.split(",")
    by_visit = [encounter_items(e, systems) for e in args.encounters.split(",")]
    file_order = [visit[k] for k in range(len(systems)) for visit in by_visit]  # system-major
    data = Dataset(name="visits", path=Path("visits"), sha256="-", items=file_order)
    gguf = GGUF if GGUF.is_file() else None
    counter = token_counter(os.environ["CLINJUDGE_MODEL"], gguf)
    print(f"{len(by_visit)} visits × {len(systems)} systems; tokens: {counter.method}")
    print("| judge | prompt tokens | shared, file order → visit order | read, file → visit |")
    print("|---|---|---|---|")
    for label, (name, options) in JUDGES.items():
        judge = build_evaluator(name, BuildOptions(backend="llm", options=options))
        caller = getattr(getattr(judge, "setup", judge), "caller", None)
        if gguf and caller is not None:  # llama-cpp-python reads the schema in the prompt
            ENDPOINTS.refused(caller.endpoint, "json_schema")
        found = {
            name: estimate_run(data, {label: judge}, counter, order=order)
            for name, order in (("file", list), ("visit", visit_order))
        }
        f, v = (found[o]["judges"][label] for o in ("file", "visit"))
        read_f, read_v = (e["prompt_tokens"] - e["prefix_tokens"] for e in (f, v))
        print(
            f"| {label} | {f['prompt_tokens']:,} | {f['prefix_tokens'] / f['prompt_tokens']:.0%}"
            f" → {v['prefix_tokens'] / v['prompt_tokens']:.0%} | {read_f:,} → {read_v:,} "
            f"({read_v / read_f - 1:+.0%}) |"
        )


if __name__ == "__main__":
    main()
