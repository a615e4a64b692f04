"""A mechanical threshold/value error (SPEC §5 taxonomy "threshold/value error"; taxonomy type
``threshold_value``): ``value_change`` moves one measured value the transcript states across a
clinically meaningful boundary.

Rule. A value is a number written in digits right after the name of a measure of
:data:`MEASURES` (``"Heart rate: 72 bpm"``, ``"hemoglobin A1c was 8.2"``, ``"BP: 128/72"``) in
the same note sentence: at most six words between them, none of them a comparison or a goal
(``below``, ``greater than``, ``goal``, ``target``, ``<`` ...), and not a range (``80 to 90``,
``120-140``), a decade (``120s``, ``300's``) or a number with another unit (``in 3 months``,
``20 mg``). A value is edited only when

* the transcript states it for the same measure: a number of the transcript (digits or ASR
  words, ``"ninety eight . seven"`` = 98.7) equal to it whose nearest preceding measure name on
  its line, at most 60 characters before it with no other number between, is that measure's
  (a blood pressure: a transcript reading with both numbers equal, :func:`quantities_agree`);
* its note sentence does not interpret it (``elevated``, ``low``, ``normal``, ``stable`` ...):
  a changed value under an unchanged interpretation would contradict the note itself;
* the new value, written with the original's number of decimals, is no number of the
  transcript (any measure) and lies on the intended side of the boundary.

Direction. A value inside the reference range ``[low, high]`` becomes clearly abnormal (at or
beyond ``alert_high`` / ``alert_low``: one row per side the measure has); a clearly abnormal
value (at or beyond an alert limit) becomes a typical normal one — hiding an abnormality is an
error too. Values between the reference limit and the alert limit (heart rate 58, SpO2 92 %)
are left alone: moving them is not clearly significant. The replacement is the first of the
row's values that passes the checks above.

Thresholds (common adult reference ranges and action limits: ACC/AHA and ESC office blood
pressure, ADA Standards of Care for HbA1c and glucose, ASE/ACC for ejection fraction, WHO for
BMI, usual US laboratory reference intervals for the rest):

====================  ===============  ===============  ==========================
measure               reference        alert (≤ / ≥)    abnormal → / normal →
====================  ===============  ===============  ==========================
blood pressure        90–139 / 60–89   sys ≤85 / ≥150   168/dia, 84/50 / 118/76
                                       or dia ≥95
heart rate (bpm)      60–100           50 / 110         124, 42 / 76
respiratory rate      12–20            9 / 24           28, 8 / 16
temperature °F        97.0–99.5        95.0 / 100.4     102.4, 94.1 / 98.6
temperature °C        36.1–37.5        35.0 / 38.0      39.2, 34.4 / 36.8
SpO2 (%)              95–100           90 / –           86 / 97
HbA1c (%)             4.0–6.4          – / 7.0          8.1 / 5.4
glucose (mg/dL)       70–140           60 / 200         280, 48 / 105
potassium (mmol/L)    3.5–5.0          3.2 / 5.5        6.2, 2.8 / 4.2
sodium (mmol/L)       135–145          130 / 150        154, 124 / 139
creatinine (mg/dL)    0.6–1.2          – / 1.5          2.4 / 0.9
hemoglobin (g/dL)     12.0–17.5        10.0 / 19.0      7.4 / 13.6
ejection fraction (%) 50–75            40 / –           30 / 60
BMI (kg/m²)           18.5–24.9        17.0 / 30.0      34.6, 16.4 / 22.4
TSH (mIU/L)           0.4–4.0          0.1 / 6.0        9.8, 0.04 / 1.8
PSA (ng/mL)           0–4.0            – / 6.0          8.6 / 1.2
====================  ===============  ===============  ==========================

HbA1c's range ends at 6.4 because a value below the diagnosis threshold 6.5 % becomes a
diabetic one (the taxonomy's example: 6.1 → 8.1); its alert limit is the usual treatment goal
7.0 %, so a value of 7.0 or more becomes normal (hiding poor control) and 6.5–6.9 (diagnostic, or
a diabetic at goal) is left alone. A raised blood pressure keeps its diastolic part
(isolated systolic hypertension, one number edited), a lowered or normalised one changes both.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property

from clinjudge.inject.material import NoteMaterial
from clinjudge.inject.types import Edit, Perturber
from clinjudge.text.numbers import spoken_numbers
from clinjudge.text.quantities import Quantity, quantities_agree


@dataclass(frozen=True)
class Measure:
    """One row of the threshold table (module docstring); ``key`` names the measure group
    whose name ``pattern`` (case-insensitive regex) notes and transcripts use."""

    key: str
    label: str
    unit: str
    low: float
    high: float
    plausible: tuple[float, float]
    alert_low: float | None = None
    alert_high: float | None = None
    raise_to: tuple[float, ...] = ()
    lower_to: tuple[float, ...] = ()
    normal_to: tuple[float, ...] = ()


#: Measure group → how notes and transcripts name it (checked in this order, so "hemoglobin
#: A1c" is an A1c and "pulse ox" an oxygen saturation).
NAMES: dict[str, str] = {
    "bp": r"blood\s+pressures?|\bb\.?p\b",
    "a1c": r"(?:(?:hemoglobin|haemoglobin|hgb|hb)\s*)?a\s*1\s*c\b|(?:hemoglobin\s+)?a\s+one\s+c\b"
    r"|\bhba1c\b|glycated\s+hemoglobin",
    "spo2": r"oxygen\s+saturation|\bo2\s*sat(?:uration)?s?\b|\bsp\s*o2\b|\bsats?\b|satting"
    r"|saturating|\bsaturation|pulse\s*ox(?:imetry|ygenation)?|oxygen(?:ation)?(?:\s+level)?",
    "hr": r"heart\s+rate|\bpulse(?:\s+rate)?\b(?!\s*ox)|\bhr\b",
    "rr": r"respiratory\s+rate|respirations?(?:\s+rate)?|\bresp\b\.?|\brr\b|breathing\s+rate",
    "temp": r"(?:body\s+)?temperature|\btemp\b|\btmax\b",
    "glucose": r"(?:blood\s+)?glucose|(?:blood\s+)?sugars?|finger\s*sticks?|\bfsbg\b",
    "potassium": r"potassium",
    "sodium": r"\bsodium\b",
    "creatinine": r"creatinine",
    "hemoglobin": r"(?:hemoglobin|haemoglobin|\bhgb|\bhb)\b",
    "ef": r"ejection\s+fraction|\blvef\b|\bef\b",
    "bmi": r"\bbmi\b|body\s+mass\s+index",
    "tsh": r"\btsh\b",
    "psa": r"\bpsa\b",
}
_NAME = re.compile("|".join(f"(?P<{k}>{p})" for k, p in NAMES.items()), re.I)

#: The threshold table (module docstring). Blood pressure, a pair, is :data:`BP`.
MEASURES: tuple[Measure, ...] = (
    Measure("hr", "heart rate", "bpm", 60, 100, (20, 250), 50, 110, (124, 128), (42, 44), (76, 78)),
    Measure("rr", "respiratory rate", "/min", 12, 20, (4, 60), 9, 24, (28, 30), (8, 7), (16, 14)),
    Measure("temp", "temperature", "°F", 97.0, 99.5, (90, 110), 95.0, 100.4,
            (102.4, 102.8), (94.1, 93.8), (98.6, 98.4)),
    Measure("temp", "temperature", "°C", 36.1, 37.5, (30, 45), 35.0, 38.0,
            (39.2, 39.4), (34.4, 34.1), (36.8, 36.9)),
    Measure("spo2", "oxygen saturation", "%", 95, 100, (50, 100), 90, None, (), (86, 88), (97, 98)),
    Measure("a1c", "hemoglobin A1c", "%", 4.0, 6.4, (3, 20), None, 7.0, (8.1, 8.4), (), (5.4, 5.2)),
    Measure("glucose", "glucose", "mg/dL", 70, 140, (20, 900), 60, 200,
            (280, 310), (48, 52), (105, 110)),
    Measure("potassium", "potassium", "mmol/L", 3.5, 5.0, (1.5, 9), 3.2, 5.5,
            (6.2, 6.4), (2.8, 2.9), (4.2, 4.1)),
    Measure("sodium", "sodium", "mmol/L", 135, 145, (100, 180), 130, 150,
            (154, 156), (124, 126), (139, 140)),
    Measure("creatinine", "creatinine", "mg/dL", 0.6, 1.2, (0.1, 15), None, 1.5,
            (2.4, 2.6), (), (0.9, 0.8)),
    Measure("hemoglobin", "hemoglobin", "g/dL", 12.0, 17.5, (3, 25), 10.0, 19.0,
            (), (7.4, 7.8), (13.6, 13.9)),
    Measure("ef", "ejection fraction", "%", 50, 75, (5, 85), 40, None, (), (30, 35), (60, 58)),
    Measure("bmi", "BMI", "kg/m²", 18.5, 24.9, (10, 80), 17.0, 30.0,
            (34.6, 36.2), (16.4, 16.1), (22.4, 23.1)),
    Measure("tsh", "TSH", "mIU/L", 0.4, 4.0, (0.01, 100), 0.1, 6.0,
            (9.8, 11.2), (0.04, 0.03), (1.8, 2.1)),
    Measure("psa", "PSA", "ng/mL", 0.0, 4.0, (0.01, 500), None, 6.0, (8.6, 9.4), (), (1.2, 1.1)),
)  # fmt: skip
#: Blood pressure: systolic (and diastolic) rows; the diastolic's own limits are below.
BP = Measure("bp", "blood pressure", "mmHg", 90, 139, (50, 300), 85, 150,
             (168, 172), (84, 82), (118, 116))  # fmt: skip
BP_DIASTOLIC_RANGE = (60, 89)
BP_DIASTOLIC_ALERT_HIGH = 95
#: Diastolic values written with a lowered / normalised systolic of the same index.
BP_LOWER_DIASTOLIC = (50, 48)
BP_NORMAL_DIASTOLIC = (76, 74)

_GAP_WORD = re.compile(r"[A-Za-z'’]+")
_GAP_BLOCK = frozenset({
    "than", "below", "above", "under", "over", "goal", "goals", "target", "targets", "keep",
    "between", "from", "range", "exceed", "exceeds", "least", "up", "if", "when", "should",
    "aim", "ideally", "less", "greater", "more", "repeat", "recheck", "order", "ordered",
    "check", "x"
})  # fmt: skip
_NOTE_NUMBER = re.compile(r"(?<![\w.,/])(?P<a>\d+(?:\.\d+)?)(?:\s*/\s*(?P<b>\d+))?(?![\w/])")
_AFTER_REJECT = re.compile(
    r"(?:\.\d|\s*(?:-|–|to\b|or\b|and\b)\s*\d|\s*['’]?s\b|\s*/|\s*(?:x\b|times|months?|weeks?"
    r"|days?|years?|hours?|minutes?|mg\b|mcg|milligrams?|grams?|units?|pounds?|lbs?|kg\b|liters?"
    r"|l/min|lpm|cm\b|mm\b(?!\s*hg)|ng/dl|points?))",
    re.I,
)
#: Words that interpret a value: its sentence is not edited (module docstring).
INTERPRETED = re.compile(
    r"\b(?:elevated|high|higher|low|lower|normal|abnormal|reduced|decreased|increased|preserved"
    r"|borderline|wnl|within\s+normal|stable|controlled|uncontrolled|good|fine|well|improved"
    r"|worse|worsening|febrile|afebrile|fever|hypertensi\w*|hypotensi\w*|tachycardi\w*"
    r"|bradycardi\w*|tachypne\w*|hypoxi\w*|hypoxemi\w*|anemi\w*|diabet\w*|prediabet\w*"
    r"|obes\w*|overweight|at\s+goal|ideal|optimal|acceptable|concerning|significant)\b",
    re.I,
)


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _decimals(written: str) -> int:
    return len(written.split(".")[1]) if "." in written else 0


def _write(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}"


@dataclass
class _Transcript:
    """The transcript's numbers, each with the measure group it is read as (or ``None``)."""

    src: NoteMaterial

    @cached_property
    def numbers(self) -> list[tuple[int, int, float, str | None]]:
        text = self.src.transcript
        names = [(m.end(), m.lastgroup or "") for m in _NAME.finditer(text)]
        spans = spoken_numbers(text)
        out = []
        for s, e, v in spans:
            key = None
            before = [(end, k) for end, k in names if end <= s and s - end <= 60]
            if before:
                end, k = before[-1]
                gap = text[end:s]
                if "\n" not in gap and not any(end <= s2 < s for s2, _, _ in spans):
                    key = k
            out.append((s, e, v, key))
        return out

    @cached_property
    def values(self) -> list[float]:
        return [v for _, _, v, _ in self.numbers]

    def states(self, key: str, value: float) -> str | None:
        """The transcript's words stating ``value`` for measure group ``key``, if any."""
        t = self.src.transcript
        return next((t[s:e] for s, e, v, k in self.numbers if k == key and _same(v, value)), None)

    def says(self, value: float) -> bool:
        return any(_same(value, v) for v in self.values)

    def states_pressure(self, systolic: float, diastolic: float) -> str | None:
        reading = Quantity(
            kind="vital", value=systolic, value2=diastolic, unit="mmhg", start=0, end=0, text=""
        )
        return next(
            (
                q.text
                for q in self.src.transcript_quantities
                if q.unit == "mmhg" and q.value2 is not None and quantities_agree(reading, q)
            ),
            None,
        )


