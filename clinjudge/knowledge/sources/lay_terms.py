"""Patient (lay) language mapped to clinical terms: ``data/lay_terms.csv`` (hand-curated).

Each row gives ``LAY:<lay term>`` (kind ``lay_term``) with one ``("lay_for", "TERM:<clinical>")``
per clinical reading; the lexicon merges a lay term into its target's class only when it has a
single reading ("heart attack" = myocardial infarction), and otherwise keeps it related to each
("sugar" -> glucose, diabetes mellitus). Every clinical target is also yielded as a curated
concept of the row's kind, so a target that no ontology carries ("abdomen") still exists.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from clinjudge.knowledge.bundled import data_path, read_csv
from clinjudge.knowledge.concept import KINDS, Concept, term_ref
from clinjudge.knowledge.sources.curated import curated_concept

SOURCE = "lay_terms"
DATA_FILE = "lay_terms.csv"


def iter_concepts(path: Path | None = None) -> Iterator[Concept]:
    targets: dict[str, str] = {}
    for row in read_csv(path or data_path(DATA_FILE)):
        if row["kind"] not in KINDS:
            raise ValueError(f"{DATA_FILE}: unknown kind {row['kind']!r} for {row['lay_term']!r}")
        readings = [t.strip() for t in row["clinical_term"].split("|") if t.strip()]
        for reading in readings:
            targets.setdefault(reading, row["kind"])
        yield Concept(
            id="LAY:" + " ".join(row["lay_term"].lower().split()),
            source=SOURCE,
            kind="lay_term",
            preferred=row["lay_term"],
            relations=tuple(("lay_for", term_ref(r)) for r in readings),
        )
    for text, kind in targets.items():
        yield curated_concept(text, kind)
