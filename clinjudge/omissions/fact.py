"""A fact of a visit (SPEC §9 "Omissions"), as the omission judge's readers give it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from clinjudge.text.quantities import Quantity

Category = Literal[
    "allergy",
    "medication",
    "result",
    "diagnosis",
    "exam finding",
    "symptom",
    "history",
    "plan",
    "follow-up",
    "return precaution",
]
Importance = Literal["critical", "routine"]
Polarity = Literal["affirmed", "denied"]

Attribute = Literal["", "dose", "value"]


@dataclass(frozen=True)
class VisitFact:
    """One fact of the visit; ``spans`` index the raw transcript text, first mention first."""

    id: str
    category: Category
    text: str
    importance: Importance
    polarity: Polarity = "affirmed"
    quote: str = ""
    spans: tuple[tuple[int, int], ...] = ()
    canonical: tuple[str, ...] = ()
    surface: str = ""
    #: why it is critical ("red-flag symptom", "allergy" …); "" for a routine fact
    why_critical: str = ""
    #: "dose": the fact is a drug's dose; "value": a vital sign's value; "" otherwise
    attribute: Attribute = ""
    #: the doses (attribute dose) or the value (attribute value) the visit gave
    quantities: tuple[Quantity, ...] = ()