def _note_values(src: NoteMaterial) -> list[tuple[str, _Shifted]]:
    """``(measure group, number match)`` of every value written right after a measure name in
    the same sentence (module docstring), skipping interpreted sentences."""
    out = []
    for sentence in src.sentences:
        text = sentence.text
        if INTERPRETED.search(text):
            continue
        for name in _NAME.finditer(text):
            number = _NOTE_NUMBER.search(text, name.end())
            if number is None:
                continue
            gap = text[name.end() : number.start()]
            words = [w.lower() for w in _GAP_WORD.findall(gap)]
            if (
                len(words) > 6
                or re.search(r"[\d<>≤≥~.;!?]", gap)
                or set(words) & _GAP_BLOCK
                or _NAME.search(gap)
                or _AFTER_REJECT.match(text, number.end())
                or (number.group("b") and name.lastgroup != "bp")
            ):
                continue
            shifted = _Shifted(number, sentence.start)
            out.append((name.lastgroup or "", shifted))
    return out


@dataclass(frozen=True)
class _Shifted:
    """A note-sentence number match with offsets moved into the whole note."""

    match: re.Match[str]
    offset: int

    def group(self, name: str) -> str | None:
        return self.match.group(name)

    def span(self, name: str) -> tuple[int, int]:
        s, e = self.match.span(name)
        return s + self.offset, e + self.offset


