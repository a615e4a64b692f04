"""The programmatic edit-shape check of the injection pipeline (SPEC §5: "programmatic check of
the edit's shape" with the per-type limits DESTROY, WRITE, SENTENCES, LENGTH).

An edit is measured from the two texts alone, whoever made it (a mechanical perturber or a
model), with :class:`difflib.SequenceMatcher` over tokens (runs of word characters, runs of
whitespace, single punctuation marks) so that a changed word counts as one change, not as a
scatter of coincidentally equal letters:

* ``chars_removed`` (DESTROY) — characters of the original inside deleted/replaced tokens, less
  the common prefix and suffix of a replaced stretch and its replacement (a case change of one
  letter, "hypertension" → "hypotension", counts the changed letters only);
* ``chars_added`` (WRITE) — likewise, characters of the edited text that are new;
* ``length_change`` (LENGTH) — ``len(edited) − len(original)``; the limit bounds its absolute value;
* ``regions`` — separate change regions: changes whose gap holds no word character (only spaces
  or punctuation) are one region ("denies any cough" → "reports cough" is one);
* ``sentences_touched`` (SENTENCES) — max(sentences of the original a region removes from or
  changes, sentences of the edited text a region writes into), sentences by
  :func:`clinjudge.text.sentences.split_sentences`. A pure insertion between two sentences
  touches no original sentence; a new sentence counts once on the edited side.

:func:`check_shape` compares the measurements with a type's :class:`ShapeLimits` and, for a
model's JSON, verifies that its original span occurs in the original, its replacement in the
edited text, and that replacing that span by the replacement *is* the edited text.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clinjudge.text.sentences import split_sentences

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
_WORD = re.compile(r"\w")


class ShapeLimits(BaseModel):
    """The most an edit of one error/rewrite type may change (SPEC §5)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    destroy: int = Field(ge=0, description="max characters removed (DESTROY)")
    write: int = Field(ge=0, description="max characters added (WRITE)")
    sentences: int = Field(ge=1, description="max sentences touched (SENTENCES)")
    length: int = Field(ge=0, description="max |net length change| (LENGTH)")
    regions: int = Field(default=1, ge=1, description="max separate change regions")


class EditShape(BaseModel):
    """What an edit changed; spans are half-open ``[start, end)`` hulls of all regions."""

    chars_removed: int
    chars_added: int
    length_change: int
    regions: int
    sentences_touched: int
    original_span: tuple[int, int]
    edited_span: tuple[int, int]


class ShapeCheck(BaseModel):
    """The verdict of :func:`check_shape`: ``ok`` iff ``violations`` is empty."""

    ok: bool
    shape: EditShape | None
    limits: ShapeLimits
    violations: list[str] = Field(default_factory=list)

    def reason(self) -> str:
        """The violations as one line ("" when ok)."""
        return "; ".join(self.violations)

    def record(self) -> dict[str, Any]:
        """JSON-ready for ``PairRecord.shape``: measurements, limits, ok, violations."""
        return {
            **(self.shape.model_dump(mode="json") if self.shape else {}),
            "limits": self.limits.model_dump(),
            "ok": self.ok,
            "violations": list(self.violations),
        }


def _tokens(text: str) -> tuple[list[str], list[int]]:
    """Tokens of ``text`` and the offset of each; a final sentinel offset ``len(text)``."""
    tokens, offsets = [], []
    for m in _TOKEN.finditer(text):
        tokens.append(m.group())
        offsets.append(m.start())
    offsets.append(len(text))
    return tokens, offsets


def _common_ends(a: str, b: str) -> int:
    """Length of the common prefix plus the common suffix of ``a`` and ``b`` (not overlapping):
    the characters a replaced stretch keeps ("No lymphadenopathy" → "Lymphadenopathy" keeps
    "ymphadenopathy": 4 removed, 1 added)."""
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return prefix + suffix


