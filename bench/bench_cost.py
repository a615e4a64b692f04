"""What a note costs on the LLM path (issue 38): the prompts each judge sends, counted at a
loopback OpenAI-compatible server (the test suite's ``openai_stub``: real HTTP, the real
``ChatOpenAI``, no model), for the first notes of the bundled ``aci-demo`` set, judged one after
the other with one request in flight (as ``--backend local`` runs).

Per judge it prints: calls; prompt tokens a note; the share of each call's prompt equal to the
prefix of the call before it (characters and tokens: what a server can reuse -- llama.cpp keeps
the previous request's prefix, hosted APIs bill a repeated prefix at the cached rate); new
prompt tokens a claim (the tokens not in the previous call's prefix, over the note's claims;
"after 1st": the same without each note's first call, which reads the transcript and note);
completion tokens a note; and what a note would cost at two public price points, the shared
prefix billed at the cached rate when it is at least 1,024 tokens (OpenAI's prompt caching,
in steps of 128 tokens):

    gpt-4o-mini  $0.15 / M input, $0.075 / M cached input, $0.60 / M output
    gpt-4o       $2.50 / M input, $1.25 / M cached input, $10.00 / M output

Tokens are counted with Qwen2.5's tokenizer when its GGUF file is there (``--gguf``), else as
characters / 4. The prompt is the text of the messages (a chat template adds a few tokens;
a ``json_schema`` response format is sent beside it and not counted). The stub answers what
each schema asks, shaped as its prompt asks a model to answer: every claim's label or tier;
a quarter of the claims flagged; the fields a prompt asks for every claim (rationale, quotes,
a quote) for every claim, those it asks only of a flag (reason, turns, severity) only for
flags; other judges' schemas filled with every field. Completion tokens are therefore the
replies' shapes, not a model's words (the local-model bench is ``--local``).

    # before (a checkout of the branch point) and after (this checkout), one table:
    git worktree add /tmp/before <sha>
    .venv/bin/python bench/bench_cost.py --before /tmp/before [--notes 3]
        [--judges inference-aware,inference-aware:claim,...] [--llama-cpp]

``--encounter D2N168``: the judges read the notes of ``--systems`` (default reference, gpt4,
bart) for that one ACI-Bench encounter (``../shared/data/aci-bench/claim-labels/notes.jsonl``;
a sealed encounter is refused) instead of the first aci-demo notes, one system after the
other: what several systems' notes of one visit share (the omission judge's facts, the
transcript). ``arena``: the pairwise judge over every pair of those systems, both orders, the
pairs one after the other (as ``arena --backend local`` runs them); its "note" is a pair. The
stub answers the omission judge's facts and coverage, the arena's comparison and the
fact-checker's decomposition and queries as those prompts ask (27 facts, the median of the open
omission labels, and a status for each; every criterion; the answer's sentences with their
quotes; queries from the claim's own words), so the calls counted are the calls a note costs.

``--llama-cpp``: the stub refuses ``json_schema`` as llama-cpp-python's server does, so the
schema goes as a ``json_object`` response format and at the end of the prompt.

``--local``: the real local model instead (Qwen2.5-Coder-1.5B, ``--backend local``), the first
aci-demo note, the inference-aware judge in ``--protocols`` (default ``claim``), before and
after, each run in its own process with an empty cache: wall seconds of the judge, seconds a
claim, calls, parse failures, the prompt tokens the server evaluated and those it reused
(its log's "prefix-match hit"), its measured prompt and generation rates, and the claims whose
tier changed between before and after::

    .venv/bin/python bench/bench_cost.py --local --before /tmp/before [--protocols claim]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

GGUF = Path.home() / ".cache" / "clinjudge-ci" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
#: judge label → (judge name, options)
JUDGES: dict[str, tuple[str, dict[str, Any]]] = {
    "inference-aware:batch": ("inference-aware", {}),
    "inference-aware:claim": ("inference-aware", {"protocol": "claim"}),
    "inference-aware:claim-shared": ("inference-aware", {"protocol": "claim-shared"}),
    "lexical:batch": ("lexical", {}),
    "lexical:claim": ("lexical", {"protocol": "claim"}),
    "lexical:claim-shared": ("lexical", {"protocol": "claim-shared"}),
    "cef": ("cef", {}),
    "cef:focused": ("cef", {"layout": "focused"}),
    "cef:shared": ("cef", {"layout": "shared"}),
    "factcheck": ("factcheck", {}),
    "factcheck:pooled": ("factcheck", {"evidence": "pooled"}),
    "omission": ("omission", {}),
    "omission:note_first": ("omission", {"layout": "note_first"}),
    "arena": ("pairwise", {}),
}
NOTES = HERE.parents[1] / "shared" / "data" / "aci-bench" / "claim-labels" / "notes.jsonl"
#: Never opened, printed or read (the sealed part of ACI-Bench test3; claim_labels/sealed.json).
SEALED = frozenset(
    {"D2N172", "D2N175", "D2N177", "D2N189", "D2N190", "D2N195", "D2N197", "D2N204", "D2N207"}
)
#: (name, $/M input, $/M cached input, $/M output)
PRICES = (("gpt-4o-mini", 0.15, 0.075, 0.60), ("gpt-4o", 2.50, 1.25, 10.00))
CACHE_MIN, CACHE_STEP = 1024, 128
#: The systems whose notes of one encounter ``--encounter`` reads (and the arena pairs).
SYSTEMS = ("reference", "gpt4", "bart")
#: The encounter the arena reads when ``--encounter`` is not given.
ARENA_ENCOUNTER = "D2N168"
#: Fields a prompt asks of a flagged claim only; fields the old prompts asked of every claim.
FLAG_ONLY = {"reason", "turns", "severity", "harm_category"}
WORDS = "the patient reports mild pain in the right knee since last week after a fall".split()  # noqa: SIM905, E501


def flagged(key: str) -> bool:
    """A quarter of the claims, the same ones whatever the protocol (by the claim's text)."""
    return zlib.crc32(key.encode()) % 4 == 0


def text_of(n_words: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(n_words))


class Filler:
    """A reply to a request: a JSON instance of its schema (module docstring)."""

    def __init__(self, schema: dict[str, Any], prompt: str) -> None:
        self.root = schema
        self.prompt = prompt
        self.claims = claim_texts(prompt)

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = self.root["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        for key in ("anyOf", "oneOf"):
            if key in node:
                options = [o for o in node[key] if o.get("type") != "null"]
                return self.resolve(options[0])
        return node

    def value(self, node: dict[str, Any], name: str = "", flag: bool = False, i: int = 0) -> Any:
        node = self.resolve(node)
        kind = node.get("type")
        if "enum" in node:
            values = node["enum"]
            if name == "tier":
                return max(values) - 1 if flag else min(values)
            if name == "label":
                return "unsupported" if flag else "stated"
            return values[i % len(values)]
        if kind == "object":
            return self.obj(node, i)
        if kind == "array":
            low, high = node.get("minItems", 0), node.get("maxItems", 3)
            n = max(low, min(high, 1 if name in ("turns", "evidence") else 3))
            return [self.value(node.get("items", {}), name, flag, k) for k in range(n)]
        if kind == "integer":
            return 1 + i
        if kind == "number":
            return 0.5
        if kind == "boolean":
            return True
        return text_of(20 if name == "rationale" else 8)

    def obj(self, node: dict[str, Any], i: int = 0) -> dict[str, Any]:
        properties = node.get("properties", {})
        out: dict[str, Any] = {}
        key = ""
        if "claim_id" in properties:
            key = self.claims.get(str(self.value(properties["claim_id"], i=i)), "")
            out["claim_id"] = self.value(properties["claim_id"], i=i)
        elif "label" in properties:
            key = self.prompt.rsplit("<sentence>", 1)[-1].split("</sentence>", 1)[0]
        flag = flagged(key) if key else False
        for name, sub in properties.items():
            if name in out or (name in FLAG_ONLY and not flag):
                continue
            out[name] = self.value(sub, name, flag, i)
        return out


def cef_reply(properties: dict[str, Any], prompt: str) -> dict[str, Any] | None:
    """CEF's replies as a model asked by its prompts gives them (else CEF stops after its two
    generations): the ``n`` questions asked for, each labelled YES with a quote copied from the
    text; an answer for every question id asked, cycling YES, NO, IDK (so a third of each
    side's questions pass its self-check and are cross-examined). ``None``: not a CEF reply."""
    import re

    if set(properties) == {"questions"} and (wanted := re.search(r"Write (\d+) questions", prompt)):
        words = prompt.split("<<<", 1)[-1].split(">>>", 1)[0].split()
        quotes = [" ".join(words[8 * k : 8 * k + 8]) for k in range(int(wanted.group(1)))]
        items = [{"question": text_of(12), "answer": "YES", "quote": q} for q in quotes]
        return {"questions": items}
    if set(properties) == {"answers"}:
        asked = prompt.rsplit("<<<", 1)[-1]
        ids = dict.fromkeys(re.findall(r'"id":\s*"([ds]\d+)",\s*"question"', asked))
        cycle = ("YES", "NO", "IDK")
        return {"answers": [{"id": q, "answer": cycle[k % 3]} for k, q in enumerate(ids)]}
    return None


def claim_texts(prompt: str) -> dict[str, str]:
    """Claim id → text of the claims in a batch prompt."""
    found: dict[str, str] = {}
    tail = prompt.rsplit("<claims>", 1)[-1]
    for line in tail.splitlines():
        line = line.strip().rstrip(",")
        if line.startswith("{") and '"id"' in line:
            try:
                claim = json.loads(line)
            except ValueError:
                continue
            if isinstance(claim, dict) and "id" in claim:  # not a reply's example line
                found[claim["id"]] = claim.get("text", "")
    if not found:  # the old layout: an indented JSON list
        try:
            for claim in json.loads(tail.split("</claims>", 1)[0]):
                found[claim["id"]] = claim.get("text", "")
        except (ValueError, TypeError, KeyError):
            pass
    return found


def shaped_reply(schema: dict[str, Any], prompt: str, name: str = "") -> dict[str, Any] | None:
    """The reply a model asked by the CEF, omission, arena or decomposition prompts gives
    (module docstring) for the schema titled (or named in the request) ``name``; ``None`` for
    others."""
    import re

    if (cef := cef_reply(schema.get("properties", {}), prompt)) is not None:
        return cef
    title = schema.get("title") or name
    if title == "CoverageReply":  # a status for every fact id the prompt lists
        ids = re.findall(r"^(f\d+): ", prompt, flags=re.M)
        statuses = ("covered", "omitted", "contradicted", "covered")
        return {
            "facts": [
                {"id": i, "status": statuses[k % 4], "quote": "" if k % 4 == 1 else text_of(6)}
                for k, i in enumerate(dict.fromkeys(ids))
            ]
        }
    if title == "FactsReply":  # 27 facts: the median of the open omission labels (19-41)
        kinds = ("symptom", "medication", "history", "exam finding", "diagnosis", "plan")
        return {
            "facts": [
                {
                    "fact": text_of(8),
                    "category": kinds[k % len(kinds)],
                    "importance": "critical" if k % 5 == 0 else "routine",
                    "quote": text_of(6),
                }
                for k in range(27)
            ]
        }
    if title == "PairReply":  # a winner and a reason for every criterion the prompt lists
        names = re.findall(r'"criterion": "([a-z]+)"', prompt)
        winner = {"criterion": "", "winner": "1", "reason": text_of(16)}
        return {
            "criteria": [{**winner, "criterion": c} for c in dict.fromkeys(names)],
            "overall": {"winner": "1", "reason": text_of(16)},
        }
    if title == "Decomposition":  # the answer's sentences, each quoted
        answer = prompt.rsplit("## Answer", 1)[-1].split("<<<", 1)[-1].split(">>>", 1)[0]
        sentences = [x.strip() for x in re.split(r"(?<=[.!?])\s+|\n+", answer) if x.strip()]
        label = {True: "relevant", False: "meta"}  # a heading ("CC:") is no claim
        claims = [{"text": x, "quote": x, "label": label[len(x.split()) > 2]} for x in sentences]
        return {"claims": claims}
    if title == "SearchQueries":  # the claim's words: its own evidence
        claim = prompt.rsplit("## Claim", 1)[-1].split("<<<", 1)[-1].split(">>>", 1)[0].split()
        return {"queries": [" ".join(claim[:8]), " ".join(claim[-6:])]}
    return None


def prompt_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body["messages"])


def common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


# ------------------------------------------------------------------ one checkout, one judge


def encounter_items(encounter: str, systems: list[str]) -> list[Any]:
    """The notes of ``systems`` for one open ACI-Bench encounter (module docstring), as items
    ``<encounter>/<system>`` in the order of ``systems``.

    Raises:
        SystemExit: a sealed encounter, or a system without a note for it.
    """
    from clinjudge.datasets.items import Item

    sealed = SEALED | set(json.loads((HERE / "claim_labels" / "sealed.json").read_text())["sealed"])
    if encounter in sealed:
        raise SystemExit(f"{encounter} is sealed: pick an open encounter (e.g. D2N168)")
    found: dict[str, Item] = {}
    for line in NOTES.read_text(encoding="utf-8").splitlines():
        if f'"encounter": "{encounter}"' not in line:
            continue  # another encounter's row is never parsed
        row = json.loads(line)
        if row["encounter"] == encounter and row["system"] in systems:
            meta = {"encounter": encounter, "system": row["system"]}
            found[row["system"]] = Item(
                id=row["id"], transcript=row["dialogue"], note=row["note"], meta=meta
            )
    if missing := [s for s in systems if s not in found]:
        raise SystemExit(f"{encounter} has no note of {', '.join(missing)}")
    return [found[s] for s in systems]


def measure(
    label: str,
    notes: int,
    llama_cpp: bool,
    gguf: Path | None,
    encounter: str | None = None,
    systems: tuple[str, ...] = SYSTEMS,
) -> dict[str, Any]:
    """Run one judge over the first ``notes`` aci-demo notes (or the ``systems``' notes of one
    ``encounter``; the arena: their pairs) against the stub, one after the other; the calls."""
    import tempfile

    from openai_stub import OpenAIStub, Reply, llama_cpp_server

    from clinjudge.arena.pairing import arena_pairs
    from clinjudge.datasets import load_items
    from clinjudge.evaluators import BuildOptions, build_evaluator
    from clinjudge.evaluators.pairwise import build_pairwise
    from clinjudge.llm import LLMSettings, ResponseCache
    from clinjudge.token_count import token_counter

    counter = token_counter(None, gguf if gguf and gguf.is_file() else None)
    calls: list[dict[str, Any]] = []
    note_of_call: list[int] = []
    current = [0]

    def answer(body: dict[str, Any]) -> Reply:
        text = prompt_text(body)
        form = body.get("response_format") or {}
        schema = (form.get("json_schema") or {}).get("schema") or form.get("schema") or {}
        shaped = shaped_reply(schema, text, (form.get("json_schema") or {}).get("name", ""))
        filler = Filler(schema, text)
        reply = json.dumps(shaped if shaped is not None else filler.obj(filler.resolve(schema)))
        calls.append({"text": text, "reply": reply})
        note_of_call.append(current[0])
        return Reply(reply, counter.count(text), counter.count(reply))

    name, options = JUDGES[label]
    if encounter:
        items = encounter_items(encounter, list(systems))
    else:
        items = load_items("aci-demo").items[:notes]
    claims = 0
    with OpenAIStub() as stub, tempfile.TemporaryDirectory() as tmp:
        stub.script(llama_cpp_server(answer) if llama_cpp else answer)
        settings = LLMSettings(
            model="bench-cost", base_url=stub.base_url, max_retries=0, max_concurrent_calls=1
        )
        build = BuildOptions(
            backend="llm",
            settings=settings,
            cache=ResponseCache(Path(tmp) / "cache.sqlite"),
            options=options,
        )
        if name == "pairwise":  # the arena: every pair of the systems, both orders
            judge = build_pairwise(build)
            judge.use_texts({item.id: item.note for item in items})
            items = arena_pairs(items, list(systems))
        else:
            judge = build_evaluator(name, build)
        for n, item in enumerate(items):
            current[0] = n
            row = asyncio.run(judge.evaluate(item))
            claims += len(row.get("claims") or [])
    return {
        "label": label,
        "notes": len(items),
        "claims": claims,
        "tokens": counter.method,
        "calls": [
            {**c, "note": note_of_call[i], "tok": counter.count(c["text"])}
            for i, c in enumerate(calls)
        ],
    }


# ------------------------------------------------------------------ the table


def summarize(run: dict[str, Any], count) -> dict[str, Any]:
    calls = run["calls"]
    notes = max(1, run["notes"])
    shared_c, shared_t, new, new_later, completion, cost = [], [], 0, 0, 0, [0.0, 0.0]
    previous = ""
    for k, call in enumerate(calls):
        text = call["text"]
        prefix = common_prefix(previous, text)
        prefix_tok = count(text[:prefix]) if prefix else 0
        if k:
            shared_c.append(prefix / max(1, len(text)))
            shared_t.append(prefix_tok / max(1, call["tok"]))
        fresh = call["tok"] - prefix_tok
        new += fresh
        if k and calls[k - 1]["note"] == call["note"]:
            new_later += fresh
        reply_tok = count(call["reply"])
        completion += reply_tok
        cached = prefix_tok // CACHE_STEP * CACHE_STEP if prefix_tok >= CACHE_MIN else 0
        for p, (_, price_in, price_cached, price_out) in enumerate(PRICES):
            cost[p] += (
                (call["tok"] - cached) * price_in + cached * price_cached + reply_tok * price_out
            ) / 1e6
        previous = text
    firsts = {c["note"] for c in calls}
    claims = run["claims"]
    later_claims = claims - len(firsts) if claims else 0
    return {
        "judge": run["label"],
        "calls": len(calls),
        "prompt/note": sum(c["tok"] for c in calls) / notes,
        "shared chars": sum(shared_c) / len(shared_c) if shared_c else 0.0,
        "shared tok": sum(shared_t) / len(shared_t) if shared_t else 0.0,
        "new/note": new / notes,
        "new/claim": new / claims if claims else None,
        "new/claim after 1st": new_later / later_claims if later_claims > 0 else None,
        "completion/note": completion / notes,
        "cost/note": [c / notes for c in cost],
    }


def row_text(side: str, s: dict[str, Any]) -> str:
    def num(v, fmt="{:,.0f}"):
        return "–" if v is None else fmt.format(v)

    money = " | ".join(f"${c:.4f}" for c in s["cost/note"])
    return (
        f"| {s['judge']} | {side} | {s['calls']} | {num(s['prompt/note'])} | "
        f"{s['shared chars']:.0%} | {s['shared tok']:.0%} | {num(s['new/note'])} | "
        f"{num(s['new/claim'])} | "
        f"{num(s['new/claim after 1st'])} | {num(s['completion/note'])} | {money} |"
    )


# ------------------------------------------------------------------ the local model

LOCAL_CLI = "from clinjudge.cli import app; app()"


def server_log(cache: Path) -> dict[str, float]:
    """What the llama-cpp-python server's log says it did: prompt tokens evaluated and their
    milliseconds, tokens reused by prefix, tokens generated and their milliseconds."""
    import re

    got = dict.fromkeys(("evaluated", "eval_ms", "reused", "generated", "gen_ms"), 0.0)
    for log in (cache / "local-server").glob("*.log"):
        for line in log.read_text(errors="replace").splitlines():
            if m := re.search(r"(\d+) prefix-match hit", line):
                got["reused"] += int(m.group(1))
            elif m := re.search(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens", line):
                got["eval_ms"] += float(m.group(1))
                got["evaluated"] += int(m.group(2))
            elif m := re.search(r"\beval time =\s*([\d.]+) ms /\s*(\d+) runs", line):
                got["gen_ms"] += float(m.group(1))
                got["generated"] += int(m.group(2))
    return got


def local_run(code: Path, protocol: str, gguf: Path, work: Path) -> dict[str, Any]:
    """One CLI run of the inference-aware judge on the first aci-demo note, local model."""
    out, cache = work / "out", work / "cache"
    command = [sys.executable, "-c", LOCAL_CLI, "compare", "aci-demo", "--limit", "1"]
    command += ["--judges", "inference-aware", "--option", f"inference-aware.protocol={protocol}"]
    command += ["--backend", "local", "--gguf", str(gguf), "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(code), "CLINJUDGE_CACHE_DIR": str(cache)}
    subprocess.run(command, env=env, check=True, capture_output=True)
    report = json.loads((out / "report.json").read_text())
    judge = report["judges"]["inference-aware"]
    usage = report["usage"]["inference-aware"] if "usage" in report else {}
    tiers = {}
    for line in (out / "verdicts.jsonl").read_text().splitlines():
        row = json.loads(line)
        tiers[row["claim_id"]] = row.get("tier")
    return {
        "seconds": judge["seconds"],
        "claims": judge["n_claims"] + judge["excluded_claims"],
        "parse_failures": judge["parse_failures"],
        "calls": usage.get("calls"),
        "tiers": tiers,
        **server_log(cache),
    }


def local_bench(before: Path | None, protocols: list[str], gguf: Path) -> None:
    import tempfile

    sides = ([("before", before)] if before else []) + [("after", HERE.parent)]
    print(
        "| protocol | code | judge s | s/claim | calls | parse failures | prompt tok evaluated "
        "| reused by prefix | prompt tok/s | generated | gen tok/s | tiers changed |"
    )
    print("|---" * 12 + "|")
    for protocol in protocols:
        first: dict[str, Any] | None = None
        for side, code in sides:
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    run = local_run(code, protocol, gguf, Path(tmp))
                except subprocess.CalledProcessError as exc:  # a protocol the code lacks
                    reason = (exc.stderr or b"").decode(errors="replace").strip()
                    print(f"| {protocol} | {side} | not run: {reason.splitlines()[-1:]} |")
                    continue
            changed = "–"
            if first is not None:
                diff = [c for c, t in run["tiers"].items() if first["tiers"].get(c) != t]
                changed = f"{len(diff)} of {len(run['tiers'])}"
            first = first or run
            print(
                f"| {protocol} | {side} | {run['seconds']:.0f} | "
                f"{run['seconds'] / max(1, run['claims']):.1f} | {run['calls']} | "
                f"{run['parse_failures']} | {run['evaluated']:,.0f} | {run['reused']:,.0f} | "
                f"{1000 * run['evaluated'] / max(1.0, run['eval_ms']):.1f} | "
                f"{run['generated']:,.0f} | "
                f"{1000 * run['generated'] / max(1.0, run['gen_ms']):.1f} | {changed} |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout of the code before")
    parser.add_argument("--notes", type=int, default=3)
    parser.add_argument("--judges", default=",".join(JUDGES))
    parser.add_argument("--gguf", type=Path, default=GGUF, help="tokenizer (Qwen2.5)")
    parser.add_argument("--llama-cpp", action="store_true")
    parser.add_argument("--local", action="store_true", help="the real local model")
    parser.add_argument("--protocols", default="claim", help="with --local")
    parser.add_argument("--encounter", default=None, help="one open encounter, e.g. D2N168")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="with --encounter, arena")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    systems = tuple(x.strip() for x in args.systems.split(",") if x.strip())
    if args.local:
        local_bench(args.before, args.protocols.split(","), args.gguf)
        return
    if args.one:
        encounter = args.encounter or (ARENA_ENCOUNTER if args.one == "arena" else None)
        run = measure(args.one, args.notes, args.llama_cpp, args.gguf, encounter, systems)
        print(json.dumps(run))
        return
    from clinjudge.token_count import token_counter

    count = token_counter(None, args.gguf if args.gguf.is_file() else None).count
    sides = [("before", args.before), ("after", HERE.parent)] if args.before else []
    sides = sides or [("now", HERE.parent)]
    print(
        "| judge | code | calls | prompt tok/note | shared (chars) | shared (tokens) | "
        "new tok/note | new tok/claim | after 1st | completion tok/note | "
        + " | ".join(f"{p[0]} $/note" for p in PRICES)
        + " |"
    )
    print("|---" * (11 + len(PRICES)) + "|")
    method = ""
    for label in args.judges.split(","):
        for side, code in sides:
            command = [sys.executable, __file__, "--one", label, "--notes", str(args.notes)]
            command += ["--gguf", str(args.gguf)] + (["--llama-cpp"] if args.llama_cpp else [])
            command += ["--systems", ",".join(systems)]
            command += ["--encounter", args.encounter] if args.encounter else []
            env = {**os.environ, "PYTHONPATH": str(code)}
            done = subprocess.run(command, capture_output=True, text=True, env=env)
            if done.returncode != 0:
                reason = (done.stderr.strip().splitlines() or ["?"])[-1][:120]
                print(f"| {label} | {side} | not measured: {reason} |")
                continue
            run = json.loads(done.stdout.strip().splitlines()[-1])
            method = run["tokens"]
            print(row_text(side, summarize(run, count)), flush=True)
    read = f"{args.notes} aci-demo notes"
    if args.encounter:
        read = f"the {', '.join(systems)} notes of {args.encounter}"
    print(
        f"\ntokens: {method}; {read} (arena: the pairs of "
        f"{args.encounter or ARENA_ENCOUNTER}'s {', '.join(systems)} notes); prices: "
        + "; ".join(f"{n} ${i}/M in, ${c}/M cached, ${o}/M out" for n, i, c, o in PRICES)
    )


if __name__ == "__main__":
    main()
