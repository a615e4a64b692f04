"""Mechanical *errors*: one clinically significant change of a real note (SPEC §5 taxonomy:
dosage error, wrong drug/treatment, negation flip, laterality/anatomy error; SPEC §1 tiers 4–5).

Each finder lists every applicable edit; the :class:`~clinjudge.inject.types.Perturber` picks
one. An error is made only where the transcript states the original detail, so that the edited
note contradicts the transcript (tier 5) or adds what it never says (tier 4):

* ``dose_change`` — a dose (mg, mcg, g, ml, units, mEq, mmol) whose value the transcript
  states → twice or half of it (the neighbouring common strength when both are stated or odd);
  the unit is kept and the new value is one the transcript never states in that unit.
* ``frequency_change`` — a dosing frequency (after a drug name or a dose in its sentence) that
  the transcript states → another one written the same way: ``daily`` → ``twice daily``,
  ``bid`` → ``tid``/``daily``, ``twice a day`` → ``three times a day``/``once a day``,
  ``every 6 hours`` → ``every 4``/``8 hours``, ``weekly`` → ``daily``. The re-read frequency
  must differ.
* ``added_drug`` — a new sentence ``"Start <drug> <dose> <frequency>."`` at the end of a plan
  section (of an assessment section when the note has no plan section) with a common drug that
  neither the transcript nor the note names under any of its names.
* ``negation_flip`` — in Subjective/Objective, a finding right after a polarity cue is flipped
  (``denies X`` → ``reports X``, ``no X`` → ``X``, ``negative for`` → ``positive for``, and the
  reverse) when the transcript states the finding with the original polarity only.
* ``laterality_flip`` — left ↔ right on a site the transcript names on that side only (not
  handedness: "right-hand-dominant").
"""

from __future__ import annotations

import re

from clinjudge.grounding.transcript_facts import FINDING_KINDS
from clinjudge.inject.material import NoteMaterial
from clinjudge.inject.tables import (
    ADDED_DRUGS,
    COMMON_STRENGTHS,
    FREQUENCY_MOVES,
    HOUR_INTERVALS,
    NEGATION_FLIPS,
    STRENGTH_UNITS,
)
from clinjudge.inject.types import Edit, Perturber, match_case
from clinjudge.text.laterality import laterality_mentions
from clinjudge.text.negation import is_negated
from clinjudge.text.normalize import word_tokens
from clinjudge.text.numbers import format_number, iter_numbers
from clinjudge.text.quantities import Quantity, extract_quantities, quantities_agree
from clinjudge.text.sentences import split_sentences

# -- dose ------------------------------------------------------------------------------------


def _dose_options(value: float) -> tuple[list[float], list[float]]:
    """``(×2 and ÷2, the neighbouring common strengths)`` of ``value`` (at most 3 decimals,
    at least 0.1)."""
    higher = [s for s in COMMON_STRENGTHS if s > value]
    lower = [s for s in COMMON_STRENGTHS if s < value]

    def keep(options: list[float]) -> list[float]:
        return sorted({o for o in options if o != value and round(o, 3) == o and o >= 0.1})

    return keep([value * 2, value / 2]), keep(higher[:1] + lower[-1:])


def _stated(q: Quantity, stated: list[Quantity]) -> bool:
    return any(quantities_agree(q, t) for t in stated)


def _new_doses(q: Quantity, stated: list[Quantity]) -> list[float]:
    """×2 / ÷2 of the dose, else its neighbouring strengths, never a value the transcript
    states in the same unit."""
    for options in _dose_options(q.value):
        fresh = [v for v in options if not _stated(q.model_copy(update={"value": v}), stated)]
        if fresh:
            return fresh
    return []


