"""Numbers written in digits or spelled out (ASR style), with character offsets.

Shared by :mod:`clinjudge.text.quantities` (doses, vitals, durations) and
:mod:`clinjudge.text.normalize` (``"forty"`` → ``"40"`` for lexical matching), so both read
numbers the same way (SPEC §1, safety floor: doses, frequencies and durations are compared as
numbers, not as strings).

Spelled numbers follow English cardinal grammar: ``"twenty five"`` = 25, ``"one hundred and
twenty"`` = 120, ``"two point five"`` = 2.5, ``"a half"`` = 0.5, ``"one and a half"`` = 1.5.
A run of number words that is not one cardinal (``"five six"``) is cut into the longest valid
pieces (5, 6). Libraries were tried first: ``quantulum3`` reads ``"two point five"`` as 2 and 5
and ``"120/80"`` as 1.5, and ``text2num``-style converters rewrite the text, losing offsets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000}
_FRACTIONS = {"half": 0.5, "quarter": 0.25}

#: Every word that can be part of a spelled number.
NUMBER_WORDS: frozenset[str] = frozenset(
    [*_UNITS, *_TENS, *_SCALES, *_FRACTIONS, "point", "and", "a", "an"]
)

_WORD = "|".join(sorted([*_UNITS, *_TENS, *_SCALES, *_FRACTIONS, "point"], key=len, reverse=True))
_JOIN = (
    r"(?:[ \t]*-[ \t]*"
    r"|(?<=hundred)[ \t]+and[ \t]+|(?<=thousand)[ \t]+and[ \t]+"
    r"|[ \t]+and[ \t]+(?=(?:a[ \t]+)?(?:half|quarter)\b)"
    r"|[ \t]+)"
)
_FRAC_A = r"(?:an?[ \t]+(?=(?:half|quarter|hundred|thousand)\b))?"
#: A run of number words (lowercase text); split and valued by :func:`iter_numbers`.
SPELLED_RUN_RE = re.compile(rf"\b{_FRAC_A}(?:{_WORD})(?:{_JOIN}{_FRAC_A}(?:{_WORD}))*\b")
#: Digits: ``40``, ``2.5``, ``1,000``, ``.5``; may follow a letter (``x6``, ``q8h``).
DIGIT_RE = re.compile(
    r"(?<![\d.,])(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?![.,]?\d)|(?<![\w.])\.\d+"
)
_TOKEN_RE = re.compile(r"[a-z]+")


def parse_number_words(words: list[str]) -> float | None:
    """Value of a sequence of number words (lowercase, without ``"and"``/``"a"``), or ``None``
    when the words do not form one cardinal (``["five", "six"]``)."""
    if not words:
        return None
    if "point" in words:
        i = words.index("point")
        whole = parse_number_words(words[:i]) if i else 0.0
        digits = words[i + 1 :]
        if whole is None or not digits or any(w not in _UNITS or _UNITS[w] > 9 for w in digits):
            return None
        return float(f"{int(whole)}." + "".join(str(_UNITS[w]) for w in digits))
    if (
        len(words) >= 2
        and words[0] in _UNITS
        and 1 <= _UNITS[words[0]] <= 9
        and (words[1] in _TENS or 10 <= _UNITS.get(words[1], 0) <= 19)
    ):
        # spoken hundreds: "one thirty over sixty eight" (130/68), "two fifty milligrams" (250)
        rest = parse_number_words(words[1:])
        return None if rest is None or rest >= 100 else _UNITS[words[0]] * 100 + rest
    total, current, last = 0.0, 0.0, ""  # last: kind of previous word
    for w in words:
        if w in _FRACTIONS:
            if last == "frac":
                return None
            current += _FRACTIONS[w]
            last = "frac"
        elif w in _UNITS:
            v = _UNITS[w]
            if last in ("unit", "teen", "frac") or (last == "tens" and v >= 10):
                return None
            current += v
            last = "teen" if v >= 10 else "unit"
        elif w in _TENS:
            if last in ("unit", "teen", "tens", "frac"):
                return None
            current += _TENS[w]
            last = "tens"
        elif w == "hundred":
            if last in ("scale100", "frac") or current >= 100:
                return None
            current = (current or 1) * 100
            last = "scale100"
        elif w == "thousand":
            if last == "frac":
                return None
            total += (current or 1) * 1000
            current, last = 0.0, "scale1000"
        else:
            return None
    return total + current


def _split_run(words: list[tuple[str, int, int]]) -> Iterator[tuple[int, int, float]]:
    """Cut a run of number-word tokens into the longest valid cardinals (greedy), after
    cutting a spoken repetition first ("six hundred six hundred" is 600 twice, not 606 and
    100)."""
    i = 0
    while i < len(words):
        repeated = _repetition(words, i)
        if repeated:
            yield repeated
            i += 1
            while words[i - 1][2] < repeated[1]:
                i += 1
            continue
        for j in range(len(words), i, -1):
            core = [w for w, _, _ in words[i:j] if w not in ("and", "a", "an")]
            if words[j - 1][0] in ("and", "a", "an", "point"):
                continue
            value = parse_number_words(core)
            if value is not None:
                yield words[i][1], words[j - 1][2], value
                i = j
                break
        else:
            i += 1


def _repetition(words: list[tuple[str, int, int]], i: int) -> tuple[int, int, float] | None:
    """The longest run of two words or more from ``i`` said again right after it, when it is
    one cardinal: ``(start, end, value)`` of its first saying."""
    tokens = [w for w, _, _ in words]
    for k in range((len(words) - i) // 2, 1, -1):
        if tokens[i : i + k] == tokens[i + k : i + 2 * k]:
            core = [w for w in tokens[i : i + k] if w not in ("and", "a", "an")]
            value = parse_number_words(core) if tokens[i + k - 1] not in ("and", "point") else None
            if value is not None:
                return words[i][1], words[i + k - 1][2], value
    return None


def iter_spelled_numbers(lowered: str) -> Iterator[tuple[int, int, float]]:
    """``(start, end, value)`` of every spelled number in ``lowered`` (already lowercase)."""
    for m in SPELLED_RUN_RE.finditer(lowered):
        words = [
            (t.group(), m.start() + t.start(), m.start() + t.end())
            for t in _TOKEN_RE.finditer(m.group())
        ]
        yield from _split_run(words)


def parse_digits(token: str) -> float:
    """``"1,000"`` → 1000.0, ``"2.5"`` → 2.5."""
    return float(token.replace(",", ""))


def iter_numbers(text: str) -> list[tuple[int, int, float]]:
    """All numbers of ``text`` as ``(start, end, value)``, digits and spelled, in text order;
    digits then a scale word are one number (``"5 hundred"`` = 500, ``"2 thousand five
    hundred"`` = 2500)."""
    lowered = lower_same_length(text)
    found = [(m.start(), m.end(), parse_digits(m.group())) for m in DIGIT_RE.finditer(lowered)]
    found.extend(iter_spelled_numbers(lowered))
    found.sort()
    return _digits_with_scale(lowered, found)


_SCALE_START = re.compile(r"(hundred|thousand)\b")


def _digits_with_scale(
    lowered: str, found: list[tuple[int, int, float]]
) -> list[tuple[int, int, float]]:
    """Join a whole number in digits to the spelled number right after it that starts with a
    scale word: ``d`` then ``scale + rest`` is ``d × scale + rest``."""
    out: list[tuple[int, int, float]] = []
    for s, e, v in found:
        if out:
            s0, e0, v0 = out[-1]
            scale = _SCALE_START.match(lowered, s)
            if scale and lowered[s0:e0].isdigit() and lowered[e0:s].strip(" \t") == "" and e0 < s:
                size = _SCALES[scale.group(1)]
                out[-1] = (s0, e, v0 * size + (v - size))
                continue
        out.append((s, e, v))
    return out


def lower_same_length(text: str) -> str:
    """``text.lower()`` when that keeps every offset; else lowercase only the characters whose
    lowercase form is one character long (``"İ"`` stays as is)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def format_number(value: float) -> str:
    """``40.0`` → ``"40"``, ``2.5`` → ``"2.5"``: the token form used by the normalizer."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


_DIGIT_WORDS: dict[str, int] = {w: int(v) for w, v in _UNITS.items() if v < 10}
_SPOKEN_DECIMAL = re.compile(r"\s*\.\s*$")


def spoken_numbers(text: str) -> list[tuple[int, int, float]]:
    """:func:`iter_numbers` of ``text`` with the ASR decimal ``"ninety eight . seven"`` (an
    integer, a spaced full stop, one digit word or one digit) read as one number (98.7); a
    written ``8.2`` is left as it is."""
    found = iter_numbers(text)
    out: list[tuple[int, int, float]] = []
    i = 0
    while i < len(found):
        s, e, v = found[i]
        if i + 1 < len(found) and float(v).is_integer():
            s2, e2, v2 = found[i + 1]
            digit = text[s2:e2]
            if (
                _SPOKEN_DECIMAL.match(text[e:s2])
                and "." in text[e:s2]
                and (digit in _DIGIT_WORDS or re.fullmatch(r"\d", digit))
            ):
                out.append((s, e2, float(f"{int(v)}.{int(v2)}")))
                i += 2
                continue
        out.append((s, e, v))
        i += 1
    return out


_NUMBER_WORDS = frozenset(_UNITS) | frozenset(_TENS) | frozenset(_SCALES)
_LEADING_DECIMAL = re.compile(r"(?:^|\b([a-z]+))\s+\.\s*(\d|[a-z]+)\b")


def leading_decimals(lowered: str) -> list[float]:
    """ASR decimals without a whole part, "cup to disc is . two" → 0.2 (a spaced full stop
    after a word that is not a number, then one digit or digit word); ``lowered`` is lowercase."""
    found = []
    for m in _LEADING_DECIMAL.finditer(lowered):
        before, digit = m.group(1) or "", m.group(2)
        value = int(digit) if digit.isdigit() else _DIGIT_WORDS.get(digit)
        if value is not None and before not in _NUMBER_WORDS:
            found.append(float(f"0.{value}"))
    return found
