"""Mechanical errors that swap one stated detail for a sibling (SPEC §5 offline injectors:
"drug swap within … class"; taxonomy types ``wrong_drug`` and ``timing_duration``).

* ``drug_swap`` — a drug the note names and the transcript names too (same concept class)
  → another member of the same drug class in the knowledge layer's curated class table
  (``drug_classes.csv``: lisinopril → enalapril, meloxicam → naproxen), a drug that neither the
  transcript nor the note names under any name. The dose is left as written: the error is the
  drug. Abbreviation-like mentions and combination products are skipped; a brand mid-sentence
  ("taking the Imitrex") becomes a lower-case generic ("taking the frovatriptan").
* ``duration_change`` — a duration (``for 3 days``, ``two weeks ago``, ``return in 2 weeks``)
  that the transcript states → the same number of the neighbouring time unit (day ↔ week,
  week ↔ month, month ↔ year, hour → day), when no duration of the transcript reads as the new
  value. The number and its spelling are kept; only the unit word changes.
"""

from __future__ import annotations

import re
from functools import lru_cache

from clinjudge.inject.errors import named_anywhere
from clinjudge.inject.material import NoteMaterial
from clinjudge.inject.types import Edit, Perturber, match_case
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.knowledge.bundled import data_path, read_csv
from clinjudge.knowledge.concept import Mention
from clinjudge.text.quantities import extract_quantities, quantities_agree

# -- drug swap within a class ----------------------------------------------------------------


Member = tuple[str, frozenset[str]]


@lru_cache(maxsize=4)
def drug_class_members(kb: KnowledgeBase) -> tuple[tuple[str, tuple[Member, ...]], ...]:
    """``(class name, ((member name, its canonical drug concept ids), ...))`` of the curated
    drug classes; members the knowledge base does not know as drugs, combination products and
    names with a comma are left out."""
    out = []
    for row in read_csv(data_path("drug_classes.csv")):
        members = []
        for name in row["members"].split("|"):
            ids = frozenset(kb.canonical(c.id) for c in kb.lookup(name) if c.kind == "drug")
            if name and "," not in name and "+" not in name and ids:
                members.append((name, ids))
        if len(members) > 1:
            out.append((row["name"], tuple(members)))
    return tuple(out)


def _written_like(note: str, m: Mention, generic: str) -> str:
    """``generic`` in the case style of the mention it replaces; a capitalised brand ("Lasix")
    gives a lower-case generic unless it starts a sentence or a line."""
    if m.surface.isupper():
        return generic.upper()
    before = note[: m.start].rstrip(" \t")
    starts = not before or before[-1] in ".!?:\n•-*"
    if any(c.startswith("BRAND:") for c in m.concept_ids) and not starts:
        return generic
    return match_case(m.surface, generic)


def find_drug_swaps(src: NoteMaterial) -> list[Edit]:
    table = drug_class_members(src.kb)
    edits = []
    for m in src.note_mentions:
        if "drug" not in m.kinds or "abbreviation" in m.kinds or len(m.surface) < 4:
            continue
        drug = set(m.canonical)
        if not drug & src.transcript_concepts:
            continue  # the transcript must name the drug the note states
        seen: set[str] = set()
        for class_name, members in table:
            if not any(drug & ids for _, ids in members):
                continue
            for other, ids in members:
                if other in seen or drug & ids or named_anywhere(src, other):
                    continue
                seen.add(other)
                after = _written_like(src.note, m, other)
                why = (
                    f"'{m.surface}' swapped for {other} (same class: {class_name}); the "
                    f"transcript names {m.surface}, never {other}"
                )
                edits.append(Edit(m.start, m.end, after, why))
    return edits


# -- duration --------------------------------------------------------------------------------

#: Time unit → the units a duration error moves to.
UNIT_MOVES: dict[str, tuple[str, ...]] = {
    "hour": ("day",),
    "day": ("week",),
    "week": ("day", "month"),
    "month": ("week", "year"),
    "year": ("month",),
}
_UNIT_WORD = re.compile(r"(?P<unit>hour|day|week|month|year)(?P<plural>s)?$", re.I)


def find_duration_changes(src: NoteMaterial) -> list[Edit]:
    stated = [q for q in src.transcript_quantities if q.kind == "duration"]
    edits = []
    for q in extract_quantities(src.note):
        if q.kind != "duration" or q.value2 is not None or q.unit not in UNIT_MOVES:
            continue
        if not any(quantities_agree(q, t) for t in stated):
            continue
        word = _UNIT_WORD.search(q.text)
        if word is None:
            continue  # abbreviated units ("3d", "2 wks") stay as written
        for unit in UNIT_MOVES[q.unit]:
            new = unit + (word.group("plural") or "")
            new = match_case(word.group(), new)
            changed = q.text[: word.start()] + new
            (reread,) = [r for r in extract_quantities(changed) if r.kind == "duration"] or [None]
            if reread is None or quantities_agree(q, reread) is not False:
                continue
            if any(quantities_agree(reread, t) for t in stated):
                continue
            edits.append(
                Edit(
                    q.start + word.start(),
                    q.start + word.end(),
                    new,
                    f"duration '{q.text}' changed to '{changed}'; the transcript states "
                    f"'{next(t.text for t in stated if quantities_agree(q, t))}'",
                )
            )
    return edits


drug_swap = Perturber(
    "drug_swap", "error", find_drug_swaps, "a stated drug swapped for another of its class"
)
duration_change = Perturber(
    "duration_change", "error", find_duration_changes, "a stated duration's time unit changed"
)
