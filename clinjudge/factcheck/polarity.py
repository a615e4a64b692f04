"""Polarity contradiction between a claim and the evidence sentences about it (SPEC §3 step 4,
offline backend).

A study conclusion either asserts an effect ("significantly improves", "is associated with",
"confirms", "is effective", "predicts") or denies one ("no significant difference", "did not",
"was not associated", "failed to", "p > 0.05"). A hallucinated answer often flips it.

- **effect polarity** of a text (:func:`effect_polarity`): ``"null"`` when a denial cue
  (:data:`_NULL`: "no significant difference", "not associated", "did not improve", "failed
  to", "p > 0.05") is present, ``"effect"`` when an assertion cue (:data:`_EFFECT`) is, ``None``
  when neither or both — the assertion cues are looked for outside the denial phrases, so "did
  not significantly improve" is a denial and "A was associated with B but C was not related" is
  mixed (``None``). A bare "did not" is no denial ("patients who did not undergo surgery").
- **matching sentences** (:func:`matching_sentences`): the evidence sentences sharing the most
  content words (stems) with the claim — the best one and any within one word of it — provided
  at least ``min_shared`` (3) words are shared; fewer means the evidence does not speak about
  the claim and no contradiction is read.
- **direction** of a text (:func:`direction`): ``"up"`` (increase, higher, more, improve …) or
  ``"down"`` (decrease, lower, less, reduce …) when it states only that one, else ``None``.
- **contradiction** (:func:`contradiction`): for effect polarity, then direction, the claim has a
  value and *every* matching sentence that has one has the other value (and at least one has
  it). ``null_vs_effect`` (claim denies, evidence asserts) and ``direction_swap`` can be switched
  off; both are on because they helped on MedHallu dev (numbers in
  :mod:`clinjudge.factcheck.support`). The direction check ignores which side of a comparison
  is named first ("A lower than B" = "B higher than A" reads as a swap): a known weakness.

The project's ConText negation (:mod:`clinjudge.text.negation`) scopes negation over clinical
*terms* ("denies chest pain"); here the negated thing is the study effect itself, so the cues are
phrase-level patterns instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinjudge.text.normalize import content_tokens
from clinjudge.text.sentences import split_sentences

_NULL = re.compile(
    r"\b(?:no|not|nor|without)\s+(?:a\s+|any\s+)?(?:statistically\s+)?(?:significant(?:ly)?\s+)?"
    r"(?:significant|significance|difference|differences|association|correlation|effect|impact"
    r"|improvement|benefit|advantage|relationship|relation|influence|role|evidence)\b"
    r"|\bnot\s+(?:statistically\s+|significantly\s+)?(?:be\s+)?(?:significant|associated|related"
    r"|correlated|different|differ|effective|improved?|reduced?|increased?|decreased?|predict\w*"
    r"|superior|better|worse|higher|lower|affect(?:ed)?|influence[d]?|changed?)\b"
    r"|\b(?:did|does|do|was|were|is|are|could|can)(?:\s+not|n['’]t)(?:\s+\w+){0,2}?\s+"
    r"(?:differ\w*|improve\w*|reduce\w*|increase\w*|decrease\w*|affect\w*|show\w*"
    r"|predict\w*|change\w*|associated|correlate\w*|influence\w*|alter\w*"
    r"|benefit\w*|lower\w*|prevent\w*|confirm\w*|support\w*|demonstrate\w*|reach\w*)\b"
    r"|\bfail(?:s|ed|ing)?\s+to\s+\w+|\bnon-?significant\w*\b|\binsignificant\b|\bunchanged\b"
    r"|\bp\s*(?:>|=)\s*0?\.(?:[1-9]|0[5-9])",
    re.I,
)
_EFFECT = re.compile(
    r"\bsignificant(?:ly)?\b|\b(?:improve[sd]?|improving|increase[sd]?|reduce[sd]?|decrease[sd]?"
    r"|enhance[sd]?|lower(?:s|ed)?|raise[sd]?|prevent(?:s|ed)?)\b"
    r"|\b(?:associated|correlated|linked)\s+(?:with|to)\b|\bpredict(?:s|ed|ive|or|ors)?\b"
    r"|\beffective\b|\bconfirm(?:s|ed)?\b|\bsuperior\b|\bp\s*<\s*0?\.0",
    re.I,
)

_UP = re.compile(
    r"\b(?:increase[sd]?|increasing|higher|more|greater|improve[sd]?|improving|better|elevated"
    r"|raise[sd]?|rise|rising)\b",
    re.I,
)
_DOWN = re.compile(
    r"\b(?:decrease[sd]?|decreasing|lower|less|fewer|smaller|reduce[sd]?|reducing|reduction"
    r"|worse|worsen\w*|decline[sd]?|declining|drop(?:s|ped)?)\b",
    re.I,
)


def direction(text: str) -> str | None:
    """``"up"`` or ``"down"`` when the text states only that direction of change, else ``None``."""
    up, down = bool(_UP.search(text)), bool(_DOWN.search(text))
    return "up" if up and not down else "down" if down and not up else None


@dataclass(frozen=True)
class PolarityRule:
    """Thresholds of the polarity check (module docstring)."""

    min_shared: int = 3
    null_vs_effect: bool = True
    direction_swap: bool = True


def effect_polarity(text: str) -> str | None:
    """``"null"`` (denies an effect), ``"effect"`` (asserts one) or ``None`` (neither)."""
    null, effect = _NULL.search(text), _EFFECT.search(_NULL.sub(" ", text))
    if null and effect:
        return None
    if null:
        return "null"
    return "effect" if effect else None


def matching_sentences(claim: str, evidence: str, min_shared: int = 3) -> list[str]:
    """Evidence sentences sharing the most content words with ``claim`` (module docstring)."""
    words = set(content_tokens(claim))
    scored = []
    for span in split_sentences(evidence):
        sentence = evidence[span.start : span.end]
        scored.append((len(words & set(content_tokens(sentence))), sentence))
    best = max((n for n, _ in scored), default=0)
    if best < min_shared:
        return []
    return [s for n, s in scored if n >= best - 1]


def contradiction(claim: str, evidence: str, rule: PolarityRule = PolarityRule()) -> str | None:
    """The evidence sentence contradicting the claim's effect polarity, or ``None``."""
    sentences = matching_sentences(claim, evidence, rule.min_shared)
    checks = [effect_polarity] + ([direction] if rule.direction_swap else [])
    for read in checks:
        mine = read(claim)
        if mine is None or (mine == "null" and not rule.null_vs_effect):
            continue
        polar = [(p, s) for s in sentences if (p := read(s)) is not None]
        if polar and all(p != mine for p, _ in polar):
            return polar[0][1]
    return None
