"""What was not chosen (issue 36, item 6): an error that gives an option the visit turned down
as the plan, and its legitimate counterpart that restates a plan item in other words.

An option is **declined** when a sentence of the transcript turns it down and no later
sentence takes it up:

* the clinician rejects or defers it — "i do n't think you need an x-ray at this stage", "we
  do n't need any x-rays of your chest", "no need for further a1c today", "let's hold off on
  the mri", "i do n't want to start insulin yet", "i would n't recommend …";
* the patient declines it — "i do n't want to take antibiotics", "i'd rather not have …";

where the option is a treatment or test of the knowledge layer (a drug, a procedure, a test;
not a finding, and not a drug class — "you do n't need a diuretic … i want to add aldactone"
turns down one diuretic, not all) that follows the cue with only small words between ("need
[to get any] x-rays"). Taken up later means a later sentence names the same concept with a
cue of a plan ("we'll", "let's", "go ahead", "i'm going to").

* ``declined_plan`` (error) — a sentence giving the declined option as what will be done
  ("We will order an x-ray.", "We will start insulin.") is added after the first plan
  sentence of the note's Plan ("We will …" when there is one), unless a plan sentence of the
  note already does it (names it, not negated).
* ``plan_rewording`` (rewrite) — a plan sentence of the note that says what will be done
  ("We will order an MRI of the lumbar spine.") is said with "We are going to" ("I will" →
  "I am going to"), when most of its content words are the transcript's: the decision stays.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinjudge.grounding.transcript_facts import FINDING_KINDS
from clinjudge.inject.material import NoteMaterial
from clinjudge.inject.types import Edit, Perturber, indefinite_article
from clinjudge.knowledge.concept import Mention
from clinjudge.text.negation import is_negated
from clinjudge.text.normalize import content_tokens
from clinjudge.text.sentences import split_sentences
from clinjudge.text.transcript import parse_transcript
from clinjudge.types import Span

_NT = r"(?:n't|\s+n't|\s+not)"
#: A cue turning an option down: the option follows it.
_DECLINE = re.compile(
    rf"\bi\s+do{_NT}\s+think\s+(?:you|we)\s+(?:really\s+)?need\b"
    rf"|\b(?:we|you)\s+do{_NT}\s+(?:really\s+)?need\b"
    r"|\bno\s+need\s+(?:for|to)\b"
    r"|\bhold\s+off\s+on\b"
    rf"|\bi\s+(?:do{_NT}|would{_NT})\s+(?:want|recommend|suggest)\b"
    r"|\bi(?:'d|\s+would)\s+rather\s+not\b"
    r"|\b(?:not|n't)\s+going\s+to\s+(?:start|order|prescribe|do|put)\b",
    re.I,
)
#: The small words that may stand between a cue and the option it turns down.
_GAP = re.compile(
    r"(?:\s*(?:to|do|get|have|start|put|you|on|any|a|an|the|more|further|another|additional"
    r"|repeat|new|order|take|try|with|for|that|this|go|ahead|and|um|uh|really|,))*\s*",
    re.I,
)
#: A cue of a plan: a later sentence naming the option with one of these takes it up.
_PLAN = re.compile(
    r"\b(?:we'll|we will|let's|i'll|i will|i'm going to|i'm gon na|we're going to|we're gon na"
    r"|go ahead|i want to|i'd like to|i would like to|prescrib\w*|order(?:ed)?|schedul\w*)\b",
    re.I,
)
_OPTION_KINDS = frozenset({"drug", "procedure", "test"})
#: The start of a note's plan sentence saying what will be done.
_WILL = re.compile(r"^(?P<who>We|I)\s+will\s+(?!not\b|continue\b)(?=[a-z])")
_GOING = {"We": "We are going to", "I": "I am going to"}


@dataclass(frozen=True)
class Option:
    """A treatment or test the visit turned down: its words and knowledge concepts."""

    surface: str
    canonical: frozenset[str]
    drug: bool
    said: str


def _is_option(m: Mention) -> bool:
    kinds = set(m.kinds)
    if kinds & (FINDING_KINDS | {"anatomy", "drug_class"}):
        return False
    return bool(kinds & _OPTION_KINDS) or any(c.startswith("CUR:") for c in m.canonical)


def declined_options(src: NoteMaterial) -> list[Option]:
    """The options the transcript turns down and never takes up later (module docstring)."""
    tr = parse_transcript(src.transcript)
    sentences = [s for t in tr.turns for s in split_sentences(t.text)]
    found: list[tuple[int, Option]] = []
    for i, s in enumerate(sentences):
        for cue in _DECLINE.finditer(s.text):
            rest = s.text[cue.end() :]
            m = next(iter(src.kb.concepts_in(rest)), None)
            if m is None or not _GAP.fullmatch(rest[: m.start]) or not _is_option(m):
                continue
            opt = Option(m.surface, frozenset(m.canonical), "drug" in m.kinds, s.text)
            found.append((i, opt))
    out = []
    for i, opt in found:
        later = sentences[i + 1 :]
        if any(_takes_up(src, s.text, opt) for s in later):
            continue
        if all(o.canonical != opt.canonical for o in out):
            out.append(opt)
    return out


def _takes_up(src: NoteMaterial, text: str, opt: Option) -> bool:
    if not _PLAN.search(text):
        return False
    return any(
        set(m.canonical) & opt.canonical and not is_negated(text, m.start, m.end)
        for m in src.kb.concepts_in(text)
    )


def _plan_sentences(src: NoteMaterial) -> list[Span]:
    out = []
    for s in src.sentences:
        section = src.section_at(s.start)
        if section is not None and section.soap == "plan":
            out.append(s)
    return out


def _written(opt: Option, src: NoteMaterial) -> str:
    """The option as the note writes it, else as the transcript does (a short abbreviation in
    capitals: "mri" → "MRI")."""
    named = next((m for m in src.note_mentions if set(m.canonical) & opt.canonical), None)
    if named is not None:
        return named.surface
    word = opt.surface
    return word.upper() if len(word) <= 4 and word.isalpha() else word


def _sentence_for(opt: Option, src: NoteMaterial) -> str:
    name = _written(opt, src)
    if opt.drug:
        return f"We will start {name}."
    low = name.lower()
    countable = " " not in name and not low.endswith(("s", "work", "therapy"))
    article = indefinite_article(name) + " " if countable else ""
    return f"We will order {article}{name}."


def find_declined_plans(src: NoteMaterial) -> list[Edit]:
    plan = _plan_sentences(src)
    if not plan:
        return []
    options = declined_options(src)
    if not options:
        return []
    anchor = next((s for s in plan if _WILL.match(s.text)), plan[0])
    edits = []
    for opt in options:
        if any(
            set(m.canonical) & opt.canonical
            and any(s.start <= m.start < s.end for s in plan)
            and not src.negated_in_note(m.start, m.end)
            for m in src.note_mentions
        ):
            continue  # the note's plan does it: a later decision the transcript reading missed
        new = _sentence_for(opt, src)
        why = f"'{new}' — the visit turned it down: '{opt.said[:100]}'"
        edits.append(Edit(anchor.end, anchor.end, f" {new}", why))
    return edits


def find_plan_rewordings(src: NoteMaterial) -> list[Edit]:
    said = set(src.facts.tokens)
    edits = []
    for s in _plan_sentences(src):
        m = _WILL.match(s.text)
        if not m:
            continue
        words = content_tokens(s.text[m.end() :])
        if len(words) < 2 or sum(w in said for w in words) < 0.6 * len(words):
            continue
        new = _GOING[m.group("who")] + " "
        why = f"'{m.group()}' said '{new.strip()}': the same plan"
        edits.append(Edit(s.start, s.start + m.end(), new, why))
    return edits


declined_plan = Perturber(
    "declined_plan",
    "error",
    find_declined_plans,
    "an option the visit turned down given as the plan",
)
plan_rewording = Perturber(
    "plan_rewording",
    "rewrite",
    find_plan_rewordings,
    "a plan item said in other words, keeping the decision",
)
