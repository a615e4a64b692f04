"""Drug concepts: generics, brand names and classes.

Sources
- the dictionary shipped by PyPI ``drug-named-entity-recognition`` (MIT; DrugBank open data
  CC0, MeSH, MedlinePlus, NHS and Wikipedia names; 20k drugs, 107k surface forms), read from the
  installed package at build time, never copied into ours;
- ``data/drug_brands.csv`` (hand-curated brand -> generic) and ``data/drug_brands_nhs.csv``
  (brand names in NHS medicine titles, Open Government Licence v3.0, see :func:`derive_nhs_rows`);
- ``data/drug_classes.csv`` (hand-curated classes with members and parent classes).

Concepts: ``DRUG:<canonical name>`` (kind ``drug``) with every surface form of the dictionary as a
synonym plus its brand names; ``BRAND:<brand>`` with ``("brand_of", "DRUG:<generic>")`` (one
relation per ingredient of a combination written ``a + b``); ``DRUGCLASS:<id>`` (kind
``drug_class``) with ``is_a`` its parent class; generics carry ``("in_class", "DRUGCLASS:<id>")``.
A curated brand overrides the dictionary when they disagree (``Synthroid`` is levothyroxine, not
the dictionary's ``thyroxine`` entry). A generic with a MedlinePlus monograph keeps
``("xref", "MEDLINEPLUS:<id>")``; the semantic index uses it to pick the common drugs.
"""

from __future__ import annotations

import bz2
import json
import pickle
import re
from collections import defaultdict
from collections.abc import Iterator
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path

from clinjudge.knowledge.bundled import data_path, read_csv
from clinjudge.knowledge.concept import Concept

SOURCE = "drugs"
PACKAGE = "drug-named-entity-recognition"
DICTIONARY_FILE = "drug_ner_dictionary.pkl.bz2"


def package_version() -> str:
    return version(PACKAGE)


def dictionary_path() -> Path:
    """Path of the installed package's dictionary, found without importing the package (its
    import loads the dictionary a second time and touches ``~/.omop_cache.pkl``)."""
    spec = find_spec("drug_named_entity_recognition")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{PACKAGE} is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / DICTIONARY_FILE


def load_dictionary(path: Path | None = None) -> tuple[dict, dict, dict]:
    """``(variant -> [canonical], canonical -> data, variant -> {"is_brand": bool})``."""
    with bz2.open(path or dictionary_path(), "rb") as fh:
        raw = pickle.load(fh)  # noqa: S301 - the installed package's own data file
    return (
        raw["drug_variant_to_canonical"],
        raw["drug_canonical_to_data"],
        raw["drug_variant_to_variant_data"],
    )


def drug_id(canonical: str) -> str:
    return "DRUG:" + canonical


_NHS_QUALIFIER = re.compile(
    r"(?<!\s)\s+(for|tablets|capsules|inhalers?|gel|cream|skin|nasal|eye|ear|rectal|injections?|"
    r"liquid|patches)\b.*$",
    re.I,
)


#: An NHS title "Generic (Brand)"; the generic ends at a non-blank (a lazy generic followed by
#: ``\s*`` re-read a run of blanks once per character).
_TITLE = re.compile(r"(?P<generic>[^()]*?[^()\s])\s*\((?P<brand>[^()]+)\)\s*")


def derive_nhs_rows(nhs_json: Path, variants: dict[str, list[str]]) -> Iterator[dict]:
    """Brand names from NHS medicine titles such as ``"Fluoxetine (Prozac)"``: the bracketed
    word must be capitalised, lower case after its first letter (not ``GTN``, ``PrEP``), and the
    title's generic must resolve in the drug dictionary."""
    seen = set()
    for item in json.loads(nhs_json.read_text(encoding="utf-8")):
        match = _TITLE.fullmatch(item["name"])
        if not match:
            continue
        brand = match["brand"].strip()
        if not brand[:1].isupper() or not brand[1:].islower() or " " in brand:
            continue
        generic = _NHS_QUALIFIER.sub("", match["generic"]).strip().lower()
        if generic in variants and brand.lower() not in seen:
            seen.add(brand.lower())
            yield {"brand": brand, "generic": generic}