def _measure(key: str, value: float) -> Measure | None:
    rows = [m for m in MEASURES if m.key == key and m.plausible[0] <= value <= m.plausible[1]]
    return rows[0] if rows else None


def _targets(m: Measure, value: float) -> list[tuple[str, tuple[float, ...]]]:
    """``(direction, replacement values)`` for a value of measure ``m`` (module docstring)."""
    if m.alert_high is not None and value >= m.alert_high:
        return [("normal", m.normal_to)]
    if m.alert_low is not None and value <= m.alert_low:
        return [("normal", m.normal_to)]
    if m.low <= value <= m.high:
        return [("high", m.raise_to), ("low", m.lower_to)]
    return []


def _in_class(m: Measure, value: float, direction: str) -> bool:
    if not m.plausible[0] <= value <= m.plausible[1] or value <= 0:
        return False
    if direction == "high":
        return m.alert_high is not None and value >= m.alert_high
    if direction == "low":
        return m.alert_low is not None and value <= m.alert_low
    return m.low <= value <= m.high


def _single_edits(t: _Transcript, key: str, n: _Shifted) -> list[Edit]:
    written = n.group("a") or ""
    value = float(written)
    m = _measure(key, value)
    if m is None:
        return []
    said = t.states(key, value)
    if said is None:
        return []
    start, end = n.span("a")
    edits = []
    for direction, options in _targets(m, value):
        for option in options:
            new = _write(option, _decimals(written))
            if not _in_class(m, float(new), direction) or t.says(float(new)):
                continue
            why = (
                f"{m.label} {written} {m.unit} changed to {new} ({_WORDS[direction]}; reference "
                f"{m.low:g}–{m.high:g}); the transcript states '{said}'"
            )
            edits.append(Edit(start, end, new, why))
            break
    return edits


