"""The error-injection taxonomy as data (SPEC §5): the 13 error types and the legitimate-rewrite
types, read from ``clinjudge/inject/data/taxonomy.toml`` (stdlib ``tomllib``).

    >>> from clinjudge.inject.taxonomy import TAXONOMY, select_types
    >>> TAXONOMY["dosage"].limits.destroy, TAXONOMY["dosage"].injectors
    >>> select_types("errors")            # every error type; also "all", "rewrites", "a,b"

Each :class:`InjectionType` has an id, a kind (``error`` | ``rewrite``), a definition, an example
(before → after), its edit-shape limits (:class:`~clinjudge.inject.shape.ShapeLimits`:
DESTROY, WRITE, SENTENCES, LENGTH, regions), whether it is mechanical, and the offline
injectors implementing it (names of :data:`clinjudge.inject.injectors.INJECTORS`). Loading
validates the file: every injector exists and is of the type's kind, and ``mechanical`` holds
exactly when there are injectors.
"""

from __future__ import annotations

import hashlib
import tomllib
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from clinjudge.inject.shape import ShapeLimits

TAXONOMY_FILE = "taxonomy.toml"
#: Names usable in a type selection besides the type ids.
GROUPS = ("all", "errors", "rewrites")


class TaxonomyError(ValueError):
    """The taxonomy file is inconsistent, or a type selection names an unknown type."""


class InjectionType(BaseModel):
    """One error or rewrite type (module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    kind: Literal["error", "rewrite"]
    name: str
    definition: str
    example_before: str
    example_after: str
    limits: ShapeLimits
    mechanical: bool
    injectors: tuple[str, ...] = ()

    @property
    def example(self) -> str:
        """``before → after``, as shown to a model."""
        return f"{self.example_before!r} → {self.example_after!r}"


def parse_taxonomy(text: str) -> dict[str, InjectionType]:
    """Types of a taxonomy TOML document, in file order; raises :class:`TaxonomyError` naming
    the first problem (bad field, unknown injector, kind mismatch, ``mechanical`` mismatch)."""
    from clinjudge.inject.injectors import INJECTORS

    try:
        raw = tomllib.loads(text).get("types", {})
    except tomllib.TOMLDecodeError as exc:
        raise TaxonomyError(f"taxonomy is not TOML: {exc}") from None
    types: dict[str, InjectionType] = {}
    for type_id, fields in raw.items():
        try:
            t = InjectionType(id=type_id, **fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise TaxonomyError(f"taxonomy type {type_id!r}: {where}: {first['msg']}") from None
        for name in t.injectors:
            if name not in INJECTORS:
                raise TaxonomyError(f"taxonomy type {type_id!r}: unknown injector {name!r}")
            if INJECTORS[name].kind != t.kind:
                raise TaxonomyError(
                    f"taxonomy type {type_id!r}: injector {name!r} is not a {t.kind}"
                )
        if t.mechanical != bool(t.injectors):
            raise TaxonomyError(
                f"taxonomy type {type_id!r}: mechanical must be true exactly when it has injectors"
            )
        types[type_id] = t
    if not types:
        raise TaxonomyError("taxonomy has no [types.*] tables")
    return types


def _taxonomy_text() -> str:
    return resources.files("clinjudge.inject").joinpath("data", TAXONOMY_FILE).read_text("utf-8")


def taxonomy_sha256() -> str:
    """SHA-256 of the bundled taxonomy file (recorded in every run's provenance)."""
    return hashlib.sha256(_taxonomy_text().encode("utf-8")).hexdigest()


@lru_cache(maxsize=1)
def load_taxonomy() -> dict[str, InjectionType]:
    """The bundled taxonomy (package data), parsed once."""
    return parse_taxonomy(_taxonomy_text())


def error_types() -> tuple[str, ...]:
    return tuple(t for t, v in load_taxonomy().items() if v.kind == "error")


def rewrite_types() -> tuple[str, ...]:
    return tuple(t for t, v in load_taxonomy().items() if v.kind == "rewrite")


def mechanical_types() -> tuple[str, ...]:
    return tuple(t for t, v in load_taxonomy().items() if v.mechanical)


def select_types(spec: str, *, offline: bool = False) -> list[str]:
    """Type ids of a selection: ``all``, ``errors``, ``rewrites`` or a comma list of type ids
    and groups (duplicates dropped, order kept). With ``offline`` a group stands for its
    mechanical members only, and a named type without an offline injector is an error.
    Raises :class:`TaxonomyError` naming the unknown type and listing the valid names."""
    taxonomy = load_taxonomy()
    groups = {"all": tuple(taxonomy), "errors": error_types(), "rewrites": rewrite_types()}
    valid = ", ".join([*GROUPS, *taxonomy])
    chosen: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part in groups:
            chosen += [t for t in groups[part] if taxonomy[t].mechanical or not offline]
        elif part in taxonomy:
            if offline and not taxonomy[part].mechanical:
                raise TaxonomyError(
                    f"type {part!r} has no offline injector (offline types: "
                    f"{', '.join(mechanical_types())}); use --backend llm"
                )
            chosen.append(part)
        else:
            raise TaxonomyError(f"unknown injection type {part!r}; valid: {valid}")
    if not chosen:
        raise TaxonomyError(f"no injection type selected; valid: {valid}")
    return list(dict.fromkeys(chosen))


#: The bundled taxonomy by type id.
TAXONOMY: dict[str, InjectionType] = load_taxonomy()
