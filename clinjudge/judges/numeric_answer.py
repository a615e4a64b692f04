"""The final answer of a calculator answer (MedCalc style, SPEC §7), read without a model.

An answer to "What is the patient's CHA2DS2-VASc score?" is usually reasoning that ends in a
value. The value read, in order of trust:

1. ``json``: the value of an ``"answer"`` key (MedCalc asks for ``{"answer": …}``);
2. ``marked``: the last value after an answer cue — "answer", "score", "result", "total",
   "estimated", "is", "=", ":" — within the last sentence that has one;
3. ``last``: the last value in the text.

A value is what the target's type calls for: a number (``decimal``, ``integer``), a date
``MM/DD/YYYY`` (``date``), or weeks and days ("34 weeks and 3 days", for gestational age). The
span of the value in the text is kept, so a wrong answer can be shown where it stands.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

#: Not part of a word ("CHA2DS2-VASc" holds no value), a unit ("mL/min/1.73 m²", "kg/m^2")
#: or a longer number.
_ALONE = r"(?<![A-Za-z0-9_./^])"
_NUMBER = _ALONE + r"[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?![0-9])"
_DATE = _ALONE + r"\d{1,2}/\d{1,2}/\d{2,4}(?![0-9])"
_WEEKS_DAYS = r"(\d+)\s*weeks?[\s,'\"]*(?:and\s*)?[\s'\"]*(\d+)\s*days?"
_CUE = re.compile(
    r"\b(?:answer|score|result|total|estimated|calculated|is|equals|of)\b|=|:", re.IGNORECASE
)
_JSON_ANSWER = re.compile(r"""["']answer["']\s*:\s*["']?""", re.IGNORECASE)


@dataclass(frozen=True)
class FoundAnswer:
    #: The value as written, normalised: "67.005", "12/02/2000", "(34, 3)" for weeks and days.
    value: str
    start: int
    end: int
    #: ``json``, ``marked`` or ``last`` (module docstring).
    how: str


def value_pattern(kind: str) -> re.Pattern[str]:
    """The regular expression of a value of target kind ``kind`` (``number``, ``date`` or
    ``weeks_days``)."""
    return re.compile({"date": _DATE, "weeks_days": _WEEKS_DAYS}.get(kind, _NUMBER), re.I)


def target_kind(truth: str, output_type: str | None = None) -> str:
    """``weeks_days`` for a truth like ``('34 weeks', '3 days')``, ``date`` for a date (or
    output type ``date``), else ``number``."""
    if re.search(_WEEKS_DAYS, truth, re.I):
        return "weeks_days"
    if (output_type or "").lower() == "date" or re.fullmatch(_DATE, truth.strip()):
        return "date"
    return "number"


def normalise(match: re.Match[str], kind: str) -> str:
    if kind == "weeks_days":
        return f"({int(match.group(1))}, {int(match.group(2))})"
    return match.group(0).replace("−", "-").replace(",", "") if kind == "number" else match.group(0)


def normalise_truth(truth: str, kind: str) -> str:
    """The truth in the form :func:`find_answer` gives values (weeks/days as ``(w, d)``)."""
    if kind == "weeks_days":
        try:
            weeks, days = ast.literal_eval(truth.strip())
            return f"({int(str(weeks).split()[0])}, {int(str(days).split()[0])})"
        except (ValueError, SyntaxError, TypeError):
            match = value_pattern(kind).search(truth)
            return normalise(match, kind) if match else truth.strip()
    return truth.strip()


def find_answer(text: str, kind: str = "number") -> FoundAnswer | None:
    """The final answer of ``text`` for a target of ``kind`` (module docstring), or ``None``
    when the text holds no such value."""
    pattern = value_pattern(kind)
    for cue in reversed(list(_JSON_ANSWER.finditer(text))):
        match = pattern.match(text, cue.end())
        if match:
            return FoundAnswer(normalise(match, kind), match.start(), match.end(), "json")
    values = list(pattern.finditer(text))
    if not values:
        return None
    last = values[-1]
    sentence = max(start for start in _sentence_starts(text) if start <= last.start())
    cues = [c.end() for c in _CUE.finditer(text, sentence, last.start() + 1)]
    marked = [v for v in values if v.start() >= sentence and cues and cues[0] <= v.start()]
    v, how = (marked[-1], "marked") if marked else (last, "last")
    return FoundAnswer(normalise(v, kind), v.start(), v.end(), how)


def _sentence_starts(text: str) -> list[int]:
    """Offsets where sentences start (after ". ", "! ", "? " or a line break)."""
    return [0, *(m.end() for m in re.finditer(r"(?<!\d)[.!?](?=\s)\s+|\n+", text))]
