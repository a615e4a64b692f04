"""What a judge of ``clinjudge compare`` and ``clinjudge meta-eval`` is (DESIGN "judges").

An :class:`Evaluator` turns one dataset :class:`~clinjudge.datasets.items.Item` (a source text in
``item.transcript`` — possibly empty for judges that need none — and the text to judge in
``item.note``; anything else in ``item.meta``) into one JSON-ready *row*, and knows how to read
its own rows:

- ``summarize(rows)`` → the judge's entry under ``judges`` in ``report.json``; it holds a
  ``"kind"`` and a ``"headline"`` dict ``metric -> {"value", "ci95", "n"}`` that generic reports
  print, plus whatever else the judge wants to report;
- ``item_scores(row)`` → the judge's entry in a ``per_item`` row of ``report.json``;
- ``score(row)`` → one number, higher = better text (fewer errors), for paired AUROC (SPEC §4);
  ``None`` when the row has nothing to score (every unit excluded);
- ``flagged_spans(row)`` → ``[start, end)`` character spans of ``item.note`` the judge flags as
  wrong (detection = a flag overlapping the changed span, SPEC §5);
- ``verdict_lines(row)`` → lines of ``verdicts.jsonl`` (each with ``id`` and ``judge``).

Rows carry the item's id under ``"id"``. A row with ``"retry": True`` (a transport error lost
part of it) is written but run again by the next resumed run.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel

from clinjudge.datasets.items import Item
from clinjudge.errors import ConfigError
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.llm import LLMSettings, ResponseCache


@dataclass
class BuildOptions:
    """Everything a judge may be built from; judge-specific settings go in ``options``
    (e.g. CEF ``n_source``; fact-check ``corpus``, ``search``, ``search_url``)."""

    backend: str | None = None
    settings: LLMSettings | None = None
    chat_model: BaseChatModel | None = None
    prompt_overrides: dict[str, Path] = field(default_factory=dict)
    knowledge: KnowledgeBase | None = None
    cache: ResponseCache | None = None
    options: dict[str, Any] = field(default_factory=dict)


class Evaluator(Protocol):
    name: str
    #: ``soap``, ``cef`` or ``factcheck``.
    kind: str
    #: True when items must have a source text (transcript, dialogue) to be judged.
    needs_source: bool

    def identity(self) -> dict[str, Any]:
        """What must match for a run of this judge to be resumed: backend, model, decoding,
        prompt hashes, judge options."""
        ...

    def provenance(self) -> dict[str, Any]:
        """JSON-ready: package version, backend, model id, decoding, prompt names and hashes,
        knowledge digest, judge options — never an API key."""
        ...

    def usage(self) -> dict[str, int] | None:
        """Model calls and tokens so far (``None`` offline)."""
        ...

    async def evaluate(self, item: Item) -> dict[str, Any]: ...

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]: ...

    def item_scores(self, row: dict[str, Any]) -> dict[str, Any]: ...

    def score(self, row: dict[str, Any]) -> float | None: ...

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]: ...

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]: ...


#: Judge name → ``module:function`` building it from :class:`BuildOptions` (imported lazily so
#: that a judge's dependencies load only when it is used).
REGISTRY: dict[str, str] = {
    "lexical": "clinjudge.evaluators.soap:build_lexical",
    "inference-aware": "clinjudge.evaluators.soap:build_inference_aware",
    "cef": "clinjudge.evaluators.cef:build",
    "factcheck": "clinjudge.evaluators.factcheck:build",
}
EVALUATOR_NAMES: tuple[str, ...] = tuple(REGISTRY)


def build_evaluator(name: str, options: BuildOptions | None = None) -> Evaluator:
    """The judge ``name`` (a key of :data:`REGISTRY`) built from ``options``."""
    if name not in REGISTRY:
        raise ConfigError(f"unknown judge {name!r}: choose from {', '.join(REGISTRY)}")
    module, _, function = REGISTRY[name].partition(":")
    builder: Callable[[BuildOptions], Evaluator] = getattr(
        importlib.import_module(module), function
    )
    return builder(options or BuildOptions())


def parse_judge_names(spec: str) -> list[str]:
    """``"lexical,cef"`` → ``["lexical", "cef"]``; unknown, repeated or no names raise
    :class:`ConfigError`."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise ConfigError(f"no judge named: use e.g. {','.join(EVALUATOR_NAMES[:2])}")
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ConfigError(f"unknown judge {unknown[0]!r}: choose from {', '.join(REGISTRY)}")
    if len(set(names)) != len(names):
        raise ConfigError("a judge is listed twice")
    return names
