"""Assertion status of a term in a sentence, ConText style: negated, historical, hypothetical,
family (SPEC §1: "denies chest pain" ← "no, no chest pain"; a negation flip is a contradiction).

A *trigger* phrase opens a *scope* of following words (pre-triggers: ``"no"``, ``"denies"``,
``"without"``, ``"i don't have"``) or of preceding words (post-triggers, only at the end of a
clause: ``"McMurray's test: negative"``, ``"MI was ruled out"``, ``"allergies: none"``).
A scope stops at ``. ; ? !``, at a terminator (``but``, ``however``, ``although``, ``except``,
``which``, ``other than``, or — forward only — a positive cue such as ``reports``,
``endorses``, ``has``, ``positive``), or when one list item runs longer than
:data:`MAX_ITEM_WORDS` words. Commas, ``or``, ``and``, ``nor`` and ``/`` separate list
items and reset that count, so both the comma-heavy ASR turn ``"no , no chest pain"`` and the
note list ``"denies chest pain, shortness of breath, or swelling in her legs"`` stay in scope.
Pseudo-triggers cancel a trigger they overlap: ``"not only"``, ``"no change"``,
``"no increase"``, ``"not sure if"``, ``"don't know"``.
``"no longer"`` is a negation (the finding is absent now) *and* historical.

Inability is not negation: ``"can't bear weight"``, ``"couldn't sleep"`` are positive findings.

Bounds (issue 35): a text longer than :data:`~clinjudge.text.bounds.MAX_SENTENCE_CHARS` is read
in windows of at most that many characters cut at a blank, and no scope crosses a cut; inside a
window every trigger of a long list shares one walk (the walk after a separator does not depend
on where it began), so a window costs time in proportion to its words. Every pattern here runs
in time linear in the text it reads (``tests/test_regex_budget.py``).

medspacy's ConText was tried first (DESIGN) and again for issue 35 (docs/design-notes.md):
medspacy 1.3.1, still the latest, pins ``spacy<3.8`` on Python 3.11 → thinc 8.2.5 → numpy 1.26,
which breaks this project's numpy-2 packages (ml-dtypes); on the cases of
``tests/test_text_negation.py`` it is right on 24 of 34 and three times slower. The rules here
follow ConText, add UK/ASR forms (``nil``, ``have n't``) and answers after a list (``"fever ,
chills , no"``).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, fields
from functools import lru_cache

from clinjudge.text.bounds import MAX_SENTENCE_CHARS, windows
from clinjudge.text.numbers import lower_same_length

#: A list item (words between separators) longer than this ends a scope.
MAX_ITEM_WORDS = 6
#: Context (family / hypothetical / historical) scopes may run longer.
MAX_CONTEXT_ITEM_WORDS = 8

_NT = r"(?:n['’]t|[ \t]+n['’]t|nt)"
_THEN_VERB = (
    r"(?:\s+(?:have|has|had|been|got|get|gotten|any|experience[ds]?|experiencing|notice[ds]?|"
    r"noticing|see|seen|saw|take|taken|took|feel|felt|think|believe|need|"
    # adverbs between the negation and its verb: "i've not actually had any cough"
    r"actually|really|even|ever|yet|recently|lately|currently)\b){0,3}"
)
#: A need denied, up to its object: "i do n't think that we need to refer you for any further
#: steroid injection , or physical therapy" (the object list is in scope).
_NEED_NOT = rf"""
    \b(?:do|does|did){_NT}\s+(?:(?:think|believe)\s+(?:that\s+)?(?:we|you|i|he|she)\s+
       (?:need|have)|need)\s+
    (?:to\s+[a-z]+\s+(?:(?:you|him|her)\s+)?(?:(?:for|on|with|to|into)\s+)?)?
    (?:(?:any|a|an|the)\s+)?(?:(?:further|more|other|additional)\s+)?