def _regions(original: str, edited: str) -> list[tuple[int, int, int, int, int, int]]:
    """``(a0, a1, b0, b1, removed, added)`` per change region, in character offsets."""
    ta, oa = _tokens(original)
    tb, ob = _tokens(edited)
    matcher = SequenceMatcher(None, ta, tb, autojunk=False)
    regions: list[list[int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        a0, a1, b0, b1 = oa[i1], oa[i2], ob[j1], ob[j2]
        same = _common_ends(original[a0:a1], edited[b0:b1])
        removed, added = a1 - a0 - same, b1 - b0 - same
        if regions and not _WORD.search(original, regions[-1][1], a0):
            last = regions[-1]
            last[1], last[3] = a1, b1
            last[4] += removed
            last[5] += added
        else:
            regions.append([a0, a1, b0, b1, removed, added])
    return [tuple(r) for r in regions]  # type: ignore[misc]


def _touched(sentences: list[tuple[int, int]], start: int, end: int) -> set[int]:
    """Indices of sentences a region ``[start, end)`` changes; an empty region (an insertion
    point) touches a sentence only strictly inside it."""
    if start == end:
        return {i for i, (s, e) in enumerate(sentences) if s < start < e}
    return {i for i, (s, e) in enumerate(sentences) if s < end and start < e}


def _slid(text: str, start: int, end: int, sentences: list[tuple[int, int]]) -> set[int]:
    """:func:`_touched` of a pure insertion/deletion ``text[start:end]`` at its best position:
    the same edit can often be placed several characters left or right (deleting "c. D" or
    ". D c" out of "c. D c."), and the position touching the fewest sentences is taken."""
    best = _touched(sentences, start, end)
    for step in (1, -1):
        a, b = start, end
        while best:
            i, j = (a, b) if step > 0 else (a - 1, b - 1)
            if i < 0 or j >= len(text) or text[i] != text[j]:
                break
            a, b = a + step, b + step
            touched = _touched(sentences, a, b)
            if len(touched) < len(best):
                best = touched
    return best


def measure_edit(original: str, edited: str) -> EditShape:
    """Measure the edit turning ``original`` into ``edited`` (module docstring)."""
    regions = _regions(original, edited)
    sent_a = [(s.start, s.end) for s in split_sentences(original)]
    sent_b = [(s.start, s.end) for s in split_sentences(edited)]
    touched_a: set[int] = set()
    touched_b: set[int] = set()
    for a0, a1, b0, b1, _removed, _added in regions:
        if b0 == b1:  # a pure deletion
            touched_a |= _slid(original, a0, a1, sent_a)
        elif a0 == a1:  # a pure insertion
            touched_b |= _slid(edited, b0, b1, sent_b)
        else:
            touched_a |= _touched(sent_a, a0, a1)
            touched_b |= _touched(sent_b, b0, b1)
    if regions:
        original_span = (regions[0][0], regions[-1][1])
        edited_span = (regions[0][2], regions[-1][3])
    else:
        original_span = edited_span = (0, 0)
    return EditShape(
        chars_removed=sum(r[4] for r in regions),
        chars_added=sum(r[5] for r in regions),
        length_change=len(edited) - len(original),
        regions=len(regions),
        sentences_touched=max(len(touched_a), len(touched_b)),
        original_span=original_span,
        edited_span=edited_span,
    )


def limit_violations(shape: EditShape, limits: ShapeLimits) -> list[str]:
    """One line per limit the measured edit exceeds."""
    checks = (
        ("DESTROY", shape.chars_removed, limits.destroy, "characters removed"),
        ("WRITE", shape.chars_added, limits.write, "characters added"),
        ("SENTENCES", shape.sentences_touched, limits.sentences, "sentences touched"),
        ("LENGTH", abs(shape.length_change), limits.length, "characters of net length change"),
        ("REGIONS", shape.regions, limits.regions, "separate change regions"),
    )
    return [
        f"{name}: {value} {what} > limit {limit}"
        for name, value, limit, what in checks
        if value > limit
    ]


def span_violations(original: str, edited: str, original_span: str, replacement: str) -> list[str]:
    """Whether a model's claimed edit is real: ``original_span`` occurs in ``original``,
    ``replacement`` in ``edited``, and replacing one occurrence of the span by the replacement
    gives exactly ``edited``. An empty span (a pure insertion) or replacement (a deletion) is
    not searched for."""
    problems = []
    if original_span and original_span not in original:
        problems.append("original span not found verbatim in the original text")
    if replacement and replacement not in edited:
        problems.append("replacement not found verbatim in the edited text")
    if problems or not original_span:
        return problems
    start = original.find(original_span)
    while start >= 0:
        if original[:start] + replacement + original[start + len(original_span) :] == edited:
            return []
        start = original.find(original_span, start + 1)
    return ["replacing the original span by the replacement does not give the edited text"]


def check_shape(
    original: str,
    edited: str,
    limits: ShapeLimits,
    *,
    original_span: str | None = None,
    replacement: str | None = None,
) -> ShapeCheck:
    """Measure the edit and compare it with ``limits``; when a model's ``original_span`` and
    ``replacement`` are given, also check them with :func:`span_violations`."""
    if original == edited:
        return ShapeCheck(
            ok=False, shape=None, limits=limits, violations=["nothing changed: edited == original"]
        )
    shape = measure_edit(original, edited)
    violations = limit_violations(shape, limits)
    if original_span is not None and replacement is not None:
        violations += span_violations(original, edited, original_span, replacement)
    return ShapeCheck(ok=not violations, shape=shape, limits=limits, violations=violations)
