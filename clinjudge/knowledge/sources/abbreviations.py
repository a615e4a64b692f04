"""Clinical abbreviations (Medical Abbreviation and Acronym Meta-Inventory sources, CC BY 4.0).

``data/abbreviations.jsonl.gz`` holds one object per abbreviation, derived by
:func:`derive_rows` from the clinical source inventories: Vanderbilt clinic notes and discharge
summaries (with sense frequencies), Stetson sign-out notes (``sense_distribution_448``), the
Wikipedia list and the Columbia obstetric list. Berman's 12k pathology list is left out: it is
pathology- and taxonomy-specific (``a baumannii``) and would only add noise senses.

Ambiguity is kept: an abbreviation lists every sense that survives the junk filter, each as
``("expands_to", "TERM:<sense>")``, most frequent first; the caller decides by context.
Junk filter: short forms with fewer than two letters/digits or with spaces; senses marked
"not an acronym/abbreviation", typos (``?``), senses no longer than the short form; corpus
senses with a frequency below 1 %. Parenthesised remarks are dropped from senses
(``ethanol (aka alcohol)`` -> ``ethanol``); slash-joined senses are split.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from clinjudge.knowledge.bundled import data_path, read_jsonl_gz
from clinjudge.knowledge.concept import Concept, term_ref
from clinjudge.knowledge.normalize import key

SOURCE = "abbreviations"
DATA_FILE = "abbreviations.jsonl.gz"
MIN_FREQUENCY = 0.01

_JUNK_SENSE = re.compile(r"not an? (acronym|abbreviation)|typo|\?|^unknown$|^other$", re.I)
_PAREN = re.compile(r"(?<!\s)\s*\([^()]*\)")


def clean_sense(sense: str) -> str:
    return " ".join(_PAREN.sub("", sense).split()).strip(" ,;")


def split_sense(sense: str) -> list[str]:
    """``"pro re nata/as needed"`` -> both senses; a slash inside a short word stays."""
    parts = [p.strip() for p in sense.split("/")]
    return parts if len(parts) > 1 and all(len(p) >= 3 for p in parts) else [sense]


def _valid(short: str, sense: str) -> bool:
    alnum = sum(c.isalnum() for c in short)
    return (
        alnum >= 2
        and " " not in short.strip()
        and len(short) <= 12
        and not _JUNK_SENSE.search(sense)
        and len(sense) > len(short)
        and key(sense) != key(short)
    )


def _corpus_rows(path: Path, source: str) -> Iterator[tuple[str, str, str, float, list[str]]]:
    """Vanderbilt files: abbreviation, sense, variation (``HTN_19|htn_1``), CUI, frequency."""
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            forms = [v.rsplit("_", 1)[0] for v in (row.get("variation") or "").split("|") if v]
            yield row["abbreviation"], row["sense"], source, float(row["frequency"] or 0), forms


def _raw_rows(src: Path) -> Iterator[tuple[str, str, str, float, list[str]]]:
    for name, source in (
        ("vanderbilt_clinic_notes.txt", "vanderbilt_clinic"),
        ("vanderbilt_discharge_sums.txt", "vanderbilt_discharge"),
    ):
        yield from _corpus_rows(src / name, source)
    with open(src / "sense_distribution_448.txt", encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3:
                yield parts[0], parts[1], "stetson", float(parts[2]), []
    with open(src / "wikipedia_abbreviation_database.csv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            yield row["abr"], row["long_form"], "wikipedia", 1.0, [row["abr"]]
    with open(src / "obgyn.txt", encoding="utf-8") as fh:
        for line in fh:
            short, _, sense = line.strip().partition(" ")
            if short and sense:
                yield short, sense, "columbia_obgyn", 1.0, [short]


def derive_rows(src: Path) -> Iterator[dict]:
    """Compact rows ``{"abbr", "forms", "senses": [{"text", "sources", "freq"}]}`` grouped by
    the normalised short form; ``abbr`` is the most often written form (upper case if unseen)."""
    forms: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    senses: dict[str, dict[str, dict]] = defaultdict(dict)
    for short, raw_sense, source, freq, written in _raw_rows(src):
        short = short.strip()
        for sense in split_sense(clean_sense(raw_sense)):
            if not _valid(short, sense) or freq < MIN_FREQUENCY:
                continue
            k = key(short)
            for form in written or [short.upper()]:
                forms[k][form.strip()] += 1
            entry = senses[k].setdefault(key(sense), {"text": sense, "sources": set(), "freq": 0})
            entry["sources"].add(source)
            entry["freq"] = max(entry["freq"], freq)
    for k in sorted(senses):
        ranked = sorted(senses[k].values(), key=lambda s: (-s["freq"], -len(s["sources"])))
        written = sorted(forms[k].items(), key=lambda kv: (-kv[1], kv[0]))
        yield {
            "abbr": written[0][0],
            "forms": [f for f, _ in written],
            "senses": [
                {"text": s["text"], "sources": sorted(s["sources"]), "freq": round(s["freq"], 4)}
                for s in ranked
            ],
        }


def iter_concepts(path: Path | None = None) -> Iterator[Concept]:
    """``ABBR:<abbr>`` concepts, kind ``abbreviation``, one ``expands_to`` per sense."""
    for row in read_jsonl_gz(path or data_path(DATA_FILE)):
        yield Concept(
            id="ABBR:" + row["abbr"],
            source=SOURCE,
            kind="abbreviation",
            preferred=row["abbr"],
            synonyms=tuple(f for f in row["forms"] if f != row["abbr"]),
            relations=tuple(("expands_to", term_ref(s["text"])) for s in row["senses"]),
        )
