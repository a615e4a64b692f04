"""Hand-curated clinical terms and relations (``data/clinical_relations.csv``, Apache-2.0).

A curated term is a concept ``CUR:<text>`` with ``("same_as", "TERM:<text>")``: the lexicon
merges it into the one class that already carries that surface form, or keeps it as the concept
of that term when no source has it (``abdomen``, ``peripheral edema``). Its other relations
(``has_symptom``, ``associated_with``, ``is_a``, ``treated_by``) point at ``TERM:`` targets
too, so they attach to whatever ICD-10-CM, Disease/Symptom Ontology or SNOMED CT concepts carry
those words.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from clinjudge.knowledge.bundled import data_path, read_csv
from clinjudge.knowledge.concept import Concept, term_ref

SOURCE = "curated"
DATA_FILE = "clinical_relations.csv"

#: Kind of the subject and of the object of each curated relation.
_KINDS = {
    "has_symptom": ("disease", "symptom"),
    "associated_with": ("disease", "finding"),
    "is_a": ("disease", "disease"),
    "treated_by": ("disease", "drug"),
}


def curated_id(text: str) -> str:
    return "CUR:" + " ".join(text.lower().split())


def curated_concept(text: str, kind: str, relations: tuple[tuple[str, str], ...] = ()) -> Concept:
    """The curated concept of a clinical term (see module docstring)."""
    return Concept(
        id=curated_id(text),
        source=SOURCE,
        kind=kind,
        preferred=text.strip(),
        relations=(("same_as", term_ref(text)), *relations),
    )


def iter_concepts(path: Path | None = None) -> Iterator[Concept]:
    """One concept per distinct subject or object of the relations file."""
    kinds: dict[str, str] = {}
    texts: dict[str, str] = {}
    relations: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for row in read_csv(path or data_path(DATA_FILE)):
        relation = row["relation"]
        if relation not in _KINDS:
            raise ValueError(f"{DATA_FILE}: unknown relation {relation!r}")
        subject_kind, object_kind = _KINDS[relation]
        subject, obj = curated_id(row["subject"]), curated_id(row["object"])
        texts.setdefault(subject, row["subject"])
        texts.setdefault(obj, row["object"])
        kinds.setdefault(subject, subject_kind)
        kinds.setdefault(obj, object_kind)
        relations[subject].append((relation, term_ref(row["object"])))
    for cid, text in texts.items():
        yield curated_concept(text, kinds[cid], tuple(relations.get(cid, ())))