"""
_NEG_PRE = rf"""
    {_NEED_NOT}
  | \b(?:do|does|did|have|has|had|is|was|are|were|wo){_NT}\b{_THEN_VERB}
  | \b(?:no|not|never|nor|neither|without|nil|none|nope|nah|nothing){_THEN_VERB}\b
  | \bno\s+(?:evidence|signs?|history|hx|h/o|complaints?|symptoms?|episodes?)\s+of\b
  | \bno\s+known\b | \bno\s+longer\b | \bnegative\s+for\b | \bfree\s+of\b | \babsence\s+of\b
  | \bunremarkable\s+for\b | \bfail(?:s|ed)?\s+to\s+(?:reveal|show|demonstrate)\b
  | \bden(?:y|ies|ied|ying)\b | \bruled?\s+out\b | \babsent\b
"""
_NEG_POST = r"""
    \b(?:negative|none|nil|absent|resolved)\b
  | \b(?:was|were|been|is|are)?\s*ruled\s+out\b
  | \bnot\s+(?:present|seen|noted|found|detected|appreciated|elicited|heard)\b
    (?:\s+(?:during|on|upon|at|in|with|throughout|bilaterally)\b[^,.;]*)?
  | \bbut\s+no\b(?=\s*(?:[.?!]|$))
"""
_NEG_SELF = r"\b(?:nkda|nka|nkfa)\b"
_PSEUDO = r"""
    \bnot\s+(?:only|just|necessarily|certain|sure|clear)\b
  | \bno\s+(?:change|changes|increase|decrease|further\s+change)\b
  | \b(?:do|does|did){_NT}\s+(?:know|remember|recall|think\s+so)\b | \bnot\s+rule\s+out\b
  | \b(?:can|could)(?:not|{_NT}|\s+not)\s+(?:rule\s+out|exclude)\b | \bgram[\s-]+negative\b
  | \bno\s+(?:problem|worries)\b(?!\s+with) | \bwhether\s+or\s+not\b | \bif\s+not\b
