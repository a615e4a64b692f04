"""Blanket negatives of the offline CEF (SPEC §2 step 2 with the section reading of a summary).

A clinical summary often is the content of one section written as a single blanket word:
"None.", "Negative.", "Noncontributory.", "Unremarkable.", "Nothing of note." It names no item,
yet it answers every question of its section: each item asked about is absent. The verifier,
which compares words and concepts, finds nothing to compare and answers IDK. The rules:

- a *blanket* statement is one of those words or phrases alone, after an optional section
  label ("Family history: noncontributory.") — :func:`is_blanket`;
- a *denial* is a statement that opens with a no ("No past surgeries.", "Denies fever.",
  "Negative for rash") or whose clinical concepts are all negated ("He has no fever.") —
  :func:`is_denial`;
- a text is *all negative* when it has at least one blanket statement and every other statement
  is a denial ("Noncontributory.  No previous surgeries.") — :func:`all_negative`.

Answering (:class:`~clinjudge.cef.offline.OfflineCef`): a blanket question ("Does the text state
that 'None'?") asked of prose is YES when the prose is all negative itself; asked of a dialogue,
YES when at least one question of the dialogue was denied and none was confirmed
(:func:`dialogue_denies_all`), else IDK — a dialogue that confirms a finding neither states nor
rules out what the blanket word refers to.

Not applied: answering a *denied source question* YES from an all-negative summary ("No past
surgeries." from "Noncontributory."). It is the literal reading, but MTS-Dialog's annotators
credit a blanket summary with full recall only where the reference is a blanket word itself
(4 dialogues: recall 1.0 for "None." vs "None.", 0.2 for "Noncontributory." vs five denied
conditions), so the rule lowered the coverage–recall agreement (bench/bench_cef.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.claims import split_claims
from clinjudge.text.negation import answer_polarity, is_negated
from clinjudge.text.sections import segment_note

_LABEL = r"(?:[A-Za-z][A-Za-z /&,-]{0,40}:\s*)?"
_BLANKET = re.compile(
    rf"^\W*{_LABEL}(?:none|nil|negative|non-?contributory|unremarkable|not\s+significant"
    r"|nothing(?:\s+(?:significant|to\s+report|of\s+note|pertinent))?"
    r"|no\s+(?:significant|pertinent|relevant)(?:\s+(?:past|medical|surgical|family|social))*"
    r"(?:\s+(?:history|findings?|problems?|issues?))?)(?:\s+(?:known|reported))?\W*$",
    re.I,
)
_DENIAL_OPENER = re.compile(
    r"^\W*(?:no|not|never|nil|without|den(?:y|ies|ied|ying)|negative\s+for)\b", re.I
)


def is_blanket(statement: str) -> bool:
    """A statement that is a blanket negative word alone (module docstring)."""
    return bool(_BLANKET.match(statement.strip()))


def is_denial(statement: str, kb: KnowledgeBase, kinds: Sequence[str] | frozenset[str]) -> bool:
    """A statement that opens with a no, or whose concepts of ``kinds`` are all negated."""
    if _DENIAL_OPENER.match(statement) or answer_polarity(statement) == "negative":
        return True
    mentions = [m for m in kb.concepts_in(statement) if set(m.kinds) & set(kinds)]
    return bool(mentions) and all(is_negated(statement, m.start, m.end) for m in mentions)


def all_negative(text: str, kb: KnowledgeBase, kinds: Sequence[str] | frozenset[str]) -> bool:
    """At least one blanket statement and nothing but denials besides (module docstring)."""
    statements = [c.text for c in split_claims(segment_note(text)) if c.text.strip(" .")]
    blanket = [s for s in statements if is_blanket(s)]
    return bool(blanket) and all(is_blanket(s) or is_denial(s, kb, kinds) for s in statements)


def dialogue_denies_all(polarities: Sequence[str | None]) -> bool:
    """At least one denied question and no confirmed one, from the dialogue's fact polarities."""
    return "negative" in polarities and "positive" not in polarities
