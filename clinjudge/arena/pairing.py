"""Which pairs of systems the arena judges for each encounter (issue 25).

All pairs by default: for an encounter with notes from *n* systems, the n(n−1)/2 pairs, in the
order the systems are listed. With ``per_item = m``, ``m`` of them (all when there are fewer)
drawn uniformly without replacement by a ``random.Random`` seeded with
``"<seed>:<encounter>"`` — the same pairs for the same encounter whatever else is in the
dataset, and the same on a resumed run. A pair is an :class:`~clinjudge.datasets.items.Item`
whose id is ``<encounter>/<a>~<b>`` and whose meta names the two texts' item ids.
"""

from __future__ import annotations

import random
from itertools import combinations

from clinjudge.datasets.items import Item
from clinjudge.datasets.loader import SYSTEM_SEP


def arena_pairs(
    items: list[Item], systems: list[str], *, per_item: int | None = None, seed: int = 0
) -> list[Item]:
    """The pairs to judge (module docstring), encounters in order of first appearance."""
    by_encounter: dict[str, dict[str, Item]] = {}
    for item in items:
        system = str(item.meta.get("system"))
        if system in systems:
            by_encounter.setdefault(str(item.meta["encounter"]), {})[system] = item
    pairs: list[Item] = []
    for encounter, notes in by_encounter.items():
        present = [s for s in systems if s in notes]
        chosen = list(combinations(present, 2))
        if per_item is not None and per_item < len(chosen):
            picked = random.Random(f"{seed}:{encounter}").sample(range(len(chosen)), per_item)
            chosen = [chosen[i] for i in sorted(picked)]
        for a, b in chosen:
            pairs.append(
                Item(
                    id=f"{encounter}{SYSTEM_SEP}{a}~{b}",
                    transcript=notes[a].transcript,
                    note="",
                    meta={
                        "encounter": encounter,
                        "system_a": a,
                        "system_b": b,
                        "a": notes[a].id,
                        "b": notes[b].id,
                    },
                )
            )
    return pairs
