"""What a mechanical perturbation is: one contiguous edit of a real note, with its record
(SPEC §5: "offline injectors for the mechanical types"; an injected error or a legitimate
rewrite of exactly one place, the rest of the note byte-identical).

The edit replaces ``original_note[a:b]`` (``before``) by ``after``; in the edited ``note`` the
new text lies at ``[start, end)`` with ``start == a`` and ``end == a + len(after)``. The
validator of :class:`Perturbation` enforces that this is the *only* difference, so every record
can be trusted by the edit-shape check of the injection pipeline (SPEC §5 DESTROY / WRITE /
LENGTH: :attr:`Perturbation.chars_removed`, :attr:`~Perturbation.chars_added`,
:attr:`~Perturbation.length_change`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from clinjudge.inject.material import NoteMaterial, material
from clinjudge.knowledge.base import KnowledgeBase

PerturbationKind = Literal["error", "rewrite"]


class Perturbation(BaseModel):
    """One mechanical edit of a note and why it was made (module docstring)."""

    model_config = ConfigDict(frozen=True)

    kind: PerturbationKind
    type: str
    original_note: str
    note: str
    start: int
    end: int
    original_span: tuple[int, int]
    before: str
    after: str
    source_id: str = ""
    rationale: str = ""

    @model_validator(mode="after")
    def _single_edit(self) -> Perturbation:
        a, b = self.original_span
        problems = []
        if not 0 <= a <= b <= len(self.original_note):
            problems.append(f"original span {self.original_span} outside the note")
        elif self.original_note[a:b] != self.before:
            problems.append("original_note[original_span] != before")
        if self.before == self.after:
            problems.append("before == after: nothing changed")
        if (self.start, self.end) != (a, a + len(self.after)):
            problems.append("(start, end) must be (original start, original start + len(after))")
        if self.note != self.original_note[:a] + self.after + self.original_note[b:]:
            problems.append("note differs from original_note outside the edited span")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def chars_removed(self) -> int:
        """Characters taken out of the original (SPEC §5 DESTROY)."""
        return len(self.before)

    @property
    def chars_added(self) -> int:
        """Characters written into the note (SPEC §5 WRITE)."""
        return len(self.after)

    @property
    def length_change(self) -> int:
        """Net change of the note's length (SPEC §5 LENGTH)."""
        return len(self.after) - len(self.before)

    def overlaps(self, start: int, end: int) -> bool:
        """Whether the span ``[start, end)`` of the *edited* note touches the changed span
        (:func:`spans_touch`): the test "a flag overlapping the changed span"."""
        return spans_touch(self.start, self.end, start, end)


def spans_touch(edit_start: int, edit_end: int, start: int, end: int) -> bool:
    """Whether ``[start, end)`` overlaps the edited span ``[edit_start, edit_end)``; an empty
    edited span (a deletion, or an insertion point) is touched by a span containing it."""
    if edit_start == edit_end:
        return start <= edit_start <= end
    return start < edit_end and edit_start < end


@dataclass(frozen=True)
class Edit:
    """A candidate edit found by a perturber: replace ``[start, end)`` of the original note."""

    start: int
    end: int
    after: str
    rationale: str


Finder = Callable[[NoteMaterial], list[Edit]]


@dataclass(frozen=True)
class Perturber:
    """A named perturbation type: ``find`` lists every applicable edit of a note; calling the
    perturber picks one of them with ``random.Random(seed)`` (``None`` when none applies)."""

    type: str
    kind: PerturbationKind
    find: Finder
    description: str

    def candidates(
        self,
        note: str,
        transcript: str,
        *,
        kb: KnowledgeBase | None = None,
        source_id: str = "",
    ) -> list[Perturbation]:
        """Every perturbation of this type that applies to ``note``, in note order."""
        src = material(note, transcript, kb)
        edits = sorted(self.find(src), key=lambda e: (e.start, e.end, e.after))
        return [self._build(note, e, source_id) for e in edits]

    def __call__(
        self,
        note: str,
        transcript: str,
        *,
        seed: int | random.Random = 0,
        kb: KnowledgeBase | None = None,
        source_id: str = "",
    ) -> Perturbation | None:
        """One perturbation chosen uniformly among :meth:`candidates` (deterministic given
        ``seed``), or ``None`` when the type does not apply to this note."""
        found = self.candidates(note, transcript, kb=kb, source_id=source_id)
        if not found:
            return None
        rng = seed if isinstance(seed, random.Random) else random.Random(seed)
        return rng.choice(found)

    def _build(self, note: str, edit: Edit, source_id: str) -> Perturbation:
        return Perturbation(
            kind=self.kind,
            type=self.type,
            original_note=note,
            note=note[: edit.start] + edit.after + note[edit.end :],
            start=edit.start,
            end=edit.start + len(edit.after),
            original_span=(edit.start, edit.end),
            before=note[edit.start : edit.end],
            after=edit.after,
            source_id=source_id,
            rationale=edit.rationale,
        )


def match_case(template: str, replacement: str) -> str:
    """``replacement`` written in the case style of ``template``: ALL CAPS (when the template
    has more than one letter), Capitalised first letter, or as given."""
    letters = [c for c in template if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return replacement.upper()
    if letters and template.lstrip()[:1].isupper() and replacement[:1].islower():
        return replacement[:1].upper() + replacement[1:]
    return replacement


#: First letters whose spoken name starts with a vowel sound ("an MRI", "an LLQ", "an X-ray").
_VOWEL_LETTER_NAMES = frozenset("AEFHILMNORSX")
#: Word starts spelled with a vowel but spoken with a consonant ("a urinary", "a one-time").
_CONSONANT_SOUND = ("uni", "use", "usu", "uri", "ure", "uro", "uti", "ute", "eu", "one")
#: Word starts spelled with a consonant but spoken with a vowel ("an hour").
_VOWEL_SOUND = ("hour", "honest", "heir", "x-")


def indefinite_article(phrase: str) -> str:
    """``"a"`` or ``"an"`` before ``phrase`` by its first sound: acronyms by their first
    letter's name ("an ACL tear", "a UTI", "an MRI"), "a urinary", "a euthyroid", "an ulcerative",
    "an hour"; ``"a"`` before nothing."""
    word = phrase.split()[0] if phrase.strip() else ""
    letters = word.rstrip("s") if word[:1].isupper() else word
    if len(letters) > 1 and letters[:2].isupper():
        return "an" if letters[0] in _VOWEL_LETTER_NAMES else "a"
    low = word.lower()
    if low.startswith(_CONSONANT_SOUND):
        return "a"
    if low.startswith(_VOWEL_SOUND):
        return "an"
    return "an" if low[:1] in set("aeiou") else "a"