_JUNK_VARIANT = re.compile(r"&lt;|&gt;|&quot;|\{\{|\}\}|=|\[|\]|\||https?:|<|>")


def is_junk_variant(variant: str) -> bool:
    """Wiki markup and other extraction debris among the dictionary's variants."""
    return len(variant) > 80 or bool(_JUNK_VARIANT.search(variant))


def _resolve(name: str, variants: dict, canonicals: dict) -> str | None:
    name = name.strip().lower()
    if name in variants:
        return variants[name][0]
    return name if name in canonicals else None


def _brands(variants: dict, canonicals: dict, variant_data: dict) -> dict[str, list[str]]:
    """Brand display form -> generic canonical names (curated first, then NHS, then the
    dictionary's own ``is_brand`` flags)."""
    brands: dict[str, list[str]] = {}
    seen: set[str] = set()
    for name in ("drug_brands.csv", "drug_brands_nhs.csv"):
        path = data_path(name)
        if not path.exists():
            continue
        for row in read_csv(path):
            parts = [_resolve(g, variants, canonicals) for g in row["generic"].split(" + ")]
            if row["brand"].lower() in seen or not all(parts):
                continue
            seen.add(row["brand"].lower())
            brands[row["brand"]] = [p for p in parts if p]
    for variant, data in variant_data.items():
        if data.get("is_brand") and variant not in seen and variant in variants:
            seen.add(variant)
            brands[variant] = [variants[variant][0]]
    return brands


def iter_class_concepts() -> Iterator[Concept]:
    """``DRUGCLASS:`` concepts of ``data/drug_classes.csv``."""
    for row in read_csv(data_path("drug_classes.csv")):
        synonyms = tuple(s for s in row["synonyms"].split("|") if s)
        parent = (("is_a", "DRUGCLASS:" + row["parent"]),) if row["parent"] else ()
        yield Concept(
            id="DRUGCLASS:" + row["id"],
            source=SOURCE,
            kind="drug_class",
            preferred=row["name"],
            synonyms=synonyms,
            relations=parent,
        )


def iter_concepts(dictionary: Path | None = None) -> Iterator[Concept]:
    """Generic, brand and class concepts (module docstring)."""
    variants, canonicals, variant_data = load_dictionary(dictionary)
    brands = _brands(variants, canonicals, variant_data)
    surfaces: dict[str, list[str]] = defaultdict(list)
    overridden = {b.lower(): gs for b, gs in brands.items()}
    for variant, (canonical, *_) in variants.items():
        if is_junk_variant(variant):
            continue
        owner = overridden.get(variant)
        if owner is not None and canonical not in owner:
            continue  # the curated brand list says this name belongs to another drug
        surfaces[canonical].append(variant)
    for brand, generics in brands.items():
        if len(generics) == 1 and brand not in surfaces[generics[0]]:
            surfaces[generics[0]].append(brand)
    classes: dict[str, list[str]] = defaultdict(list)
    for row in read_csv(data_path("drug_classes.csv")):
        for member in filter(None, row["members"].split("|")):
            canonical = _resolve(member, variants, canonicals)
            if canonical:
                classes[canonical].append("DRUGCLASS:" + row["id"])
    for canonical, data in canonicals.items():
        relations = [("in_class", c) for c in dict.fromkeys(classes.get(canonical, []))]
        if data.get("medline_plus_id"):
            relations.append(("xref", "MEDLINEPLUS:" + data["medline_plus_id"]))
        preferred = data.get("name") or canonical
        yield Concept(
            id=drug_id(canonical),
            source=SOURCE,
            kind="drug",
            preferred=preferred,
            synonyms=tuple(s for s in dict.fromkeys(surfaces.get(canonical, [])) if s != preferred),
            relations=tuple(relations),
        )
    for brand, generics in brands.items():
        yield Concept(
            id="BRAND:" + brand.lower(),
            source=SOURCE,
            kind="drug",
            preferred=brand,
            relations=tuple(("brand_of", drug_id(g)) for g in generics),
        )
    yield from iter_class_concepts()
