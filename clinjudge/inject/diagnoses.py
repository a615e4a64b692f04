"""A mechanical wrong-diagnosis error (SPEC §5 taxonomy "wrong diagnosis"; taxonomy type
``wrong_diagnosis``: "A stated diagnosis is replaced by a different diagnosis that the findings
do not support").

``diagnosis_swap`` replaces one diagnosis stated in an assessment or plan section by a
confusable one of the same presentation, taken from the curated table
``data/confusable_diagnoses.toml`` (:func:`confusable_groups`: knee pain → meniscus tear / ACL
tear / osteoarthritis / gout / septic arthritis; chest pain → GERD / angina / costochondritis;
...). The rule, exactly:

1. **Where** — a mention of a table member in an assessment/plan section: a knowledge-base
   mention whose concept class is the member's (:func:`disease_ids`), or the member's written
   name or abbreviation ("lumbar strain", which the knowledge base lacks) — not inside a longer
   disease mention; not negated, not in a family/hypothetical scope
   (``clinjudge.text.negation``); not in a sentence weighing a differential or listing risks
   (:data:`_DIFFERENTIAL`); not a prevention/screening target ("vaccinated against COVID-19");
   not an object ("a 0.5 cm kidney stone", "passing the kidney stone"); not followed by a word
   that makes it a modifier or part of a longer name (:data:`FOLLOWING_WORDS`: "diabetes
   medication", "diabetes type 2"); not bound to a structure only it fits ("meniscus
   sprain", "sprain of the lateral ligament complex").
2. **Stated in the transcript** — the transcript names the diagnosis under one of its names
   (its concept class, asserted at least once or only asked about, never only denied; else the
   written name or abbreviation as words).
3. **Alternatives** — every other member of the member's groups (a group with ``sites``
   applies only when the mention's sentence names a site word: "knee"; a group with
   ``not_after`` not when one of its words comes right before the mention: no "phalanx
   sprain"; a group with ``transcript`` only when the transcript states its presentation:
   "chest pain"), that

   * is not the stated name narrowed or widened ("arthritis" → "rheumatoid arthritis");
   * neither the transcript nor the note names under any name
     (:func:`clinjudge.inject.errors.named_anywhere`, plus the written name/abbreviation);
   * the knowledge base does not relate to the stated diagnosis (``KnowledgeBase.related``:
     same class, ``is_a`` one step either way, ``has_symptom`` ...): "diabetes" never becomes
     "type 1 diabetes";
   * no finding of the transcript points to: a condition the transcript asserts that the
     knowledge base relates to the alternative but not to the stated diagnosis is evidence
     *for* the alternative, and the swap is refused (the group's presentation itself, "knee
     pain", is shared and does not count).
4. **Fluency** — case as written (a sentence start is capitalised, an ALL-CAPS heading stays
   ALL CAPS, an abbreviation becomes the alternative's abbreviation when it has one, else its
   name), a plural stays plural (count nouns only: "migraines" → "tension headaches"), and an
   indefinite article before the mention is fixed ("a meniscus tear" → "an ACL tear"; the edit
   then starts at the article; a mass-noun alternative drops it; a count-noun alternative after
   a bare "with"/"for"/"revealed" gains one: "consistent with an ACL tear").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinjudge.inject.confusable import Diagnosis, confusable_groups, disease_ids
from clinjudge.inject.errors import named_anywhere
from clinjudge.inject.material import NoteMaterial, phrase_pattern
from clinjudge.inject.types import Edit, Perturber, indefinite_article, match_case
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.negation import history_or_hypothetical, is_negated

CONDITION_KINDS = frozenset({"disease", "finding", "symptom"})
#: A stated diagnosis followed by one of these words names a drug, test or service, not the
#: diagnosis itself ("diabetes medication", "Lyme disease testing"), or is part of a longer
#: name ("diabetes type 2").
FOLLOWING_WORDS = frozenset(
    {
        *("medication", "medications", "medicine", "medicines", "meds", "regimen", "supplies"),
        *("test", "tests", "testing", "screening", "panel", "titer", "titers"),
        *("educator", "education", "clinic", "specialist", "doctor", "program"),
        *("vaccine", "vaccination", "pain", "symptoms", "flare", "flares"),
        *("type", "mellitus", "relief", "status", "surgery", "repair", "removal", "procedure"),
    }
)
#: A diagnosis tied by the rest of its phrase to a structure only it fits ("sprain of the
#: lateral ligament complex" cannot become a fracture of it).
_BOUND_SITE_BEFORE = re.compile(r"\b(?:menisc\w*|ligaments?|tendons?|muscles?|cartilage)\s+$", re.I)
_BOUND_SITE_AFTER = re.compile(
    r"\s+(?:of|in|involving)\s+(?:the\s+)?[\w\s-]{0,30}?"
    r"\b(?:ligaments?|tendons?|menisc\w*|muscles?|bones?|complex|cartilage)\b",
    re.I,
)
#: Head nouns that take a plural ``s`` ("tension headaches", "kidney stones").
COUNT_NOUNS = frozenset(
    {
        *("tear", "headache", "migraine", "fracture", "sprain", "strain", "contusion", "disc"),
        *("stone", "cyst", "ulcer", "infection", "attack"),
    }
)
ASSESSMENT_SECTIONS = frozenset({"assessment", "plan"})
#: Words before a disease name that make it a prevention or screening target, not a diagnosis.
_PREVENTION_BEFORE = re.compile(
    r"\b(?:vaccinated|vaccines?|vaccination|immuni[sz]ed|screen(?:ed|ing)?|risks?|prevent\w*"
    r"|prophylaxis|exposed|exposure)(?:\s+(?:against|for|of|to))?\s+$",
    re.I,
)
#: A sentence weighing several candidate diagnoses, or listing risks: its items are not stated
#: diagnoses.
_DIFFERENTIAL = re.compile(
    r"\b(?:differential|etiolog\w*|versus|vs|rule\s+out|r/o|possible|possibly|risks?"
    r"|complications?|side\s+effects?)\b",
    re.I,
)
_ARTICLE_BEFORE = re.compile(r"(?<![\w-])(an?)[ \t]+$", re.I)
#: Words after which a singular count noun needs an article ("consistent with an ACL tear").
_BARE_BEFORE = re.compile(
    r"(?<![\w-])(?:with|for|of|revealed|reveals|showed|shows|demonstrated|demonstrates|has|had"
    r"|have|is|was|sustained|suffered)[ \t]+$",
    re.I,
)
#: A disease named as an object ("passing the kidney stone"): not a diagnosis to swap.
_OBJECT_BEFORE = re.compile(
    r"\b(?:pass(?:ing|ed|es)?|remov\w*|extract\w*|size\s+of)\s+(?:the|a|an|his|her|this)?\s*$",
    re.I,
)
_SIZE_BEFORE = re.compile(
    r"\d\s*(?:cm|mm|centimeters?|millimeters?|inch(?:es)?)\b[\w\s,-]{0,20}$", re.I
)


# -- where a diagnosis is stated -------------------------------------------------------------


@dataclass(frozen=True)
class _Stated:
    start: int
    end: int
    member: Diagnosis
    canonical: tuple[str, ...]


def _stated_diagnoses(src: NoteMaterial, members: list[Diagnosis]) -> list[_Stated]:
    """Mentions of table members in assessment/plan sections (rule 1, without the sentence
    tests): knowledge-base mentions first, then written names the scan misses."""
    diseases = [m for m in src.note_mentions if "disease" in m.kinds]
    found: dict[tuple[int, int], _Stated] = {}
    for m in diseases:
        for d in members:
            if d.ids & set(m.canonical):
                found.setdefault((m.start, m.end), _Stated(m.start, m.end, d, m.canonical))
    for d in members:
        for phrase in filter(None, (d.name, d.abbr)):
            for hit in phrase_pattern(phrase).finditer(src.note):
                found.setdefault(hit.span(), _Stated(*hit.span(), d, tuple(d.ids)))
    spans = [(m.start, m.end) for m in diseases] + list(found)
    out = []
    for (a, b), s in sorted(found.items()):
        inside = any(x <= a and b <= y and (x, y) != (a, b) for x, y in spans)
        section = src.section_at(a)
        if not inside and section is not None and section.soap in ASSESSMENT_SECTIONS:
            out.append(s)
    return out


def _in_scope(src: NoteMaterial, s: _Stated) -> tuple[int, int] | None:
    """The sentence span of a stated diagnosis that is asserted for the patient, else None."""
    sentence = src.sentence_at(s.start)
    if sentence is None or s.end > sentence.end:
        return None
    a, b = s.start - sentence.start, s.end - sentence.start
    if is_negated(sentence.text, a, b) or history_or_hypothetical(sentence.text, a, b) in {
        "family",
        "hypothetical",
    }:
        return None
    following = re.match(r"[\s-]*([A-Za-z]+)", src.note[s.end : s.end + 30])
    if following and following.group(1).lower() in FOLLOWING_WORDS:
        return None
    if _BOUND_SITE_AFTER.match(src.note, s.end, sentence.end) or _BOUND_SITE_BEFORE.search(
        src.note, sentence.start, s.start
    ):
        return None
    if _DIFFERENTIAL.search(sentence.text) or _PREVENTION_BEFORE.search(
        src.note, max(sentence.start, s.start - 40), s.start
    ):
        return None
    window = max(sentence.start, s.start - 30)
    if _SIZE_BEFORE.search(src.note, window, s.start) or _OBJECT_BEFORE.search(
        src.note, window, s.start
    ):
        return None  # "a 0.5 cm kidney stone", "passing the stone": an object, not a diagnosis
    return sentence.start, sentence.end


def _transcript_names(src: NoteMaterial, s: _Stated) -> bool:
    """Rule 2: the transcript names the stated diagnosis, not only to deny it."""
    if set(s.canonical) & src.transcript_concepts:
        return not src.facts.denied_only(s.canonical)
    d = s.member
    return any(src.transcript_says(p) for p in (d.name, d.abbr, src.note[s.start : s.end]) if p)


# -- the alternatives ------------------------------------------------------------------------


def _transcript_findings(src: NoteMaterial) -> set[str]:
    """Conditions the transcript asserts (not denied, not only asked about), lower-case."""
    return {
        m.surface.lower()
        for mentions in src.facts.mentions
        for m in mentions
        if m.kinds & CONDITION_KINDS and m.negated is False
    }


def _alternatives(
    src: NoteMaterial, s: _Stated, sentence: str, related: dict
) -> list[tuple[Diagnosis, str]]:
    """Rule 3: ``(alternative, presentation)`` pairs for a stated diagnosis."""

    def rel(a: str, b: str) -> bool:
        if (a, b) not in related:
            related[a, b] = src.kb.related(a, b) is not None
        return related[a, b]

    d, surface = s.member, src.note[s.start : s.end]
    findings = _transcript_findings(src)
    out: dict[str, tuple[Diagnosis, str]] = {}
    for g in confusable_groups(src.kb):
        if d not in g.members:
            continue
        if g.sites and not any(phrase_pattern(w).search(sentence) for w in g.sites):
            continue
        if g.transcript and not any(src.transcript_says(p) for p in g.transcript):
            continue
        preceding = re.search(r"(?<!\w)(\w+)\W*$", src.note[max(0, s.start - 30) : s.start])
        if preceding and preceding.group(1).lower() in {w.lower() for w in g.not_after}:
            continue
        for alt in g.members:
            if alt.name in out or alt.ids & (d.ids | set(s.canonical)):
                continue
            if _words_within(surface, alt.name) or _words_within(alt.name, surface):
                continue  # "arthritis" -> "rheumatoid arthritis" narrows, it does not swap
            if named_anywhere(src, alt.kb_term, CONDITION_KINDS) or any(
                phrase_pattern(p).search(text)
                for p in (alt.name, alt.abbr)
                if p
                for text in (src.note, src.transcript)
            ):
                continue
            if rel(d.kb_term, alt.kb_term) or rel(surface, alt.kb_term):
                continue
            shared = (g.presentation, *g.transcript)  # the presentation is no evidence
            if any(
                rel(alt.kb_term, c) and not rel(d.kb_term, c) and not rel(surface, c)
                for c in findings
                if c not in shared
            ):
                continue
            out[alt.name] = (alt, g.presentation)
    return list(out.values())


def _words_within(short: str, long: str) -> bool:
    """Whether ``short`` occurs in ``long`` as whole words (case-insensitive)."""
    return bool(phrase_pattern(short).search(long))


# -- fluent replacement ----------------------------------------------------------------------


def _plural(kb: KnowledgeBase, s: _Stated, surface: str) -> bool:
    """Whether the mention is the plural of its diagnosis ("migraines", "CHFs")."""
    low = surface.lower()
    if not low.endswith("s") or low in {s.member.name.lower(), s.member.abbr.lower()}:
        return False
    return low[:-1] in {s.member.name.lower(), s.member.abbr.lower()} or bool(
        disease_ids(kb, low[:-1]) & set(s.canonical)
    )


def _written(src: NoteMaterial, s: _Stated, alt: Diagnosis) -> str | None:
    """The alternative written the way the stated diagnosis is (rule 4), without the article."""
    surface = src.note[s.start : s.end]
    is_abbr = surface == s.member.abbr or (
        " " not in surface and len(surface) <= 5 and surface.isupper()
    )
    text = (alt.abbr or alt.name) if is_abbr else alt.name
    if _plural(src.kb, s, surface):
        if text.split()[-1].lower() not in COUNT_NOUNS:
            return None
        text += "s"
    if not is_abbr and surface.isupper() and surface != s.member.name:
        return text.upper()
    before = src.note[: s.start].rstrip(" \t")
    if not before or before[-1] in ".!?:\n•-*" or (not is_abbr and _title_case(surface)):
        return text[:1].upper() + text[1:]
    return text


def _title_case(surface: str) -> bool:
    words = [w for w in surface.split() if w[:1].isalpha()]
    return len(words) > 1 and all(w[0].isupper() for w in words)


def _countable(name: str) -> bool:
    return name.split()[-1].lower() in COUNT_NOUNS


def _edit(src: NoteMaterial, s: _Stated, alt: Diagnosis, why: str) -> Edit | None:
    """The edit writing ``alt`` for the stated diagnosis, with the indefinite article fixed: a
    count noun after a bare preposition or verb gains one ("consistent with an ACL tear"), a
    mass noun loses one ("a meniscus tear" → "osteoarthritis"), "a"/"an" follows the sound."""
    text = _written(src, s, alt)
    if text is None:
        return None
    before = src.note[max(0, s.start - 30) : s.start]
    article = _ARTICLE_BEFORE.search(before)
    plural = text.endswith("s") and _countable(text[:-1])
    if article:
        start = s.start - len(article.group())
        if not _countable(text) or plural:
            return Edit(start, s.end, match_case(article.group(1), text), why)
        new = match_case(article.group(1), indefinite_article(text))
        if new == article.group(1):
            return Edit(s.start, s.end, text, why)
        return Edit(start, s.end, new + article.group()[len(article.group(1)) :] + text, why)
    if _countable(text) and not plural and _BARE_BEFORE.search(before):
        return Edit(s.start, s.end, f"{indefinite_article(text)} {text}", why)
    return Edit(s.start, s.end, text, why)


def find_diagnosis_swaps(src: NoteMaterial) -> list[Edit]:
    members = list({d.name: d for g in confusable_groups(src.kb) for d in g.members}.values())
    related: dict = {}
    edits = []
    for s in _stated_diagnoses(src, members):
        span = _in_scope(src, s)
        if span is None or not _transcript_names(src, s):
            continue
        surface = src.note[s.start : s.end]
        for alt, presentation in _alternatives(src, s, src.note[span[0] : span[1]], related):
            why = (
                f"diagnosis '{surface}' replaced by {alt.name} ({presentation}); the transcript "
                f"names {s.member.name}, never {alt.name} nor a condition related to it"
            )
            edit = _edit(src, s, alt, why)
            if edit is not None:
                edits.append(edit)
    return edits


diagnosis_swap = Perturber(
    "diagnosis_swap",
    "error",
    find_diagnosis_swaps,
    "a stated diagnosis replaced by a confusable one the transcript does not support",
)
