"""How ``--help`` shows option types: Typer labels every option with its Python type
(``<bool>`` on flags, ``<str>`` on text); those two say nothing a reader needs, so they are
left out, while ``<path>``, ``<int>``, ranges and choices stay (issue 37). Applied once, when
the command line is built; if Typer's internals move, help keeps Typer's own labels."""

from __future__ import annotations

from typing import Any

#: Type labels that carry no information for a reader of ``--help``.
SILENT_TYPES = frozenset({"<bool>", "<str>", "<bool>...", "<str>..."})


def quiet_type_labels() -> None:
    """Drop :data:`SILENT_TYPES` from Typer's rich help (options and arguments)."""
    from typer import core

    for cls in (core.TyperOption, core.TyperArgument):
        shown = getattr(cls, "display_type_rich", None)
        if shown is None or getattr(shown, "_quiet", False):
            continue

        def quiet(self: Any, ctx: Any, _shown: Any = shown) -> str | None:
            label = _shown(self, ctx)
            return None if label in SILENT_TYPES else label

        quiet._quiet = True  # type: ignore[attr-defined]
        cls.display_type_rich = quiet  # type: ignore[method-assign]
