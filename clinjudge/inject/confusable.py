"""The curated table of confusable diagnoses (``data/confusable_diagnoses.toml``) resolved in
the knowledge base: the groups a wrong-diagnosis swap draws its alternatives from
(:mod:`clinjudge.inject.diagnoses`)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from clinjudge.knowledge.base import KnowledgeBase

TABLE_FILE = "confusable_diagnoses.toml"


@dataclass(frozen=True)
class Diagnosis:
    """A table member: ``name`` as written into a note, ``kb_term`` the knowledge-base term it
    resolves to, ``abbr`` its usual abbreviation, ``ids`` its canonical disease concept ids."""

    name: str
    kb_term: str
    abbr: str
    ids: frozenset[str]


@dataclass(frozen=True)
class ConfusableGroup:
    """Diagnoses a clinician could confuse for one another in one presentation."""

    presentation: str
    sites: tuple[str, ...]
    not_after: tuple[str, ...]
    transcript: tuple[str, ...]
    members: tuple[Diagnosis, ...]


def read_table() -> list[dict]:
    """The raw ``[[group]]`` tables of ``data/confusable_diagnoses.toml``."""
    text = resources.files("clinjudge.inject").joinpath("data", TABLE_FILE).read_text("utf-8")
    return tomllib.loads(text)["group"]


def disease_ids(kb: KnowledgeBase, term: str) -> frozenset[str]:
    """Canonical ids of the disease concepts carrying ``term`` (empty when none): the classes
    it represents when it is a class representative's name, else every class it belongs to.
    "osteoarthritis" is also a synonym inside ICD-10 M19.90, merged into the *arthritis* class;
    that class is not osteoarthritis's."""
    concepts = [c for c in kb.lookup(term) if c.kind == "disease"]
    own = frozenset(c.id for c in concepts if kb.canonical(c.id) == c.id)
    return own or frozenset(kb.canonical(c.id) for c in concepts)


@lru_cache(maxsize=4)
def confusable_groups(kb: KnowledgeBase) -> tuple[ConfusableGroup, ...]:
    """The curated groups with every member resolved in ``kb``. A member that does not resolve
    to a disease concept is left out (the tests require that none is); a concept class that
    members of different knowledge-base terms resolve to identifies none of them ("fracture"
    and "contusion" both carry ICD-10 T14.8 "other injury"), so it is dropped from each: such
    a member is then found by its written name only."""
    raw_groups = []
    for raw in read_table():
        entries = [{"name": e} if isinstance(e, str) else e for e in raw["members"]]
        raw_groups.append((raw, [(e, disease_ids(kb, e.get("kb", e["name"]))) for e in entries]))
    owners: dict[str, set[str]] = {}
    for _, entries in raw_groups:
        for e, ids in entries:
            for i in ids:
                owners.setdefault(i, set()).add(e.get("kb", e["name"]))
    groups = []
    for raw, entries in raw_groups:
        members = tuple(
            Diagnosis(
                e["name"],
                e.get("kb", e["name"]),
                e.get("abbr", ""),
                frozenset(i for i in ids if len(owners[i]) == 1),
            )
            for e, ids in entries
            if ids
        )
        if len(members) > 1:
            sites, said = tuple(raw.get("sites", ())), tuple(raw.get("transcript", ()))
            not_after = tuple(raw.get("not_after", ()))
            groups.append(ConfusableGroup(raw["presentation"], sites, not_after, said, members))
    return tuple(groups)
