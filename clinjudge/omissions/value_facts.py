"""Facts that are numbers: a medication's dose and a vital sign's value (SPEC §9 "Omissions":
"medication with dose and frequency", "results").

* **dose facts** — a sentence naming one drug and a dose (``40 milligrams``) gives the fact
  "<drug> <dose>" (attribute ``dose``) beside the drug's own fact, so that a note naming the
  drug without its dose omits the dose; every dose the visit gives the drug is kept (a dose
  talked about, then changed: the note may state either). Critical when the drug fact is (a
  medication change).
* **value facts** — every vital of the transcript (:func:`~clinjudge.text.quantities.
  extract_quantities` kind ``vital``: ``160/87`` mmHg, ``110`` bpm, ``101.2`` °F, ``94%``),
  once per distinct value, attribute ``value``, category ``result``. Critical when abnormal
  (:func:`abnormal_vital`).

:func:`abnormal_vital` (adult thresholds, hand-written for clinjudge):

    blood pressure  systolic ≥ 140 or < 90, or diastolic ≥ 90      (mmHg)
    heart rate      > 100 or < 50                                  (bpm)
    temperature     ≥ 100.4 °F (38.0 °C)
    SpO2            < 92 %
"""

from __future__ import annotations

from dataclasses import replace

from clinjudge.omissions.fact import VisitFact
from clinjudge.text.quantities import Quantity

VITAL_NAMES = {
    "mmhg": "blood pressure",
    "bpm": "heart rate",
    "degf": "temperature",
    "degc": "temperature",
    "%": "oxygen saturation",
}


def abnormal_vital(q: Quantity) -> bool:
    """Whether the vital is outside the adult thresholds (module docstring)."""
    if q.unit == "mmhg":
        return q.value >= 140 or q.value < 90 or (q.value2 is not None and q.value2 >= 90)
    if q.unit == "bpm":
        return q.value > 100 or q.value < 50
    if q.unit == "degf":
        return q.value >= 100.4
    if q.unit == "degc":
        return q.value >= 38.0
    if q.unit == "%":
        return q.value < 92
    return False


def dose_fact(drug: VisitFact, doses: list[Quantity]) -> VisitFact:
    """The dose fact of a drug fact read from a sentence with these dose quantities."""
    return replace(
        drug,
        text=f"{drug.surface} {doses[0].text}",
        attribute="dose",
        quantities=tuple(doses),
    )


def merge_doses(kept: VisitFact, new: VisitFact) -> VisitFact:
    """One dose fact of two sentences: every dose given, either's critical reason."""
    why = kept.why_critical or new.why_critical
    doses = (*kept.quantities, *(q for q in new.quantities if q not in kept.quantities))
    return replace(
        kept, quantities=doses, why_critical=why, importance="critical" if why else "routine"
    )


def vital_facts(
    sentence: str, span: tuple[int, int], quantities: list[Quantity]
) -> list[VisitFact]:
    """The sentence's vitals as value facts (unnumbered)."""
    out = []
    for q in quantities:
        if q.kind != "vital" or q.unit not in VITAL_NAMES:
            continue
        abnormal = abnormal_vital(q)
        out.append(
            VisitFact(
                id="",
                category="result",
                text=f"{VITAL_NAMES[q.unit]} {value_text(q)}",
                importance="critical" if abnormal else "routine",
                quote=sentence,
                spans=(span,),
                surface=VITAL_NAMES[q.unit],
                why_critical="abnormal vital sign" if abnormal else "",
                attribute="value",
                quantities=(q,),
            )
        )
    return out


UNIT_TEXT = {"mmhg": "", "bpm": " bpm", "degf": " °F", "degc": " °C", "%": "%"}


def value_text(q: Quantity) -> str:
    """The value as a note writes it: "150/95", "110 bpm", "101.2 °F", "94%"."""
    second = f"/{q.value2:g}" if q.value2 is not None else ""
    return f"{q.value:g}{second}{UNIT_TEXT.get(q.unit, '')}"


def value_key(q: Quantity) -> tuple[str, float, float | None]:
    return (q.unit, q.value, q.value2)