""".replace("{_NT}", _NT)
_NON = r"\bnon\b"  # "non-tender", "non smoker": scope of one word

_FAMILY_PRE = r"""
    \bfamily\s+(?:history|hx)\b | \bf(?:m)?hx?\b
  | \b(?:mother|father|mom|mum|dad|brother|sister|sibling|siblings|aunt|uncle|grandmother|
       grandfather|grandma|grandpa|grandparent|grandparents|cousin|son|daughter|parents?|maternal|paternal)
    (?:['’]s)?(?=\s*(?:[-:–(]|has\b|had\b|have\b|with\b|died\b|passed\b|suffer|was\b|is\b|also\b|history\b|hx\b))
"""
_FAMILY_POST = r"\bruns\s+in\s+(?:the|his|her|their|my)\s+family\b"
_HYPOTHETICAL_PRE = r"""
    \bif\b | \bshould\b | \bin\s+case\b | \bin\s+the\s+event\b | \bunless\b | \bwhether\b
  | \bconsider(?:ing)?\b | \brule\s+out\b | \br/o\b | \bwould\b | \bmay\s+need\b | \bmight\b
  | \b(?:return|come\s+back|call)\s+(?:if|for|with)\b
"""
_HISTORICAL_PRE = r"""
    \b(?:past\s+medical\s+|medical\s+|past\s+surgical\s+|surgical\s+|past\s+)?(?:history|hx)\s+(?:of|significant\s+for)\b
  | \bh/o\b | \bp(?:m|s)hx?\b | \bprevious(?:ly)?\b | \bprior\b | \bstatus\s+post\b | \bs/p\b
  | \bformer(?:ly)?\b | \bex-?(?=smoker|drinker) | \bused\s+to\b | \bno\s+longer\b | \bchildhood\b
  | \bquit\b | \bin\s+the\s+past\b
"""
_HISTORICAL_POST = r"\b(?:ago|in\s+the\s+past|previously|before|last\s+(?:year|month))\b"
_HISTORICAL_PSEUDO = r"""
    (?:\b\d+\s*/\s*\d+|\b(?:\d+|[a-z]+)[\s-]*(?:days?|weeks?|months?|years?|hours?|d|w|wks?))[\s-]+(?:hx|history)\s+of\b
  | \bhistory\s+of\s+(?:present|presenting)\b
"""
_TERMINATORS = r"""
    \b(?:but|however|although|though|except|which|who|whose|yet|whereas|still|because|apart\s+from|
       aside\s+from|other\s+than|reports?|reported|endorses?|endorsed|complains?|complaining|c/o|
       admits?|positive|presents?|presenting|has|have|had|is\s+having|notes?|noted|shows?|showed|
       reveals?|revealed|demonstrates?)\b
"""
_CONTEXT_TERMINATORS = (
    r"\b(?:but|however|although|though|except|whereas|apart\s+from|aside\s+from)\b"
)
_TOKEN_RE = re.compile(r"\d+(?:\.\d+)?|[a-z]+(?:['’][a-z]+)*|[.;?!,/]")
_STOPS = frozenset(".;?!")
#: Words between list items; "such as" and "including" open a list of examples ("denies any
#: other symptoms such as chest pain, shortness of breath or fever"); "as" only after "such".
_SEPARATORS = frozenset({",", "/", "or", "and", "nor", "&", "such", "including"})

_FLAGS = re.IGNORECASE | re.VERBOSE


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _FLAGS)


_RX = {
    name: _rx(p)
    for name, p in {
        "neg_pre": _NEG_PRE, "neg_post": _NEG_POST, "neg_self": _NEG_SELF, "pseudo": _PSEUDO,
        "non": _NON, "fam_pre": _FAMILY_PRE, "fam_post": _FAMILY_POST,
        "hyp_pre": _HYPOTHETICAL_PRE, "hist_pre": _HISTORICAL_PRE, "hist_post": _HISTORICAL_POST,
        "hist_pseudo": _HISTORICAL_PSEUDO, "term": _TERMINATORS, "ctx_term": _CONTEXT_TERMINATORS,
    }.items()
}  # fmt: skip


@dataclass(frozen=True)
class _Scopes:
    negated: tuple[tuple[int, int], ...]
    family: tuple[tuple[int, int], ...]
    hypothetical: tuple[tuple[int, int], ...]
    historical: tuple[tuple[int, int], ...]


def _overlaps(a: int, b: int, spans: list[tuple[int, int]]) -> bool:
    return any(a < e and b > s for s, e in spans)


def _overlaps_sorted(a: int, b: int, starts: list[int], spans: list[tuple[int, int]]) -> bool:
    """:func:`_overlaps` for non-overlapping ``spans`` in text order (``starts`` their starts):
    only the last span starting before ``b`` can reach past ``a``."""
    k = bisect_left(starts, b) - 1
    return k >= 0 and spans[k][1] > a


Word = tuple[int, int]


def _walk(
    tokens, start_i, step, stops_at, max_words, limit_one=False, memo=None
) -> tuple[int, int] | None:
    """Scope from token ``start_i`` walking by ``step`` (+1 forward, -1 backward).

    After a list separator the walk no longer depends on where it began (the item count
    restarts), so ``memo`` keeps, per separator index, the first word after it and the last
    word of the walk: the triggers of one long list share one walk."""
    first: Word | None = None
    last: Word | None = None
    words = 0
    i = start_i
    pending: list[list] = []  # [separator index, first word after it]
    while 0 <= i < len(tokens):
        s, e, tok = tokens[i]
        if tok in _STOPS or s in stops_at:
            break
        if tok in _SEPARATORS or (tok == "as" and i > 0 and tokens[i - 1][2] == "such"):
            if limit_one:
                break
            if memo is not None and i in memo:
                rest_first, rest_last = memo[i]
                if rest_first is not None:
                    _first_after(pending, rest_first)
                    first = rest_first if first is None else first
                    last = rest_last
                break
            if memo is not None:
                pending.append([i, None])
            words = 0
        else:
            words += 1
            if words > max_words:
                break
            first = (s, e) if first is None else first
            last = (s, e)
            _first_after(pending, last)
            if limit_one:
                break
        i += step
    if memo is not None:
        for index, rest_first in pending:
            memo[index] = (rest_first, last if rest_first is not None else None)
    if first is None or last is None:
        return None
    return (first[0], last[1]) if step > 0 else (last[0], first[1])


def _first_after(pending: list[list], word: Word) -> None:
    """``word`` is the first word after each separator still waiting for one (those are the
    last ones of ``pending``)."""
    for entry in reversed(pending):
        if entry[1] is not None:
            break
        entry[1] = word


def _clause_final(tokens, i: int) -> bool:
    return i >= len(tokens) or tokens[i][2] in _STOPS or tokens[i][2] == ","


def _scopes_for(low, tokens, pre, post, pseudo, stops_at, back_stops_at, max_words, one_word=None):
    blocked = [m.span() for m in pseudo.finditer(low)] if pseudo else []
    blocked_starts = [s for s, _ in blocked]
    scopes: list[tuple[int, int]] = []
    starts = [t[0] for t in tokens]
    ends = [t[1] for t in tokens]
    for rx, direction in ((pre, 1), (post, -1), (one_word, 1)):
        if rx is None:
            continue
        memo: dict[int, tuple[Word | None, Word | None]] = {}
        for m in rx.finditer(low):
            if _overlaps_sorted(m.start(), m.end(), blocked_starts, blocked):
                continue
            after = bisect_left(starts, m.end())  # the first token after the trigger
            if direction > 0:
                one = rx is one_word
                scope = _walk(tokens, after, 1, stops_at, max_words, one, None if one else memo)
            else:
                if not _clause_final(tokens, after):
                    continue
                before = bisect_right(ends, m.start()) - 1  # the last token before it
                scope = _walk(tokens, before, -1, back_stops_at, max_words, memo=memo)
            if scope:
                scopes.append(scope)
    return scopes


def _analyse(sentence: str) -> _Scopes:
    """The scopes of ``sentence``, window by window when it is longer than the bound."""
    if len(sentence) <= MAX_SENTENCE_CHARS:
        return _analyse_window(sentence)
    parts = [(a, _analyse_window(sentence[a:b])) for a, b in windows(sentence)]
    shifted = {
        f.name: tuple((s + a, e + a) for a, scopes in parts for s, e in getattr(scopes, f.name))
        for f in fields(_Scopes)
    }
    return _Scopes(**shifted)


@lru_cache(maxsize=8192)
def _analyse_window(sentence: str) -> _Scopes:
    low = lower_same_length(sentence)
    tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN_RE.finditer(low)]
    term = {m.start() for m in _RX["term"].finditer(low)}
    ctx_term = {m.start() for m in _RX["ctx_term"].finditer(low)}
    neg = _scopes_for(
        low,
        tokens,
        _RX["neg_pre"],
        _RX["neg_post"],
        _RX["pseudo"],
        term,
        ctx_term,
        MAX_ITEM_WORDS,
        _RX["non"],
    )
    neg.extend(m.span() for m in _RX["neg_self"].finditer(low))
    if (listed := _LIST_THEN_NO.match(low)) and not _PERSON.search(listed.group(1)):
        neg.append(listed.span(1))  # "headaches or dizziness , no ."
    k = MAX_CONTEXT_ITEM_WORDS
    fam = _scopes_for(low, tokens, _RX["fam_pre"], _RX["fam_post"], None, ctx_term, ctx_term, k)
    hyp = _scopes_for(low, tokens, _RX["hyp_pre"], None, None, ctx_term, ctx_term, k)
    hist = _scopes_for(
        low, tokens, _RX["hist_pre"], _RX["hist_post"], _RX["hist_pseudo"], ctx_term, ctx_term, k
    )
    return _Scopes(tuple(sorted(neg)), tuple(fam), tuple(hyp), tuple(hist))


#: A short verbless list answered by a final "no" ("headaches or dizziness , no ."): the
#: answer denies every item. A word is taken whole (``[a-z'/-]++``, possessive) and so are the
#: spaces after it: a word split into pieces, or a run of spaces shared between two ``\s*``,
#: would be read no differently, and trying every such split was exponential in the length of
#: a word ("left-sided-chest-wall-tenderness-reproducible": 30 s). The list starts at a letter
#: (a first "item" of hyphens or slashes alone is no finding), so the leading ``\W*`` gives
#: characters back in constant time each.
_LIST_THEN_NO = re.compile(
    r"^\W*(?=[a-z])((?:[a-z'/-]++\s*+(?:,|or|and)?\s*+){1,8}?)\s*,\s*"
    r"(?:no|nope|none|neither|never)\s*[.!]?\s*$"
)
_PERSON = re.compile(r"\b(?:i|you|he|she|we|they|it|i'm|i've|have|had|has|is|was|am|are)\b")


def negated_spans(sentence: str) -> list[tuple[int, int]]:
    """Character ranges of ``sentence`` under the scope of a negation trigger (sorted)."""
    return list(_analyse(sentence).negated)


def is_negated(sentence: str, start: int, end: int) -> bool:
    """True when the term ``sentence[start:end]`` overlaps a negation scope."""
    return _overlaps(start, end, list(_analyse(sentence).negated))


def history_or_hypothetical(sentence: str, start: int, end: int) -> str | None:
    """``"family"``, ``"hypothetical"`` or ``"historical"`` (in that priority) when the term
    ``sentence[start:end]`` lies in the scope of such a trigger (``"mother has"``, ``"if"``,
    ``"should"``, ``"in case"``, ``"history of"``, ``"3 years ago"``); else ``None``.
    ``"3/7 hx of diarrhoea"`` and ``"history of present illness"`` are current, not historical."""
    sc = _analyse(sentence)
    for name, spans in (
        ("family", sc.family),
        ("hypothetical", sc.hypothetical),
        ("historical", sc.historical),
    ):
        if _overlaps(start, end, list(spans)):
            return name
    return None


#: Fillers before an answer; the blanks around a comma are taken whole (possessive): shared
#: between two ``\s*`` they doubled the ways to read each filler ("um um um … x": exponential).
_FILLERS = r"(?:(?:um+|uh+|uhm|hmm+|mm+|oh|ah|well|so|okay|ok|and|i\s+mean)\s*+[,.]?\s*+)*"
_NEGATIVE_ANSWER_RE = _rx(
    rf"^\W*{_FILLERS}(?:no\b|nope\b|nah\b|never\b|none\b|negative\b|not\s+(?:really|at\s+all|that\s+i)|"
    rf"i\s+(?:do|did|have|has|had){_NT}\b|i\s+(?:do|did|have)\s+not\b|i\s+haven['’]t\b)"
)
#: "right" that names a side or a moment, not a yes: "right handed", "right knee", "right now".
_NOT_YES_RIGHT = (
    r"[\s-]+(?:handed|hand|side|sided|arm|leg|knee|ankle|foot|hip|shoulder|wrist|elbow|eye|ear|"
    r"breast|lung|kidney|now|away|after|before|here|there)\b"
)
_POSITIVE_ANSWER_RE = _rx(
    rf"^\W*{_FILLERS}(?:yes\b|yeah\b|yep\b|yup\b|uh-huh\b|mm-hmm\b|mhm\b|correct\b|right\b(?!{_NOT_YES_RIGHT})|sure\b|"
    rf"definitely\b|absolutely\b|i\s+do\b|i\s+have\b|i\s+did\b|a\s+little\b|sometimes\b|"
    rf"i(?:['’]ve|\s+have)?\s+noticed\b|i\s+had\b|i['’]ve\s+(?:had|been)\b|some\b|probably\b|"
    rf"i\s+think\s+so\b|kind\s+of\b|sort\s+of\b|maybe\s+a\s+(?:little|bit)\b)"
)


def answer_polarity(utterance: str) -> str | None:
    """``"negative"`` / ``"positive"`` when a reply opens with a no / yes (after fillers such as
    ``"um ,"``), else ``None``: pairs a patient's ``"no"`` with the doctor's question."""
    if _NEGATIVE_ANSWER_RE.match(utterance):
        return "negative"
    if _POSITIVE_ANSWER_RE.match(utterance):
        return "positive"
    return None
