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
    #: What follows ``name:`` in ``--judges`` for a judge built from a file (``rubric:FILE``);
    #: "" for a judge named alone.
    argument: str = ""
    #: Whether the judge can be graded by a jury of models (``--jury``).
    jury: bool = False

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


def judge(
    name: str, *, summary: str, argument: str = "", jury: bool = False
) -> Callable[[Builder], Builder]:
    """Register ``builder(options) -> Evaluator`` as the judge ``name``; with an ``argument``
    (``FILE``) the judge is named ``name:VALUE`` and its builder finds the value under that
    argument's lower-case name in ``options.options`` (``rubric:my.md`` → ``file``); ``jury``:
    the builder reads ``options.jury`` (``--jury``), given only to such judges.

    Raises:
        ValueError: another builder already holds ``name``.
    """

    def register(builder: Builder) -> Builder:
        held = _REGISTRY.get(name)
        if held is not None and held.build.__qualname__ != builder.__qualname__:
            raise ValueError(f"judge {name!r} is registered twice")
        _REGISTRY[name] = JudgeEntry(name, summary, builder, argument, jury)
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
    return "; ".join(
        f"{e.name}{':' + e.argument if e.argument else ''} ({e.summary})"
        for e in registry().values()
    )


def entry_of(name: str) -> tuple[JudgeEntry, str | None]:
    """The registry entry a judge name uses, and its argument (``rubric:my.md`` → the
    ``rubric`` entry and ``my.md``; ``None`` for a judge named alone).

    Raises:
        ConfigError: an unknown judge, a judge that needs an argument named without one, or an
            argument given to a judge that takes none.
    """
    entries = registry()
    base, sep, value = name.partition(":")
    entry = entries.get(base)
    if entry is None:
        raise ConfigError(f"unknown judge {name!r}: choose from {', '.join(entries)}")
    if entry.argument and not value.strip():
        raise ConfigError(f"judge {base!r} needs a {entry.argument}: {base}:{entry.argument}")
    if sep and not entry.argument:
        raise ConfigError(f"judge {base!r} takes no argument: name it {base!r} alone")
    return entry, (value.strip() if entry.argument else None)


def build_evaluator(name: str, options: BuildOptions | None = None) -> Evaluator:
    """The judge ``name`` built from ``options`` (its ``jury`` only if the judge takes one).

    Raises:
        ConfigError: no judge is called ``name``.
    """
    from dataclasses import replace

    from clinjudge.evaluators.base import BuildOptions

    entry, value = entry_of(name)
    options = options or BuildOptions()
    if value is not None:
        given = {**options.options, entry.argument.lower(): value}
        options = replace(options, options=given)
    if options.jury and not entry.jury:
        options = replace(options, jury=())
    return entry.build(options)


def takes_jury(names: list[str]) -> bool:
    """Whether any judge of ``names`` can be graded by a jury (``--jury``)."""
    return any(entry_of(n)[0].jury for n in names)


def parse_judge_names(spec: str) -> list[str]:
    """``"lexical,cef"`` → ``["lexical", "cef"]``.

    Raises:
        ConfigError: an unknown or repeated name, or none.
    """
    entries = registry()
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise ConfigError(f"no judge named: use e.g. {','.join(list(entries)[:2])}")
    for n in names:
        entry_of(n)
    if len(set(names)) != len(names):
        raise ConfigError("a judge is listed twice")
    return names
