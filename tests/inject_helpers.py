"""Checks shared by the tests of the offline injectors: an injected pair keeps to its type's
edit-shape limits (SPEC §5), and which note lines the pairs changed."""

from __future__ import annotations

from clinjudge.inject.shape import check_shape
from clinjudge.inject.taxonomy import TAXONOMY


def within_limits(type_id: str, found: list) -> None:
    for p in found:
        checked = check_shape(p.original_note, p.note, TAXONOMY[type_id].limits)
        assert checked.ok, checked.violations


def changed_lines(found: list) -> set[str]:
    """The edited note's line holding each pair's edit."""
    return {p.note[p.note.rfind("\n", 0, p.start) + 1 :].split("\n", 1)[0] for p in found}
