"""Numbers with units: doses, frequencies, durations, vitals, counts, percents (SPEC §1, safety
floor: "a specific medication, dose, frequency or duration with no equivalent in the facts" and
tier 5 "dose 20 mg where transcript says 10 mg").

Reads digits (``40 mg``, ``2.5mg``, ``1,000 units``, ``120/80``) and ASR spelled numbers
(``forty milligrams``, ``one hundred and twenty over eighty``, ``two point five``, ``a half``)
through :mod:`clinjudge.text.numbers`. Every number is first masked (``#``) in a same-length copy
of the text, so the unit patterns below see ``### mg`` whatever the spelling, and offsets stay
those of the original text.

Canonical forms: frequencies are per day (``daily``/``qd``/``at night``/``qhs`` = 1, ``bid`` /
``twice a day`` = 2, ``tid`` = 3, ``qid`` = 4, ``every 8 hours`` = 3, ``every other day`` = 0.5),
per week (``weekly``) or per month. Durations: ``for three weeks``, ``x 2 weeks``, ``3-5d`` and
the UK shorthand ``3/7`` (days), ``2/52`` (weeks), ``6/12`` (months), ``1/24`` (hours).
``value2`` is the second value of a blood pressure (``120/80``) or the upper end of a range
(``2-3``, ``six or seven``).

Libraries: ``quantulum3`` was tried and rejected — it reads ``120/80`` as 1.5, ``3/7`` as 0.43,
``bpm`` as base-pair metres and ``two point five`` as two numbers; ``pint`` is not needed for
the handful of unit factors used by :func:`quantities_agree`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from clinjudge.text.numbers import iter_numbers, lower_same_length
from clinjudge.text.spans import TakenSpans

Kind = Literal["dose", "frequency", "duration", "vital", "count", "percent", "other"]


class Quantity(BaseModel):
    """A number with its unit, as found in the text: ``text == source[start:end]``."""

    kind: Kind
    value: float
    value2: float | None = None
    unit: str = ""
    start: int
    end: int
    text: str


_N = r"(?<!#)#+(?!#)"
_RANGE = rf"(?P<a>{_N})(?:\s*(?:-|–|to|or)\s*(?P<b>{_N}))?"
_FILLER = (
    r"(?:[\s:=,~-]+(?:is|was|of|at|around|about|roughly|approximately|like|um|uh|just|been|it's"
    r"|its|today|now)\b)*[\s:=,~-]*"
)

_PER = {
    "day": "per_day", "d": "per_day", "daily": "per_day", "night": "per_day", "nightly": "per_day",
    "morning": "per_day", "evening": "per_day", "week": "per_week", "wk": "per_week",
    "weekly": "per_week", "month": "per_month", "monthly": "per_month", "hour": "per_hour",
    "hr": "per_hour", "hourly": "per_hour",
}  # fmt: skip
_DOSE_UNITS = {
    "mg": "mg", "mgs": "mg", "milligram": "mg", "milligrams": "mg", "mcg": "mcg", "µg": "mcg",
    "ug": "mcg", "microgram": "mcg", "micrograms": "mcg", "g": "g", "gm": "g", "gms": "g",
    "gram": "g", "grams": "g", "ml": "ml", "mls": "ml", "milliliter": "ml", "milliliters": "ml",
    "millilitre": "ml", "millilitres": "ml", "cc": "ml", "liter": "l", "liters": "l", "litre": "l",
    "litres": "l", "unit": "units", "units": "units", "iu": "units", "international units": "units",
    "meq": "meq", "mmol": "mmol", "tablet": "tablet", "tablets": "tablet", "tab": "tablet",
    "tabs": "tablet", "pill": "tablet", "pills": "tablet", "capsule": "capsule",
    "capsules": "capsule", "cap": "capsule", "caps": "capsule", "puff": "puff", "puffs": "puff",
    "drop": "drop", "drops": "drop", "spray": "spray", "sprays": "spray", "sachet": "sachet",
    "sachets": "sachet", "patch": "patch", "patches": "patch", "mg/kg": "mg/kg", "mcg/kg": "mcg/kg",
}  # fmt: skip
_TIME_UNITS = {
    "minute": "minute", "minutes": "minute", "min": "minute", "mins": "minute", "hour": "hour",
    "hours": "hour", "hr": "hour", "hrs": "hour", "h": "hour", "day": "day", "days": "day",
    "d": "day", "week": "week", "weeks": "week", "wk": "week", "wks": "week", "w": "week",
    "month": "month", "months": "month", "mo": "month", "mos": "month", "year": "year",
    "years": "year", "yr": "year", "yrs": "year", "y": "year",
}  # fmt: skip
_SLASH_DURATION = {7: "day", 52: "week", 12: "month", 24: "hour"}
_WORD_FREQ = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
_ALTS = {
    "dose": "|".join(sorted((re.escape(u) for u in _DOSE_UNITS), key=len, reverse=True)),
    "time": "|".join(sorted(_TIME_UNITS, key=len, reverse=True)),
}


def canonical_unit(word: str) -> str | None:
    """Canonical unit of a written unit word (``"milligrams"`` → ``"mg"``, ``"wks"`` →
    ``"week"``, ``"cc"`` → ``"ml"``); ``None`` for other words and single letters."""
    if len(word) < 2:
        return None
    return _DOSE_UNITS.get(word) or _TIME_UNITS.get(word)


Builder = Callable[[re.Match[str], dict[int, float]], tuple[Kind, float, float | None, str] | None]


def _v(m: re.Match[str], vals: dict[int, float], group: str) -> float | None:
    if group not in m.re.groupindex or not m.group(group):
        return None
    return vals[m.start(group)]


def _per_day(value: float, per: str) -> tuple[float, str]:
    unit = _PER[per]
    return (value * 24, "per_day") if unit == "per_hour" else (value, unit)


def _freq_times(m, vals):
    a, b = _v(m, vals, "a"), _v(m, vals, "b")
    va, unit = _per_day(a, m.group("per"))
    return "frequency", va, (_per_day(b, m.group("per"))[0] if b is not None else None), unit


def _freq_word(m, vals):
    v, unit = _per_day(_WORD_FREQ[m.group("w")], m.group("per"))
    return "frequency", v, None, unit


def _freq_every_hours(m, vals):
    a, b = _v(m, vals, "a"), _v(m, vals, "b")
    if not a:
        return None
    return "frequency", 24 / a, (24 / b if b else None), "per_day"


def _freq_every_n(m, vals):
    a = _v(m, vals, "a")
    unit = {"day": "per_day", "week": "per_week", "month": "per_month"}[_TIME_UNITS[m.group("u")]]
    return ("frequency", 1 / a, None, unit) if a else None


def _fixed(kind: Kind, value: float, unit: str) -> Builder:
    return lambda m, vals: (kind, value, None, unit)


def _every_other(m, vals):
    return "frequency", 0.5, None, "per_week" if (m.group("u") or "") == "week" else "per_day"


def _slash(m, vals):
    a, b = _v(m, vals, "a"), _v(m, vals, "b")
    if m.group("u") or (50 <= a <= 300 and 20 <= b <= 200 and a > b):
        return "vital", a, b, "mmhg"
    if "over" in m.group():
        return None
    if b in _SLASH_DURATION and 0 < a <= b and a.is_integer():
        return "duration", a, None, _SLASH_DURATION[int(b)]
    return _out_of(m, vals)


def _out_of(m, vals):
    a, b = _v(m, vals, "a"), _v(m, vals, "b")
    return "other", a, b, "/10" if b == 10 else "ratio"


def _keyword_vital(unit: str) -> Builder:
    return lambda m, vals: ("vital", _v(m, vals, "a"), _v(m, vals, "b"), unit)


def _temperature(m, vals):
    a = _v(m, vals, "a")
    u = (m.group("u") or "")[:1]
    if u in ("f", "c"):
        return "vital", a, None, "deg" + u
    if 90 <= a <= 110:
        return "vital", a, None, "degf"
    if 34 <= a <= 43:
        return "vital", a, None, "degc"
    return "other", a, None, "degree"


def _unit_builder(kind: Kind, table: dict[str, str] | None, group: str = "u") -> Builder:
    def build(m, vals):
        u = re.sub(r"\s+", " ", m.group(group))
        return kind, _v(m, vals, "a"), _v(m, vals, "b"), table[u] if table else u

    return build


def _weight(m, vals):
    unit = "kg" if m.group("u").startswith("k") else "lb"
    return "vital", _v(m, vals, "a"), None, unit


def _duration(m, vals):
    unit = _TIME_UNITS[m.group("u")]
    if m.group("old"):
        return ("other", _v(m, vals, "a"), None, "years_old") if unit == "year" else None
    return "duration", _v(m, vals, "a"), _v(m, vals, "b"), unit


def _indefinite_duration(m, vals):
    q = m.group("q")
    unit = _TIME_UNITS.get(m.group("u"), _TIME_UNITS.get(m.group("u").rstrip("s"), "day"))
    return "duration", 2.0 if "couple" in q else 1.0, None, unit


def _count(m, vals):
    return "count", _v(m, vals, "a"), _v(m, vals, "b"), "times"


def _count_word(m, vals):
    return "count", _WORD_FREQ[m.group("w")], None, "times"


_PER_ALT = "day|d|week|wk|month|hour|hr|night|morning|evening"
_PER_ADV = "daily|weekly|monthly|nightly|hourly"
_VITAL_KEYS = {
    "bpm": r"heart\s+rate|pulse(?:\s+rate)?|\bhr",
    "breaths_per_min": r"respiratory\s+rate|respirations|resp(?:iratory)?\s+rate|\brr",
    "%": (
        r"o[2#]\s*sat(?:uration)?s?|oxygen\s+saturation|sp\s*o[2#]|\bsats?"
        r"|pulse\s+ox(?:imetry)?|saturating"
    ),
}
_ONCE_DAILY = (
    r"\b(?:q\.?d|daily(?!\s+(?:living|activit))|every\s+(?:day|morning|evening|night)|nightly"
    r"|at\s+(?:night|bedtime)"
    r"|q\.?h\.?s|qam|qpm)\b\.?"
)
_MMHG = r"(?:\s*(?P<u>mm\s*hg|mmhg))?"
_OLD = r"[\s-]*old\b|\.?\s*o\.?(?![a-z])"  # "years old", "y.o.", "yo"
_BP = rf"(?P<a>{_N})\s*(?:/|over)\s*(?P<b>{_N}){_MMHG}"
_PER_WORD = r"(?:a|an|per|every|each)"
_LAB_UNITS = r"mg/dl|g/dl|mmol/l|mg/l|ng/ml|pg/ml|meq/l|u/l|iu/l|µmol/l|umol/l|mcg/ml"
_INDEFINITE = (
    r"\b(?:for|past|last|in|over|within|about|around|x)\s+(?:the\s+)?(?:past\s+|last\s+|next\s+)?"
    r"(?P<q>an?\s+couple(?:\s+of)?|couple(?:\s+of)?|an?)\s+(?P<u>minutes?|hours?|days?|weeks?|months?|years?)\b"
)
_TEMP_UNIT = r"(?:\s*(?:°|degrees?)\s*(?P<u>f|c|fahrenheit|celsius|centigrade)?\b)"


def _percent(m: re.Match[str], vals: dict[int, float]):
    return "percent", _v(m, vals, "a"), None, "%"


#: (pattern, builder) in priority order: an earlier match wins any overlap.
_PATTERNS: list[tuple[str, Builder]] = [
    (rf"{_RANGE}\s*(?:x|times)\s*(?:a|an|per|/|each|every)\s*(?P<per>{_PER_ALT})\b", _freq_times),
    (rf"\bx\s*{_RANGE}\s*(?:/|per|a)\s*(?P<per>{_PER_ALT})\b", _freq_times),
    (rf"{_RANGE}\s*times\s*(?P<per>{_PER_ADV})\b", _freq_times),
    (rf"\b(?P<w>once|twice|thrice)\s*{_PER_WORD}?\s*(?P<per>{_PER_ALT}|{_PER_ADV})\b", _freq_word),
    (rf"\b(?:every|q)\s*\.?\s*{_RANGE}\s*(?:hours?|hrs?|h)\b", _freq_every_hours),
    (rf"\bevery\s+(?P<a>{_N})\s*(?P<u>days?|weeks?|months?)\b", _freq_every_n),
    (r"\bevery\s+other\s+(?P<u>day|week)\b|\bq\.?o\.?d\b\.?", _every_other),
    (r"\b(?:b\.?i\.?d|bd)\b\.?", _fixed("frequency", 2.0, "per_day")),
    (r"\b(?:t\.?i\.?d|tds)\b\.?", _fixed("frequency", 3.0, "per_day")),
    (r"\b(?:q\.?i\.?d|qds)\b\.?", _fixed("frequency", 4.0, "per_day")),
    (_ONCE_DAILY, _fixed("frequency", 1.0, "per_day")),
    (r"\b(?:weekly|every\s+week)\b", _fixed("frequency", 1.0, "per_week")),
    (r"\bfortnightly\b", _fixed("frequency", 0.5, "per_week")),
    (r"\b(?:monthly|every\s+month)\b", _fixed("frequency", 1.0, "per_month")),
    (r"\bhourly\b", _fixed("frequency", 24.0, "per_day")),
    (rf"\b(?:blood\s+pressure|bp){_FILLER}{_BP}", _keyword_vital("mmhg")),
    (rf"(?<![/#])(?P<a>{_N})\s*(?:/|over)\s*(?P<b>{_N})(?!\s*/\s*#){_MMHG}", _slash),
    (rf"(?P<a>{_N})\s+out\s+of\s+(?P<b>{_N})", _out_of),
    (rf"(?P<a>{_N})\s*(?:bpm|beats\s*(?:per|a|/)\s*min(?:ute)?)\b", _keyword_vital("bpm")),
    (rf"(?P<a>{_N})\s*breaths\s*(?:per|a|/)\s*min(?:ute)?\b", _keyword_vital("breaths_per_min")),
    *[
        (rf"(?:{key})(?![a-z]){_FILLER}(?P<a>{_N})(?:\s*(?:bpm|%|percent))?", _keyword_vital(unit))
        for unit, key in _VITAL_KEYS.items()
    ],
    (rf"\b(?:temperature|temp){_FILLER}(?P<a>{_N}){_TEMP_UNIT}?", _temperature),
    (rf"(?P<a>{_N}){_TEMP_UNIT}", _temperature),
    (rf"(?P<a>{_N})\s*(?P<u>kg|kgs|kilograms?|kilos?|lbs?|pounds?)\b", _weight),
    (rf"(?P<a>{_N})\s*(?:%|percent\b|per\s*cent\b)", _percent),
    (rf"(?P<a>{_N})\s*(?P<u>{_LAB_UNITS})", _unit_builder("other", None)),
    (rf"{_RANGE}\s*-?\s*(?P<u>{_ALTS['dose']})(?![\w/])", _unit_builder("dose", _DOSE_UNITS)),
    (rf"{_RANGE}\s*-?\s*(?P<u>{_ALTS['time']})\b(?P<old>{_OLD})?", _duration),
    (_INDEFINITE, _indefinite_duration),
    (rf"{_RANGE}\s*(?:times|episodes?)\b", _count),
    (rf"\bx\s*(?P<a>{_N})(?!\s*/)", _count),
    (r"\b(?P<w>twice|thrice)\b", _count_word),
]  # fmt: skip
_COMPILED = [(re.compile(rx), build) for rx, build in _PATTERNS]
#: "40 mg a day", "1,000 milligrams a day", "one tablet a night": the rate after a dose is a
#: once-daily frequency (its own span, next to the dose it follows).
_DOSE_PER_DAY = re.compile(
    rf"(?:{_ALTS['dose']})\s+(?:of\s+[a-z]+\s+)?(?P<f>(?:a|per|each|every)\s+(?:day|night))\b"
)


def _mask(text: str) -> tuple[str, dict[int, float], list[tuple[int, int, float]]]:
    low = lower_same_length(text).replace("#", "@")
    numbers = iter_numbers(text)
    chars = list(low)
    for s, e, _ in numbers:
        chars[s:e] = "#" * (e - s)
    return "".join(chars), {s: v for s, _, v in numbers}, numbers


def extract_quantities(text: str) -> list[Quantity]:
    """Every quantity of ``text`` in text order (module docstring). Numbers with no recognised
    unit are returned as kind ``"other"`` with unit ``""``, except a lone spelled ``"one"``
    (``"no one"``, ``"the one on the left"``) and digits glued to a letter (``A1c``, ``T2``)."""
    masked, vals, numbers = _mask(text)
    taken = TakenSpans()
    free = taken.free
    out: list[Quantity] = []

    for rx, build in _COMPILED:
        for m in rx.finditer(masked):
            s, e = m.span()
            while e > s and masked[e - 1] in " .":
                e -= 1
            if e <= s or not free(s, e):
                continue
            got = build(m, vals)
            if got is None or got[1] is None:
                continue
            kind, value, value2, unit = got
            taken.add(s, e)
            out.append(
                Quantity(
                    kind=kind, value=value, value2=value2, unit=unit, start=s, end=e, text=text[s:e]
                )
            )
    for m in _DOSE_PER_DAY.finditer(masked):
        s, e = m.span("f")
        if free(s, e):
            taken.add(s, e)
            out.append(
                Quantity(
                    kind="frequency", value=1.0, unit="per_day", start=s, end=e, text=text[s:e]
                )
            )
    for s, e, v in numbers:
        glued = s > 0 and text[s - 1].isalpha() or e < len(text) and text[e].isalpha()
        if (
            free(s, e)
            and not glued
            and masked[s:e]
            and text[s:e].lower() not in ("one", "a half", "half")
        ):
            out.append(Quantity(kind="other", value=v, unit="", start=s, end=e, text=text[s:e]))
    out.sort(key=lambda q: q.start)
    return out


_FACTORS: dict[str, tuple[str, float]] = {
    "mg": ("mass", 1.0), "g": ("mass", 1000.0), "mcg": ("mass", 0.001),
    "ml": ("volume", 1.0), "l": ("volume", 1000.0),
    "kg": ("weight", 1.0), "lb": ("weight", 0.45359237),
    "minute": ("time", 1 / 60), "hour": ("time", 1.0), "day": ("time", 24.0),
    "week": ("time", 168.0), "month": ("time", 730.5), "year": ("time", 8766.0),
    "per_day": ("rate", 1.0), "per_week": ("rate", 1 / 7), "per_month": ("rate", 12 / 365.25),
}  # fmt: skip
_APPROXIMATE = frozenset({"month", "year", "per_month"})
_PAIR_UNITS = frozenset({"mmhg", "ratio", "/10"})


def _to_common(q: Quantity, other_unit: str) -> tuple[float, float] | None:
    """``(low, high)`` of ``q`` in the base unit shared with ``other_unit``; ``None`` if none.

    A range may come out inverted ("every 6 to 8 hours" is 4 to 3 per day): it is sorted."""
    lo, hi = sorted((q.value, q.value2 if q.value2 is not None else q.value))
    if q.unit == other_unit:
        return lo, hi
    if q.unit in ("degc", "degf") and other_unit in ("degc", "degf"):
        conv = (lambda x: (x - 32) * 5 / 9) if q.unit == "degf" else (lambda x: x)
        return conv(lo), conv(hi)
    fa, fb = _FACTORS.get(q.unit), _FACTORS.get(other_unit)
    if fa is None or fb is None or fa[0] != fb[0]:
        return None
    return lo * fa[1], hi * fa[1]


def quantities_agree(a: Quantity, b: Quantity) -> bool | None:
    """Whether two quantities state the same amount: ``None`` when not comparable (different
    kind, a bare number without unit, or units with no conversion: mg vs tablet), else
    ``True``/``False``.

    Units convert within mass (mcg/mg/g), volume (ml/l), weight (kg/lb), time
    (minute…year), rate (per day/week/month) and temperature (°C/°F). Pairs (blood pressure
    ``120/80``, murmur grade ``3/6``, pain ``7/10``) agree when both numbers match; ranges agree
    when they overlap (``"6 or 7 times a day"`` vs ``"6 times a day"``). Tolerance: 1e-6
    relative, 10% when a month or year is converted.
    """
    if a.kind != b.kind or not a.unit or not b.unit:
        return None
    ra, rb = _to_common(a, b.unit), _to_common(b, a.unit)
    if ra is None or rb is None:
        return None
    tol = 0.1 if a.unit != b.unit and {a.unit, b.unit} & _APPROXIMATE else 1e-6
    close = lambda x, y: math.isclose(x, y, rel_tol=tol, abs_tol=1e-9)  # noqa: E731
    if a.unit in _PAIR_UNITS:  # 120/80, 3/6 murmur, 7/10 pain: both numbers must match
        same_second = a.value2 is None or b.value2 is None or close(a.value2, b.value2)
        return close(a.value, b.value) and same_second
    (a_lo, a_hi), (b_lo, b_hi) = ra, rb
    return (a_lo <= b_hi or close(a_lo, b_hi)) and (b_lo <= a_hi or close(b_lo, a_hi))
