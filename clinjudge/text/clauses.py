"""Clause boundaries inside a note sentence: where one statement ends and the next begins
("continue her medications, and the physician will recheck … in four months"), so a value,
a drug and a finding are read with the statement they belong to; and what a duration says
in its clause (when, or how long)."""

from __future__ import annotations

import re

from clinjudge.text.quantities import Quantity

#: A boundary between two statements: a full stop or semicolon, a comma before a conjunction
#: or a new subject, or "and"/"but" before a new subject.
CLAUSE_BREAK = re.compile(
    r";|\.(?=\s+[A-Z]|\s+[-–•*]\s|\s*$)"  # a full stop (before a bullet too), not a decimal
    # point or "p.o. b.i.d."
    r"|,\s*(?:and|but|so|then|while|which|who|she|he|they|we|i|the|her|his)\b"
    r"|\b(?:and|but)\s+(?:she|he|they|we|i|the\s+(?:patient|physician|doctor))\b",
    re.I,
)


def clause_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the clause of ``text`` holding ``text[start:end]`` (the whole text when it
    has one clause)."""
    left, right = 0, len(text)
    for m in CLAUSE_BREAK.finditer(text):
        if m.end() <= start:
            text_of = m.group()
            left = m.end() if text_of.strip() in (".", ";") else m.start() + text_of.startswith(",")
        elif m.start() >= end:
            right = m.start()
            break
    return left, right


#: What comes before a duration counted from now ("in four months", "within 2 weeks").
_FROM_NOW = re.compile(
    r"\b(?:in|within|after|every)\s+(?:about\s+|another\s+|the\s+next\s+)?$", re.I
)


def from_now(text: str, q: Quantity) -> bool:
    """A duration that says when ("recheck in four months"), not how long ("for four
    months")."""
    return q.kind == "duration" and bool(_FROM_NOW.search(text[: q.start]))


#: A change of regimen whose new value follows ("increase the lisinopril to 40 milligrams",
#: "bump your metformin up to fifteen hundred milligrams daily", "the new prescription will be
#: for four milligrams", "we can prescribe guaifenesin six hundred milligrams").
_CHANGE_TO = re.compile(
    r"(?:\b(?:increas\w*|decreas\w*|rais\w*|lower\w*|reduc\w*|bump\w*|up\w*|chang\w*"
    r"|switch\w*|titrat\w*|adjust\w*|doubl\w*|cut\w*)\b[^.;?!]{0,40}?\bto\b"
    r"|\bnew\s+(?:prescription|dose|dosage|regimen)\b|\bprescrib\w*\b)[^.;?!]{0,40}$",
    re.I,
)


def change_target(text: str, q: Quantity) -> bool:
    """A value that is the new dose or schedule of a change ("increase … to 40 mg daily"),
    not the regimen the patient is on: within its clause, a change verb and "to" come before
    it."""
    left, _ = clause_around(text, q.start, q.end)
    return bool(_CHANGE_TO.search(text[max(left, q.start - 80) : q.start]))
