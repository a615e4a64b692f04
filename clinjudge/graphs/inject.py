"""The LLM error-injection graph (SPEC §5), one (text, type) attempt per run:

    applicability ──(both say yes)──> inject ──(an edit)──> check_shape
    check_shape ──(in shape)──> validate ──(valid)──> accept ──> END
    applicability ──(no, disagree or failure)──> discard ──> END
    inject ──(unparseable: once more)──> inject ──(2nd failure or call error)──> discard
    check_shape ──(out of shape: once more)──> inject
    check_shape ──(2nd failure)──> discard
    validate ──(invalid: once more)──> inject
    validate ──(2nd failure or call error)──> discard

``applicability`` asks two independent models at once; both must answer "applicable", else the
run stops with nothing injected (``not_applicable`` / ``disagreed``, recorded). ``inject``
asks for one edit as JSON; ``check_shape`` measures it against the type's limits and checks the
claimed spans; ``validate`` asks the second model whether the type matches, the error is
clinically significant, the text fluent and the error single. Any failure of the three steps
(unparseable JSON included) regenerates once with the reason fed back; a second failure
discards the attempt with its reason. A failed model call (transport) ends the run with status
``error`` (retried by the next resumed run). Models, prompts and the taxonomy arrive through
the run context (:class:`InjectContext`); the state holds only serialisable values.
"""

from __future__ import annotations

import asyncio
import operator
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

from clinjudge.datasets.items import Dataset
from clinjudge.inject.model_roles import InjectModels
from clinjudge.inject.outputs import InjectFiles, check_resumable, finish_run, read_outcomes
from clinjudge.inject.pipeline import InjectionOutcome, pair_id_of
from clinjudge.inject.replies import (
    Applicability,
    Injection,
    failed_checks,
    llm_pair,
    restore_outer_whitespace,
    type_variables,
    validation_schema,
)
from clinjudge.inject.shape import ShapeCheck, check_shape
from clinjudge.inject.taxonomy import InjectionType, load_taxonomy
from clinjudge.runner import read_completed, run_graph
from clinjudge.types import CallError, ParseFailure

#: Injection attempts per (text, type): the first and one regeneration (SPEC §5).
MAX_ATTEMPTS = 2


class InjectState(TypedDict, total=False):
    pair_id: str
    source_id: str
    type: str
    source: str
    original: str
    meta: dict
    applicability: dict
    attempt: int
    injection: dict | None
    edited: str
    shape: dict
    validation: dict
    failure: dict | None
    failures: Annotated[list[dict], operator.add]
    stop: dict | None
    outcome: dict


@dataclass
class InjectContext:
    """Run-scoped dependencies (never checkpointed)."""

    models: InjectModels
    taxonomy: dict[str, InjectionType]


def _type(state: InjectState, runtime: Runtime[InjectContext]) -> InjectionType:
    return runtime.context.taxonomy[state["type"]]


def _texts(state: InjectState) -> dict[str, str]:
    return {"source": state.get("source") or "(none)", "text": state["original"]}


# -- nodes -----------------------------------------------------------------------------------


async def applicability(state: InjectState, runtime: Runtime[InjectContext]) -> dict[str, Any]:
    models, t = runtime.context.models, _type(state, runtime)
    variables = {**type_variables(t), "kind": t.kind, **_texts(state)}
    a, b = await asyncio.gather(
        *(
            models.callers[role].call(
                models.prompts["applicability"], variables, Applicability, key=role
            )
            for role in ("applicability_a", "applicability_b")
        )
    )
    answers = {"a": a.model_dump(), "b": b.model_dump()}
    if not (isinstance(a, Applicability) and isinstance(b, Applicability)):
        failed = [x for x in (a, b) if not isinstance(x, Applicability)]
        status = "error" if any(isinstance(x, CallError) for x in failed) else "parse_failure"
        why = " / ".join(f"{x.claim_id}: {x.reason}" for x in failed)  # type: ignore[union-attr]
        stop: dict[str, str] | None = {"status": status, "reason": f"applicability: {why}"}
    elif not a.applicable and not b.applicable:
        stop = {"status": "not_applicable", "reason": f"A: {a.reason} / B: {b.reason}"}
    elif a.applicable != b.applicable:
        stop = {"status": "disagreed", "reason": f"A: {a.reason} / B: {b.reason}"}
    else:
        stop = None
    return {"applicability": answers, "stop": stop, "attempt": 0}