def find_dose_changes(src: NoteMaterial) -> list[Edit]:
    stated = [q for q in src.transcript_quantities if q.kind == "dose"]
    edits = []
    for q in extract_quantities(src.note):
        if q.kind != "dose" or q.value2 is not None or q.unit not in STRENGTH_UNITS:
            continue
        if not _stated(q, stated):
            continue
        number = next((n for n in iter_numbers(q.text) if n[2] == q.value), None)
        if number is None or not re.fullmatch(r"[\d.,]+", q.text[number[0] : number[1]]):
            continue  # spelled numbers stay as they are
        for value in _new_doses(q, stated):
            after = format_number(value)
            edits.append(
                Edit(
                    q.start + number[0],
                    q.start + number[1],
                    after,
                    f"dose '{q.text}' changed to {after} {q.unit}; the transcript states "
                    f"{format_number(q.value)} {q.unit} and never {after} {q.unit}",
                )
            )
    return edits


# -- frequency -------------------------------------------------------------------------------

_ABBREVIATED = re.compile(r"(q\.?d|b\.?i\.?d|t\.?i\.?d|q\.?i\.?d)\.?")
_ABBREVIATION_TIMES = {"qd": 1, "bid": 2, "tid": 3, "qid": 4}
_TIMES_WORDS = {"once": 1, "one": 1, "twice": 2, "two": 2, "thrice": 3, "three": 3, "four": 4}
_WORD_FOR_TIMES = {1: "once", 2: "twice", 3: "three times", 4: "four times"}
_COUNTED = re.compile(
    r"(?P<n>once|twice|thrice|one|two|three|four|\d)(?P<times>\s*times)?"
    r"\s*(?:a|an|per|each|every|/)?\s*(?:day|daily)"
)
_ONCE_A_DAY = re.compile(
    r"daily|every\s+day|each\s+day|every\s+(?:morning|evening|night)|nightly|at\s+night"
    r"|at\s+bedtime|q\.?h\.?s|qam|qpm"
)
_WEEKLY = re.compile(r"weekly|every\s+week|once\s+(?:a|per)\s+week|every\s+other\s+day|q\.?o\.?d")
_HOURS = re.compile(r"(?:every|q)\s*\.?\s*(?P<n>\d+)\s*(?:hours?|hrs?|h)")


