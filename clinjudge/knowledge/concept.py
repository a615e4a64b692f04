"""Value types of the knowledge layer: concepts, text mentions and search hits.

A :class:`Concept` is one entry of one source (ICD-10-CM code, Disease Ontology term, drug,
abbreviation, lay term, SNOMED CT concept, ...). Sources stay independent: a relation may point
at another source's id, or at ``TERM:<text>`` -- a surface string that the lexicon resolves to
concept ids once every source is loaded (see :mod:`clinjudge.knowledge.lexicon`). Concepts of
different sources that denote the same thing are merged there into one equivalence class whose
representative id is the *canonical* id (SPEC §1, tier 2: synonyms, trade/generic names,
abbreviations and lay terms are the same fact).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, overload

Kind = Literal[
    "drug",
    "disease",
    "symptom",
    "finding",
    "procedure",
    "test",
    "anatomy",
    "abbreviation",
    "lay_term",
    "drug_class",
    "other",
]
KINDS: tuple[str, ...] = Kind.__args__  # type: ignore[attr-defined]
#: Concept kinds whose presence or absence a conversation establishes.
FINDING_KINDS = frozenset({"symptom", "finding", "disease"})

#: Relation names used by the sources. ``same_as`` is always an equivalence; ``brand_of``,
#: ``expands_to``, ``lay_for`` and ``xref`` become equivalences only when unambiguous
#: (one target, one-to-one), see :func:`clinjudge.knowledge.lexicon.build_lexicon`.
RELATIONS: tuple[str, ...] = (
    "same_as",
    "is_a",
    "has_symptom",
    "xref",
    "brand_of",
    "expands_to",
    "lay_for",
    "in_class",
    "finding_site",
    "associated_with",
    "treated_by",
)

#: Prefix of a relation target that is a surface string, resolved through the lexicon.
TERM_PREFIX = "TERM:"


def term_ref(text: str) -> str:
    """Relation target standing for the concept(s) whose surface form is ``text``."""
    return TERM_PREFIX + text.strip()


@dataclass(frozen=True, slots=True)
class Concept:
    """One concept of one source.

    ``id`` is ``"<PREFIX>:<code>"`` (``ICD10CM:I21.9``, ``DOID:5844``, ``SYMP:0000001``,
    ``DRUG:lisinopril``, ``ABBR:SOB``, ``LAY:sugar``, ``SNOMED:22298006``); ``preferred`` is the
    display term; ``synonyms`` every other surface form (the preferred term is always a surface
    form too); ``relations`` are ``(relation name, target id)`` pairs.
    """

    id: str
    source: str
    kind: str
    preferred: str
    synonyms: tuple[str, ...] = ()
    relations: tuple[tuple[str, str], ...] = ()

    def surfaces(self) -> tuple[str, ...]:
        """The preferred term followed by the synonyms, without duplicates."""
        return tuple(dict.fromkeys((self.preferred, *self.synonyms)))

    def __reduce__(self) -> tuple:
        # pickled as a constructor call: a frozen slotted dataclass's default unpickling looks
        # its fields up for every one of the lexicon's ~85k concepts (seconds per load)
        fields = (self.id, self.source, self.kind, self.preferred, self.synonyms, self.relations)
        return (Concept, fields)


#: A concept's fields in declaration order: what :class:`ConceptTable` stores and pickles.
ConceptRow = tuple[str, str, str, str, tuple[str, ...], tuple[tuple[str, str], ...]]


class ConceptTable(Sequence[Concept]):
    """The lexicon's concepts, in order: kept (and pickled) as plain field tuples and made
    :class:`Concept` objects on first access. Loading the cached lexicon then costs no
    constructor call per concept (85k frozen dataclasses took most of a ``knowledge search``'s
    load); a search touches a few dozen of them."""

    __slots__ = ("_made", "_rows")

    def __init__(self, concepts: Iterable[Concept] = ()) -> None:
        made = list(concepts)
        self._rows: list[ConceptRow] = [
            (c.id, c.source, c.kind, c.preferred, c.synonyms, c.relations) for c in made
        ]
        self._made: list[Concept | None] = list(made)

    @classmethod
    def from_rows(cls, rows: list[ConceptRow]) -> ConceptTable:
        """A table over ``rows`` (field tuples); no concept is made yet."""
        table = cls()
        table._rows = rows
        table._made = [None] * len(rows)
        return table

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Concept: ...
    @overload
    def __getitem__(self, index: slice) -> list[Concept]: ...
    def __getitem__(self, index: int | slice) -> Concept | list[Concept]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._rows)))]
        made = self._made[index]
        if made is None:
            made = self._made[index] = Concept(*self._rows[index])
        return made

    def __iter__(self) -> Iterator[Concept]:
        for i in range(len(self._rows)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ConceptTable):
            return self._rows == other._rows
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking, like a list

    def __repr__(self) -> str:
        return f"ConceptTable({len(self._rows)} concepts)"

    def __reduce__(self) -> tuple:
        return (ConceptTable.from_rows, (self._rows,))


@dataclass(frozen=True, slots=True)
class Mention:
    """A concept mention found in free text: ``text[start:end] == surface``.

    ``concept_ids`` are every concept with this surface form (ambiguity is kept, e.g. an
    abbreviation and each of its senses' classes); ``canonical`` the distinct canonical ids of
    their equivalence classes, in the same order.
    """

    start: int
    end: int
    surface: str
    concept_ids: tuple[str, ...]
    kinds: tuple[str, ...]
    canonical: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Hit:
    """One concept-level result of :meth:`KnowledgeBase.search`; ``matched`` is the surface form
    that scored, ``score`` in [0, 1] (1 for an exact lexical match)."""

    concept_id: str
    preferred: str
    source: str
    kind: str
    score: float
    matched: str = field(default="")
