"""The judge registry: ``@judge("name", summary=...)`` on a builder registers a judge of
``clinjudge compare`` and ``clinjudge meta-eval`` (the inspect_ai pattern, DESIGN "Style
anchors"); the CLI's ``--judges`` help and choices are read from here.

Every module of this package is a judge module: :func:`registry` imports them all, so a new
judge is one module with one decorator. Judge modules import their machinery (graphs, models,
knowledge) inside the builder, so that listing the judges — as ``clinjudge --help`` does —
costs milliseconds, not the seconds of loading LangChain and PyTorch.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clinjudge.errors import ConfigError

if TYPE_CHECKING:
    from clinjudge.evaluators.base import BuildOptions, Evaluator

Builder = Callable[["BuildOptions"], "Evaluator"]
_NOT_JUDGES = frozenset({"base", "registry"})


@dataclass(frozen=True)
class JudgeEntry:
    name: str
    #: One line for ``--help`` (what the judge reads and what it reports).
    summary: str
    build: Builder

    @property
    def needs_source(self) -> bool:
        """Whether the judge reads a source text (transcript, dialogue) beside the one it judges:
        the ``needs_source`` of the class its builder returns (its return annotation), known
        without building the judge — so a dataset's columns are checked before anything heavy
        loads. True when the annotation names no such class."""
        hint = self.build.__annotations__.get("return")
        if isinstance(hint, str):
            hint = vars(sys.modules[self.build.__module__]).get(hint)
        return bool(getattr(hint, "needs_source", True))


_REGISTRY: dict[str, JudgeEntry] = {}


def judge(name: str, *, summary: str) -> Callable[[Builder], Builder]:
    """Register ``builder(options) -> Evaluator`` as the judge ``name``.

    Raises:
        ValueError: another builder already holds ``name``.
    """

    def register(builder: Builder) -> Builder:
        held = _REGISTRY.get(name)
        if held is not None and held.build.__qualname__ != builder.__qualname__:
            raise ValueError(f"judge {name!r} is registered twice")
        _REGISTRY[name] = JudgeEntry(name, summary, builder)
        return builder

    return register


def registry() -> dict[str, JudgeEntry]:
    """Every registered judge, in the order its module and decorators declare them."""
    package = importlib.import_module(__package__)
    for module in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: _order(m.name)):
        if module.name not in _NOT_JUDGES:
            importlib.import_module(f"{__package__}.{module.name}")
    return dict(_REGISTRY)


def _order(module: str) -> tuple[int, str]:
    """The SOAP judges first (the defaults of ``--judges``), then the others by name."""
    return (0 if module == "soap" else 1, module)


def judge_names() -> tuple[str, ...]:
    return tuple(registry())


def judges_help() -> str:
    """``name (summary); …`` of every judge, for the CLI's ``--judges`` help."""
    return "; ".join(f"{e.name} ({e.summary})" for e in registry().values())


def build_evaluator(name: str, options: BuildOptions | None = None) -> Evaluator:
    """The judge ``name`` built from ``options``.

    Raises:
        ConfigError: no judge is called ``name``.
    """
    from clinjudge.evaluators.base import BuildOptions

    entries = registry()
    if name not in entries:
        raise ConfigError(f"unknown judge {name!r}: choose from {', '.join(entries)}")
    return entries[name].build(options or BuildOptions())


def parse_judge_names(spec: str) -> list[str]:
    """``"lexical,cef"`` → ``["lexical", "cef"]``.

    Raises:
        ConfigError: an unknown or repeated name, or none.
    """
    entries = registry()
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise ConfigError(f"no judge named: use e.g. {','.join(list(entries)[:2])}")
    unknown = [n for n in names if n not in entries]
    if unknown:
        raise ConfigError(f"unknown judge {unknown[0]!r}: choose from {', '.join(entries)}")
    if len(set(names)) != len(names):
        raise ConfigError("a judge is listed twice")
    return names