async def inject(state: InjectState, runtime: Runtime[InjectContext]) -> dict[str, Any]:
    models, t = runtime.context.models, _type(state, runtime)
    attempt = state.get("attempt", 0) + 1
    previous = state.get("failure")
    feedback = (
        f"\nA previous attempt was rejected ({previous['stage']}: {previous['reason']}). "
        "Make a different edit that avoids this problem.\n"
        if previous
        else ""
    )
    prompt = models.prompts["inject_error" if t.kind == "error" else "inject_rewrite"]
    variables = {**type_variables(t), **_texts(state), "feedback": feedback}
    reply = await models.callers["injector"].call(prompt, variables, Injection, key="injector")
    update: dict[str, Any] = {"attempt": attempt, "injection": None, "failure": None}
    if isinstance(reply, CallError):
        return {**update, "stop": {"status": "error", "reason": f"injection call: {reply.reason}"}}
    if isinstance(reply, ParseFailure):
        return _failed(update, attempt, "injection", "parse_failure", reply.reason)
    edited = restore_outer_whitespace(state["original"], reply.edited_text)
    return {**update, "injection": reply.model_dump(), "edited": edited}


def shape(state: InjectState, runtime: Runtime[InjectContext]) -> dict[str, Any]:
    reply = Injection.model_validate(state["injection"])
    check = check_shape(
        state["original"],
        state["edited"],
        _type(state, runtime).limits,
        original_span=reply.original_span,
        replacement=reply.replacement,
    )
    update = {"shape": check.model_dump(mode="json")}
    if not check.ok:
        return _failed(update, state["attempt"], "shape", "shape_rejected", check.reason())
    return update


async def validate(state: InjectState, runtime: Runtime[InjectContext]) -> dict[str, Any]:
    models, t = runtime.context.models, _type(state, runtime)
    check = ShapeCheck.model_validate(state["shape"])
    assert check.shape is not None
    a, b = check.shape.original_span
    c, d = check.shape.edited_span
    variables = {
        **type_variables(t),
        "source": state.get("source") or "(none)",
        "original": state["original"],
        "edited": state["edited"],
        "before": state["original"][a:b],
        "after": state["edited"][c:d],
    }
    prompt = models.prompts["validate_error" if t.kind == "error" else "validate_rewrite"]
    schema = validation_schema(t.kind)
    verdict = await models.callers["validator"].call(prompt, variables, schema, key="validator")
    if isinstance(verdict, CallError):
        return {"stop": {"status": "error", "reason": f"validator call: {verdict.reason}"}}
    if isinstance(verdict, ParseFailure):
        return _failed({}, state["attempt"], "validator", "parse_failure", verdict.reason)
    update = {"validation": verdict.model_dump()}
    failed = failed_checks(verdict)
    if failed:
        why = f"{', '.join(failed)} false: {verdict.reason}"
        return _failed(update, state["attempt"], "validator", "validator_rejected", why)
    return update


def _failed(update: dict, attempt: int, stage: str, status: str, reason: str) -> dict[str, Any]:
    failure = {"attempt": attempt, "stage": stage, "status": status, "reason": reason}
    return {**update, "failure": failure, "failures": [failure]}


def accept(state: InjectState, runtime: Runtime[InjectContext]) -> dict[str, Any]:
    t = _type(state, runtime)
    pair = llm_pair(
        pair_id=state["pair_id"],
        source_id=state["source_id"],
        t=t,
        source=state.get("source", ""),
        original=state["original"],
        injection=Injection.model_validate(state["injection"]),
        edited=state["edited"],
        shape=ShapeCheck.model_validate(state["shape"]),
        validation=state["validation"],
        models=runtime.context.models.model_ids(),
        attempts=state["attempt"],
        meta=state.get("meta") or {},
    )
    return {"outcome": _outcome(state, t, "accepted", "", pair=pair.model_dump(mode="json"))}


def discard(state: InjectState, runtime: Runtime[InjectContext]) -> dict[str, Any]:
    t = _type(state, runtime)
    stop = state.get("stop") or state.get("failure") or {}
    status = stop.get("status", "error")
    return {"outcome": _outcome(state, t, status, stop.get("reason", ""))}