def _frequency_rewrites(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, replacement)`` inside a frequency's text that state another frequency
    in the same style (module docstring)."""
    low = text.lower()
    if m := _ABBREVIATED.fullmatch(low):
        letters = re.sub(r"[^a-z]", "", m.group(1))
        out = []
        for n in FREQUENCY_MOVES[_ABBREVIATION_TIMES[letters]]:
            if n == 1:
                out.append((0, len(text), "daily"))
                continue
            new = {2: "bid", 3: "tid", 4: "qid"}[n]
            new = ".".join(new) if "." in text else new
            out.append((0, len(text), new.upper() if text.isupper() else new))
        return out
    if m := _COUNTED.fullmatch(low):
        word = m.group("n")
        times = int(word) if word.isdigit() else _TIMES_WORDS[word]
        if times not in FREQUENCY_MOVES:
            return []
        span = m.start("n"), m.end("times") if m.group("times") else m.end("n")
        out = []
        for n in FREQUENCY_MOVES[times]:
            new = f"{n} times" if word.isdigit() else _WORD_FOR_TIMES[n]
            if word.isdigit() and not m.group("times"):
                new = str(n)
            out.append((*span, match_case(text[span[0] : span[1]], new)))
        return out
    if _ONCE_A_DAY.fullmatch(low):
        return [(0, len(text), match_case(text, "twice daily"))]
    if _WEEKLY.fullmatch(low):
        return [(0, len(text), match_case(text, "daily"))]
    if (m := _HOURS.fullmatch(low)) and int(m.group("n")) in HOUR_INTERVALS:
        i = HOUR_INTERVALS.index(int(m.group("n")))
        near = HOUR_INTERVALS[max(0, i - 1) : i] + HOUR_INTERVALS[i + 1 : i + 2]
        return [(m.start("n"), m.end("n"), str(h)) for h in near]
    return []


#: What may stand between a drug or dose and its frequency: "Lasix 20 mg once daily",
#: "Ultram 50 mg as needed every 6 hours", "torsemide 20 mg by mouth daily", "Lortab, 5 mg,
#: #20 (twenty) to take every 6 hours" -- but not "prednisone, reporting improvement at night".
_DOSING_GAP = re.compile(
    r"(?:[\s,]*(?:to|take|taking|by|mouth|orally|po|as|needed|prn|of|tablets?|capsules?"
    r"|puffs?|#\d+|\(\w+\)))*[\s,]*",
    re.I,
)


def _dosing_frequencies(src: NoteMaterial) -> list[Quantity]:
    """Frequencies right after a drug name or a dose (:data:`_DOSING_GAP`), not "daily tasks"
    or "therapy every week"."""
    quantities = extract_quantities(src.note)
    anchors = [m.end for m in src.note_mentions if "drug" in m.kinds]
    anchors += [q.end for q in quantities if q.kind == "dose"]
    return [
        q
        for q in quantities
        if q.kind == "frequency"
        and any(end <= q.start and _DOSING_GAP.fullmatch(src.note, end, q.start) for end in anchors)
    ]


def find_frequency_changes(src: NoteMaterial) -> list[Edit]:
    stated = [q for q in src.transcript_quantities if q.kind == "frequency"]
    edits = []
    for q in _dosing_frequencies(src):
        if q.value2 is not None or not _stated(q, stated):
            continue
        for a, b, new in _frequency_rewrites(q.text):
            changed = q.text[:a] + new + q.text[b:]
            reread = [r for r in extract_quantities(changed) if r.kind == "frequency"]
            if len(reread) != 1 or quantities_agree(q, reread[0]) is not False:
                continue
            edits.append(
                Edit(
                    q.start + a,
                    q.start + b,
                    new,
                    f"frequency '{q.text}' changed to '{changed}'; the transcript states "
                    f"'{next(t.text for t in stated if quantities_agree(q, t))}'",
                )
            )
    return edits


# -- added drug ------------------------------------------------------------------------------


def named_anywhere(
    src: NoteMaterial, term: str, kinds: frozenset[str] = frozenset({"drug"})
) -> bool:
    """Whether the transcript or the note names ``term`` (a concept of one of ``kinds``) under
    any of its names (knowledge base concept classes, then every surface form of the term's
    concepts word by word). A term the knowledge base does not know counts as named: it is
    never used."""
    concepts = [c for c in src.kb.lookup(term) if c.kind in kinds]
    classes = {src.kb.canonical(c.id) for c in concepts}
    in_note = {cid for m in src.note_mentions for cid in m.canonical}
    if not concepts or classes & (src.transcript_concepts | in_note):
        return True
    words = {w for text in (src.transcript, src.note) for w, _, _ in word_tokens(text.lower())}
    haystack = f" {' '.join(src.transcript.lower().split())} {' '.join(src.note.lower().split())} "
    for concept in concepts:
        for surface in concept.surfaces():
            s = surface.lower()
            if len(s) >= 4 and (s in words if " " not in s else f" {s} " in haystack):
                return True
    return False


def find_added_drugs(src: NoteMaterial) -> list[Edit]:
    plan = [s for s in src.sections if s.soap == "plan"]
    sections = plan or [s for s in src.sections if s.soap == "assessment"]
    sites = [s for s in sections if s.end > s.start and src.note[s.end - 1] in ".!?"]
    if not sites:
        return []
    drugs = [d for d in ADDED_DRUGS if not named_anywhere(src, d[0])]
    where = "plan" if plan else "assessment and plan"
    return [
        Edit(
            s.end,
            s.end,
            f" Start {name} {dose} {frequency}.",
            f"adds {name} {dose} {frequency} to the {where}; neither the transcript nor the "
            f"note names {name} under any name",
        )
        for s in sites
        for name, dose, frequency in drugs
    ]


# -- negation --------------------------------------------------------------------------------

_FLIPS = [(re.compile(r"(?<![\w-])" + p, re.I), new, pol) for p, new, pol in NEGATION_FLIPS]
_GAP = re.compile(r"(?:[A-Za-z-]+\s+){0,2}")
_GAP_STOPS = frozenset({"that", "to", "she", "he", "they", "the", "this", "being", "having"})


def _flips_in(text: str, src: NoteMaterial) -> list[tuple[int, int, str, str]]:
    """``(start, end, replacement, rationale)`` of polarity flips inside one sentence."""
    mentions = [m for m in src.kb.concepts_in(text) if set(m.kinds) & FINDING_KINDS]
    out = []
    for rx, replacement, polarity in _FLIPS:
        for cue in rx.finditer(text):
            finding = next((m for m in mentions if m.start >= cue.end()), None)
            gap = text[cue.end() : finding.start] if finding else ""
            if finding is None or not _GAP.fullmatch(gap) or set(gap.lower().split()) & _GAP_STOPS:
                continue
            negated = is_negated(text, finding.start, finding.end)
            if negated != (polarity == "negative"):
                continue
            if src.facts.statuses(finding.canonical) != {negated}:
                continue  # the transcript must state the finding with this polarity only
            start, end, after = cue.start(), cue.end(), match_case(cue.group(), replacement)
            if not replacement and text[start].isupper():  # "No edema." -> "Edema."
                end, after = end + 1, text[end].upper()
            edited = text[:start] + after + text[end:]
            shift = len(after) - (end - start)
            if is_negated(edited, finding.start + shift, finding.end + shift) == negated:
                continue
            said = "denies" if negated else "affirms"
            why = f"'{cue.group()}{gap}{finding.surface}' flipped: the transcript {said} it"
            out.append((start, end, after, why))
    return out


def find_negation_flips(src: NoteMaterial) -> list[Edit]:
    edits = []
    for section in src.sections:
        if section.soap not in ("subjective", "objective"):
            continue
        for sentence in split_sentences(src.note, section.start, section.end):
            for a, b, after, why in _flips_in(sentence.text, src):
                edits.append(Edit(sentence.start + a, sentence.start + b, after, why))
    return edits


# -- laterality ------------------------------------------------------------------------------

_OTHER_SIDE = {
    "left": "right", "right": "left", "lt": "rt", "rt": "lt", "l": "r", "r": "l",
    "llq": "rlq", "rlq": "llq", "luq": "ruq", "ruq": "luq",
}  # fmt: skip
_HANDEDNESS = re.compile(r"[\s-]*(?:hand[\s-]*)?(?:dominant|handed)\b", re.I)


def find_laterality_flips(src: NoteMaterial) -> list[Edit]:
    stated = src.transcript_lateralities
    edits = []
    for lat in laterality_mentions(src.note):
        if lat.side not in ("left", "right") or lat.site is None:
            continue
        same_site = [t for t in stated if t.site == lat.site]
        if not any(t.side == lat.side for t in same_site):
            continue
        if any(t.side != lat.side for t in same_site):
            continue  # the transcript names another side of this site too
        word = src.note[lat.start : lat.end]
        other = _OTHER_SIDE.get(word.lower())
        if other is None or _HANDEDNESS.match(src.note, lat.end):
            continue
        after = other.upper() if word.isupper() else match_case(word, other)
        edits.append(
            Edit(
                lat.start,
                lat.end,
                after,
                f"{lat.side} {lat.site} changed to {after}; the transcript names the "
                f"{lat.site} on the {lat.side} only",
            )
        )
    return edits


dose_change = Perturber(
    "dose_change", "error", find_dose_changes, "a stated dose changed to another strength"
)
frequency_change = Perturber(
    "frequency_change", "error", find_frequency_changes, "a stated frequency changed"
)
added_drug = Perturber(
    "added_drug", "error", find_added_drugs, "a medication the transcript never names, in the plan"
)
negation_flip = Perturber(
    "negation_flip", "error", find_negation_flips, "a stated finding's polarity flipped"
)
laterality_flip = Perturber(
    "laterality_flip", "error", find_laterality_flips, "left and right swapped on a stated site"
)
