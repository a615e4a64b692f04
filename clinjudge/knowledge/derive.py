"""Regenerate the bundled knowledge files from the raw public sources (maintainers only).

    python -m clinjudge.knowledge.derive RAW_DATA_DIR

``RAW_DATA_DIR`` holds the upstream files laid out as in the project's development data
(``disease-ontology/``, ``symptom-ontology/``, ``clinical-abbreviations/``, ``drug-names/``; see
``data/PROVENANCE.md`` for repositories and commits). Each source module owns its derivation
(``derive_rows``); this script only wires them to the output files.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from clinjudge.knowledge.bundled import data_path, write_jsonl_gz
from clinjudge.knowledge.sources import abbreviations, disease_ontology, drugs, symptom_ontology


def derive_all(raw: Path, out_dir: Path | None = None) -> dict[str, int]:
    """Write every derived file; returns rows written per file."""
    out = out_dir or data_path("")
    counts = {}
    do = raw / "disease-ontology"
    counts[disease_ontology.DATA_FILE] = write_jsonl_gz(
        out / disease_ontology.DATA_FILE,
        disease_ontology.derive_rows(
            do / "do_terms_synonyms_xrefs.jsonl", do / "reports" / "disease-symptom.tsv"
        ),
    )
    counts[symptom_ontology.DATA_FILE] = write_jsonl_gz(
        out / symptom_ontology.DATA_FILE,
        symptom_ontology.derive_rows(raw / "symptom-ontology" / "symp.obo"),
    )
    counts[abbreviations.DATA_FILE] = write_jsonl_gz(
        out / abbreviations.DATA_FILE,
        abbreviations.derive_rows(raw / "clinical-abbreviations"),
    )
    variants, _, _ = drugs.load_dictionary()
    rows = list(drugs.derive_nhs_rows(raw / "drug-names" / "all_nhs_drugs.json", variants))
    with open(out / "drug_brands_nhs.csv", "w", encoding="utf-8", newline="") as fh:
        fh.write(
            "# Brand names in NHS medicine titles (nhs.uk medicines A-Z), Open Government Licence"
            " v3.0.\n# Derived by clinjudge.knowledge.derive; see PROVENANCE.md.\n"
        )
        writer = csv.DictWriter(fh, fieldnames=["brand", "generic"], lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    counts["drug_brands_nhs.csv"] = len(rows)
    return counts


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m clinjudge.knowledge.derive RAW_DATA_DIR", file=sys.stderr)
        return 2
    for name, n in derive_all(Path(args[0])).items():
        print(f"{name}: {n} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