def _outcome(state: InjectState, t: InjectionType, status: str, reason: str, pair=None) -> dict:
    return InjectionOutcome(
        pair_id=state["pair_id"],
        source_id=state["source_id"],
        type=t.id,
        kind=t.kind,
        backend="llm",
        status=status,  # type: ignore[arg-type]
        reason=reason,
        attempts=state.get("attempt", 0),
        failures=state.get("failures") or [],
        applicability=state.get("applicability") or {},
        pair=pair,
    ).model_dump(mode="json")


# -- edges -----------------------------------------------------------------------------------


def after_applicability(state: InjectState) -> str:
    return "discard" if state.get("stop") else "inject"


def _next_or_retry(following: str) -> Callable[[InjectState], str]:
    """Route to ``following`` when the step passed; after a failure back to ``inject`` while
    attempts remain, else to ``discard``; a failed call goes to ``discard`` at once."""

    def route(state: InjectState) -> str:
        if state.get("stop"):
            return "discard"
        if state.get("failure"):
            return "inject" if state.get("attempt", 0) < MAX_ATTEMPTS else "discard"
        return following

    return route


def build_graph():
    """Compile the injection graph; pass an :class:`InjectContext` as ``context=``."""
    graph = StateGraph(InjectState, context_schema=InjectContext)
    graph.add_node("applicability", applicability)
    graph.add_node("inject", inject)
    graph.add_node("check_shape", shape)
    graph.add_node("validate", validate)
    graph.add_node("accept", accept)
    graph.add_node("discard", discard)
    graph.add_edge(START, "applicability")
    graph.add_conditional_edges("applicability", after_applicability, ["inject", "discard"])
    graph.add_conditional_edges(
        "inject", _next_or_retry("check_shape"), ["check_shape", "inject", "discard"]
    )
    graph.add_conditional_edges(
        "check_shape", _next_or_retry("validate"), ["validate", "inject", "discard"]
    )
    graph.add_conditional_edges(
        "validate", _next_or_retry("accept"), ["accept", "inject", "discard"]
    )
    graph.add_edge("accept", END)
    graph.add_edge("discard", END)
    return graph.compile()


# -- dataset runs ----------------------------------------------------------------------------


async def arun_injection(
    data: Dataset,
    types: list[str],
    models: InjectModels,
    files: InjectFiles,
    provenance: dict[str, Any],
    *,
    concurrency: int = 4,
    on_done: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Run the graph for every (item, type) not yet logged; write the pairs and the stats.
    Resumable (:mod:`clinjudge.inject.outputs`); returns the stats."""
    started = time.perf_counter()
    check_resumable(files, provenance)
    taxonomy = load_taxonomy()
    tasks = [(item, type_id) for item in data.items for type_id in types]
    done = {pid: o.row() for pid, o in read_outcomes(files.outcomes).items()}

    def make_input(task) -> dict[str, Any]:
        item, type_id = task
        return {
            "pair_id": pair_id_of(item.id, type_id),
            "source_id": item.id,
            "type": type_id,
            "source": item.transcript,
            "original": item.note,
            "meta": {"item": item.meta},
            "failures": [],
        }

    result = await run_graph(
        build_graph(),
        InjectContext(models=models, taxonomy=taxonomy),
        tasks,
        key=lambda task: pair_id_of(task[0].id, task[1]),
        make_input=make_input,
        make_row=lambda task, state: {"note_id": state["pair_id"], **state["outcome"]},
        out_path=files.outcomes,
        done=done,
        concurrency=concurrency,
        keep=lambda row: row.get("status") != "error",
        on_done=on_done,
    )
    logged = read_completed(files.outcomes)  # the last row per pair, "error" rows included
    ordered = [
        InjectionOutcome.model_validate({k: v for k, v in row.items() if k != "note_id"})
        for task in tasks
        if (row := logged.get(pair_id_of(task[0].id, task[1]))) is not None
    ]
    return finish_run(
        files,
        ordered,
        types,
        provenance,
        seconds=time.perf_counter() - started,
        complete=not result.failed
        and all(o.status != "error" for o in ordered)
        and len(ordered) == len(tasks),
        usage=models.usage(),
    )