_WORDS = {"high": "now abnormally high", "low": "now abnormally low", "normal": "now normal"}


def _pressure_edits(t: _Transcript, n: _Shifted) -> list[Edit]:
    a, b = n.group("a") or "", n.group("b")
    if b is None or "." in a:
        return []
    sys, dia = float(a), float(b)
    said = t.states_pressure(sys, dia)
    if said is None or not BP.plausible[0] <= sys <= BP.plausible[1]:
        return []
    (s0, e0), (_, e1) = n.span("a"), n.span("b")
    sep = n.match.string[n.match.end("a") : n.match.start("b")]
    d_lo, d_hi = BP_DIASTOLIC_RANGE
    options: list[tuple[str, float, float | None]] = []
    if sys >= BP.alert_high or dia >= BP_DIASTOLIC_ALERT_HIGH or sys <= BP.alert_low:
        options += [
            ("normal", s, d) for s, d in zip(BP.normal_to, BP_NORMAL_DIASTOLIC, strict=True)
        ]
    elif BP.low <= sys <= BP.high and d_lo <= dia <= d_hi:
        options += [("high", s, None) for s in BP.raise_to]
        options += [("low", s, d) for s, d in zip(BP.lower_to, BP_LOWER_DIASTOLIC, strict=True)]
    edits, done = [], set()
    for direction, s, d in options:
        if direction in done or t.says(s) or (d is not None and t.says(d)):
            continue
        done.add(direction)
        new = f"{s:g}" if d is None else f"{s:g}{sep}{d:g}"
        end = e0 if d is None else e1
        why = (
            f"blood pressure {a}/{b} mmHg changed to {s:g}/{b if d is None else f'{d:g}'} "
            f"({_WORDS[direction]}; reference {BP.low:g}–{BP.high:g}/{d_lo}–{d_hi}); the "
            f"transcript states '{said}'"
        )
        edits.append(Edit(s0, end, new, why))
    return edits


def find_value_changes(src: NoteMaterial) -> list[Edit]:
    t = _Transcript(src)
    edits = []
    for key, n in _note_values(src):
        if key == "bp":
            edits += _pressure_edits(t, n)
        elif n.group("b") is None:
            edits += _single_edits(t, key, n)
    return edits


value_change = Perturber(
    "value_change",
    "error",
    find_value_changes,
    "a stated measurement moved across its reference/action threshold",
)
