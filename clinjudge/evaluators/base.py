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

A new judge subclasses :class:`BaseEvaluator` (every method but ``evaluate`` and ``score`` has
a default) and registers its builder with :func:`clinjudge.evaluators.registry.judge`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from clinjudge.errors import ConfigError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from clinjudge.datasets.items import Item
    from clinjudge.grounding.backend import ModelAccess
    from clinjudge.knowledge.base import KnowledgeBase
    from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller


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
    #: ``MODEL@URL`` jurors grading together (``--jury``), for a judge that takes a jury.
    jury: tuple[str, ...] = ()


class Evaluator(Protocol):
    name: str
    #: ``soap``, ``cef`` or ``factcheck``.
    kind: str
    #: True when items must have a source text (transcript, dialogue) to be judged.
    needs_source: bool
    #: True for judges that cut the text into claims and can rate claims cut by another
    #: (the SOAP judges): ``compare`` and ``meta-eval`` give them the first one's claims.
    shares_claims: bool

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

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        """The item's row; ``given``: claims cut by another judge, for a judge that
        ``shares_claims`` to rate instead of cutting its own (only such judges are passed
        it; others may leave the parameter out)."""
        ...

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]: ...

    def item_scores(self, row: dict[str, Any]) -> dict[str, Any]: ...

    def score(self, row: dict[str, Any]) -> float | None: ...

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]: ...

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]: ...


class BaseEvaluator:
    """Defaults for a judge built on a :class:`~clinjudge.grounding.backend.ModelAccess`
    (``self.access``) with judge settings ``self.options``; a subclass sets ``name``, ``kind``
    and ``needs_source`` and writes ``evaluate`` and ``score``.

    Default ``summarize``: the mean of ``score`` over the rows that have one, with its 95%
    percentile-bootstrap interval (items resampled), ``n`` and the rows excluded.
    """

    name: str = ""
    kind: str = ""
    needs_source: bool = True
    shares_claims: bool = False

    def __init__(self, access: ModelAccess, options: Mapping[str, Any] | None = None) -> None:
        self.access = access
        self.options = dict(options or {})

    @property
    def caller(self) -> StructuredCaller | None:
        return self.access.caller

    def identity(self) -> dict[str, Any]:
        p = self.provenance()
        return model_identity(p, options=self.options, package_version=p.get("package_version"))

    def provenance(self) -> dict[str, Any]:
        from clinjudge.grounding.backend import with_output_modes

        return with_output_modes({**self.access.provenance, "options": self.options}, self.caller)

    def usage(self) -> dict[str, int] | None:
        return self.caller.usage.as_dict() if self.caller else None

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def score(self, row: dict[str, Any]) -> float | None:
        raise NotImplementedError

    def summarize(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        from clinjudge.metrics.intervals import bootstrap_interval

        values = [s for s in (self.score(r) for r in rows) if s is not None]
        mean = sum(values) / len(values) if values else None
        headline = {
            "score": {
                "value": mean,
                "ci95": bootstrap_interval(values),
                "n": len(values),
                "excluded": len(rows) - len(values),
            }
        }
        return {"kind": self.kind, "headline": headline, "n_items": len(rows)}

    def item_scores(self, row: dict[str, Any]) -> dict[str, Any]:
        return {"score": self.score(row)}

    def flagged_spans(self, row: dict[str, Any]) -> list[tuple[int, int]]:
        return []

    def failures(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        return row_failures(row)

    def verdict_lines(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        return []


def row_failures(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The failure records (``kind``: ``error`` or ``parse_failure``, ``reason``) of a row:
    its ``failures`` list and its ``failure``, whichever it has."""
    found = [f for f in row.get("failures") or [] if isinstance(f, dict) and f.get("kind")]
    single = row.get("failure")
    return found + ([single] if isinstance(single, dict) and single.get("kind") else [])


def model_identity(provenance: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    """What a resumed run must share with this judge: backend, model, decoding and prompt
    hashes from its provenance, and ``extra`` (its settings)."""
    return {
        "backend": provenance["backend"],
        "model": provenance.get("model"),
        "decoding": provenance.get("decoding"),
        "prompts": [ref["sha256"] for ref in provenance.get("prompts", [])],
        **extra,
    }


#: Settings that ``compare`` hands to every judge (the SOAP judges' claim source).
SHARED_OPTIONS = frozenset({"claims"})


def check_options(judge: str, given: Mapping[str, Any], known: Iterable[str]) -> dict[str, Any]:
    """The judge's own settings from ``given`` (``--option JUDGE.KEY=VALUE``), shared ones
    dropped.

    Raises:
        ConfigError: a key the judge does not know.
    """
    allowed = set(known)
    own = {k: v for k, v in given.items() if k not in SHARED_OPTIONS or k in allowed}
    unknown = sorted(set(own) - allowed)
    if unknown:
        raise ConfigError(
            f"unknown {judge} option {unknown[0]!r}: use {', '.join(sorted(allowed)) or 'none'}"
        )
    return own
