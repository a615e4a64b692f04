"""The files of an injection run and the resumable offline run (SPEC §5 "Outputs").

``--out pairs.jsonl`` names three files side by side:

* ``pairs.jsonl`` — the accepted pairs (:class:`~clinjudge.inject.pairs.PairRecord`, written with
  :func:`~clinjudge.inject.pairs.pair_line`), rewritten at the end of every run from the log, in
  dataset × type order, for the types of that run;
* ``pairs.outcomes.jsonl`` — the log: one :class:`~clinjudge.inject.pipeline.InjectionOutcome`
  per (item, type) attempt, discards with their reasons included, appended and fsynced as each
  finishes. A re-run skips every attempt logged with a status other than ``error``;
* ``pairs.stats.json`` — provenance and :func:`~clinjudge.inject.pipeline.acceptance_stats`.
  A re-run whose identity (backend, seed, models, decoding, prompts, dataset) differs from the
  recorded one is refused, so one log never mixes two configurations.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clinjudge import __version__
from clinjudge.datasets.items import Dataset
from clinjudge.errors import ConfigError
from clinjudge.files import atomic_write, atomic_write_text, dump_line
from clinjudge.inject.pairs import pair_line
from clinjudge.inject.pipeline import (
    InjectionOutcome,
    acceptance_stats,
    inject_offline,
    pair_id_of,
)
from clinjudge.inject.taxonomy import load_taxonomy, taxonomy_sha256
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.runner import read_completed

#: Provenance keys that must match for a run to be resumed.
IDENTITY_KEYS = ("backend", "seed", "models", "decoding", "prompts", "dataset_sha256")


@dataclass(frozen=True)
class InjectFiles:
    """The three files of a run named by ``--out`` (module docstring)."""

    pairs: Path

    @property
    def outcomes(self) -> Path:
        return self.pairs.with_name(f"{self.pairs.stem}.outcomes.jsonl")

    @property
    def stats(self) -> Path:
        return self.pairs.with_name(f"{self.pairs.stem}.stats.json")

    def all(self) -> list[Path]:
        return [self.pairs, self.outcomes, self.stats]


def run_provenance(
    backend: str,
    data: Dataset,
    *,
    seed: int,
    llm: dict[str, Any] | None = None,
    kb: KnowledgeBase | None = None,
) -> dict[str, Any]:
    """Provenance of a run: package version, backend, seed, dataset (with sha256), taxonomy
    sha256, and the models per role, endpoints, decoding and prompt hashes (``llm``, from
    :meth:`InjectModels.provenance`) or the knowledge digest (offline) — never an API key."""
    llm = llm or {}
    return {
        "package_version": __version__,
        "backend": backend,
        "seed": seed,
        "models": llm.get("models", {}),
        "base_urls": llm.get("base_urls", {}),
        "decoding": llm.get("decoding"),
        "prompts": llm.get("prompts", {}),
        "dataset_sha256": data.sha256,
        "dataset": data.provenance(),
        "taxonomy_sha256": taxonomy_sha256(),
        "knowledge_digest": kb.digest if kb is not None else None,
    }


def check_resumable(files: InjectFiles, provenance: dict[str, Any]) -> None:
    """Raise :class:`ConfigError` when ``files`` hold a run of another configuration."""
    if files.pairs.is_dir():
        raise ConfigError(f"--out is a directory, not a file: {files.pairs}")
    if not files.stats.exists():
        return
    try:
        previous = json.loads(files.stats.read_text(encoding="utf-8")).get("provenance", {})
    except (json.JSONDecodeError, AttributeError):
        raise ConfigError(f"{files.stats} is not a stats file of clinjudge inject") from None
    for key in IDENTITY_KEYS:
        if previous.get(key) != provenance.get(key):
            raise ConfigError(
                f"{files.pairs} holds a run with another {key}; use another --out or delete "
                f"{files.pairs.name}, {files.outcomes.name} and {files.stats.name}"
            )


def read_outcomes(path: Path) -> dict[str, InjectionOutcome]:
    """Logged outcomes by pair id, ``error`` ones left out (they are retried)."""
    rows = read_completed(path)
    return {
        pid: InjectionOutcome.model_validate({k: v for k, v in row.items() if k != "note_id"})
        for pid, row in rows.items()
        if row.get("status") != "error"
    }


def append_outcome(path: Path, outcome: InjectionOutcome) -> None:
    """Append one outcome row to the log, flushed and fsynced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(dump_line(outcome.row()))
        handle.flush()
        os.fsync(handle.fileno())


def finish_run(
    files: InjectFiles,
    ordered: list[InjectionOutcome],
    types: list[str],
    provenance: dict[str, Any],
    *,
    seconds: float,
    complete: bool,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``pairs.jsonl`` (accepted pairs of ``ordered``) and ``pairs.stats.json``; return
    the stats. Each file is written to a temporary name and renamed into place."""
    atomic_write(files.pairs, (pair_line(o.pair) for o in ordered if o.pair is not None))
    stats = {
        "provenance": provenance,
        "types": types,
        "complete": complete,
        "seconds": round(seconds, 3),
        "usage": usage,
        **acceptance_stats(ordered, types),
    }
    atomic_write_text(files.stats, json.dumps(stats, indent=2, ensure_ascii=False) + "\n")
    return stats


def run_offline(
    data: Dataset,
    types: list[str],
    files: InjectFiles,
    provenance: dict[str, Any],
    *,
    seed: int = 0,
    kb: KnowledgeBase | None = None,
    on_done: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Inject every type into every item offline (resumable); return the stats."""
    started = time.perf_counter()
    check_resumable(files, provenance)
    taxonomy = load_taxonomy()
    done = read_outcomes(files.outcomes)
    kb = kb or KnowledgeBase.default()
    ordered = []
    for item in data.items:
        for type_id in types:
            pid = pair_id_of(item.id, type_id)
            if pid not in done:
                done[pid] = inject_offline(item, taxonomy[type_id], seed=seed, kb=kb)
                append_outcome(files.outcomes, done[pid])
            ordered.append(done[pid])
            on_done()
    return finish_run(
        files, ordered, types, provenance, seconds=time.perf_counter() - started, complete=True
    )
