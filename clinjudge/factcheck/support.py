"""Evidence support of a claim for prose evidence (SPEC §3 step 4, offline backend).

A claim is read against the text of its retrieved passages. What counts is what the claim asserts
that the evidence never states — its *unsupported specifics*:

- **novel terms**: words of the claim (alphabetic, ≥ 4 letters) whose stem occurs nowhere in the
  evidence and whose English word frequency is below ``common_zipf`` on the Zipf scale
  (``wordfreq``; Zipf 5.0 = 10 per million words). Everyday and report words are at or above
  it ("results" 5.2, "study" 5.3, "treatment" 5.0, "women" 5.6) and never count; below it are
  specific terms ("calcium" 3.8, "hypertension" 3.4, "proteases" 2.4) but also words of
  argument. Those of :data:`DISCOURSE` (hedges, reporting and conclusion words: "suggest",
  "findings", "therefore", "warranted") never count; one to three other novel words are
  tolerated and only a count of ``max_novel_terms`` (4) makes a claim unsupported;
- **novel strength**: words of :data:`STRENGTH` the evidence never uses — the claim asserts
  statistical significance ("significantly"), superiority ("superior", "inferior"), size
  ("markedly", "dramatically"), necessity ("essential", "crucial"), certainty ("always",
  "never", "clearly", "proven") or exclusivity ("primarily", "solely") that the evidence does not
  state. One is enough: an overstated effect is the commonest way a fluent answer departs from
  its source;
- **novel concepts**: clinical knowledge-base concepts (diseases, symptoms, findings, drugs, drug
  classes, procedures, tests) mentioned by the claim and by no passage, compared by canonical id so
  a synonym or brand name in the evidence counts as stated;
- **novel numbers**: a number of the claim (with its unit or ``%`` when it has one) whose value the
  evidence never writes — a dose, a percentage, a year, a count;
- **novel sources**: a named source the evidence does not name — "published in", "journal",
  "et al", "researchers at/from", "university", "institute";
- **contradiction**: the evidence sentences about the claim say the opposite — it denies the
  effect the claim asserts ("no significant difference" against "significantly improves") or the
  reverse, or states only the other direction of change ("lower" against "higher")
  (:mod:`clinjudge.factcheck.polarity`).

**Hedged inference.** A claim worded as a possibility, an interpretation or a recommendation
(:data:`_HEDGE`: "may", "might", "could", "should", "suggests", "appears", "seems", "possibly",
"potentially", "perhaps", "probably") draws a conclusion from the findings rather than reporting
one; its wording necessarily goes beyond the evidence's. Its novel terms are listed but not
counted (``hedged_inference``); its concepts, numbers, sources, strength words and contradictions
are checked as for any claim — "may be inherited" passes on evidence about heredity, "may reduce
mortality by 30%" does not pass on evidence without that number.

Rule (:class:`SupportRule`): ``supported`` ⇔ no novel concept, number, source or strength word,
no contradiction, and (the claim is hedged or it has fewer than ``max_novel_terms`` counted novel
terms). The continuous score kept with the verdict is

    support_score = 1 / (1 + n_counted_terms + n_novel_strength + n_novel_concepts
                         + n_novel_numbers + n_novel_sources + [contradicted])

(1 = nothing unstated; each unsupported specific lowers it; a hedged claim's terms are not
counted).

Tuned on the even rows of MedHallu (bench/bench_factcheck.py, ``--split dev``): variants were
ranked by dev, the odd rows shown only beside. Paired AUROC of 1 − unsupported rate, dev / held-out:

- counts of novel terms, concepts, numbers, sources (Zipf cut 4.5–6.0 and counts 1–4 tried):
  0.680 / 0.676; with the contradiction check 0.684 / 0.678 (support score 0.754 / 0.720);
- then, with the lists of this module: novel terms not counted for hedged claims 0.741 / 0.731;
  plus strength words 0.768 / 0.769; plus discourse words never counted 0.776 / 0.767 (the rule;
  support score 0.829 / 0.836, ties 32% / 31%). Taking one part out of the rule: without hedged
  inference 0.726 / 0.709, without strength words 0.750 / 0.729. Most of the gain is on pairs
  where both answers were flagged: ground-truth conclusions hedge ("our findings suggest … may
  …"), hallucinated answers overstate ("significantly increases", "is essential"). Counting
  subgroup words ("particularly") or "compared" as strength, or "can" as a hedge, moved dev by
  ±0.003 and were left out.

Why absolute counts and not the share of novel words: a hallucinated answer asserts several
invented specifics in one sentence, and a ground-truth conclusion generalises in common words —
the share of novel words (paired AUROC 0.62 on dev) is worse than the count (0.68). See
:mod:`clinjudge.factcheck.rate` for what else was tried and did not work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from wordfreq import zipf_frequency

from clinjudge.factcheck.decompose import CLINICAL_KINDS
from clinjudge.factcheck.polarity import PolarityRule, contradiction
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.text.normalize import stem, word_tokens

_NUMBER = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)(\s?%|\s?(?:[a-zA-Zµ]+(?:/[a-zA-Z]+)?))?")
_SOURCE = re.compile(
    r"\b(?:published|journal|et al|researchers? (?:at|from)|university|institute)\b", re.I
)
_TERM = re.compile(r"[A-Za-z][A-Za-z-]*[A-Za-z]")
#: A claim worded as a possibility, an interpretation or a recommendation (hedged inference).
_HEDGE = re.compile(
    r"\b(?:may|might|could|should|suggests?|suggested|suggesting|appears?|appeared|seems?"
    r"|possibly|possible|potentially|perhaps|probably)\b",
    re.I,
)


def _stem_set(words: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words.split())


#: Hedges, reporting and conclusion words: never unsupported specifics (stems).
DISCOURSE = _stem_set(
    "suggest suggests suggested suggesting suggestion appear appears appeared apparently seem "
    "seems seemed indicate indicates indicated indicating likely unlikely possibly possible "
    "perhaps probably probable presumably plausible conclude concluded conclusion conclusions "
    "therefore thus hence overall findings finding results data evidence study studies research "
    "further additional future larger needed warranted"
)
#: Words asserting significance, superiority, size, necessity, certainty or exclusivity (stems).
STRENGTH = _stem_set(
    "significantly significant superior inferior markedly substantially dramatically greatly "
    "essential crucial always never definitely certainly undoubtedly clearly proven primarily "
    "predominantly exclusively solely"
)


@dataclass(frozen=True)
class SupportRule:
    """Thresholds of the support rule (module docstring)."""

    common_zipf: float = 5.0
    max_novel_terms: int = 4
    min_term_letters: int = 4
    hedged_inference: bool = True
    strength_words: bool = True
    polarity: PolarityRule | None = PolarityRule()


@dataclass
class Support:
    """What a claim asserts that the evidence does not state, and the verdict it leads to.
    ``novel_terms`` are listed for a hedged claim too; ``terms_counted`` says whether they
    counted."""

    supported: bool
    score: float
    novel_terms: list[str] = field(default_factory=list)
    novel_concepts: list[str] = field(default_factory=list)
    novel_numbers: list[str] = field(default_factory=list)
    novel_sources: list[str] = field(default_factory=list)
    contradicted_by: str | None = None
    novel_strength: list[str] = field(default_factory=list)
    hedged: bool = False
    terms_counted: bool = True

    def rationale(self) -> str:
        words = "specific words absent from the evidence"
        if not self.terms_counted:
            words += " (not counted: the claim is a hedged inference)"
        found = [
            f"{label}: {', '.join(items)}"
            for label, items in (
                ("numbers absent from the evidence", self.novel_numbers),
                ("sources the evidence does not name", self.novel_sources),
                ("clinical concepts the evidence never mentions", self.novel_concepts),
                ("strength the evidence does not state", self.novel_strength),
                (words, self.novel_terms),
            )
            if items
        ]
        if self.contradicted_by:
            found.insert(0, f"the evidence says the opposite: {self.contradicted_by!r}")
        detail = "; ".join(found) or "every specific of the claim is in the evidence"
        verdict = "supported" if self.supported else "not supported"
        return f"{verdict} (support score {self.score:.2f}; {detail})"


@lru_cache(maxsize=65536)
def _zipf(word: str) -> float:
    return zipf_frequency(word, "en")


def _stems(text: str) -> set[str]:
    return {stem(w.lower()) for w, _, _ in word_tokens(text)}


def _novel_words(claim: str, evidence: str, min_letters: int) -> list[str]:
    """Lowercase words of ``claim`` (≥ ``min_letters``, hyphenated parts apart) whose stem the
    evidence never uses, once each, in claim order."""
    stems = _stems(evidence)
    out: list[str] = []
    for match in _TERM.finditer(claim):
        for word in match.group().split("-"):
            low = word.lower()
            if len(low) >= min_letters and low not in out and stem(low) not in stems:
                out.append(low)
    return out


def novel_terms(claim: str, evidence: str, rule: SupportRule = SupportRule()) -> list[str]:
    """Uncommon words of ``claim`` whose stem the evidence never uses, in claim order — neither
    discourse words nor (when the rule checks them) strength words."""
    skip = DISCOURSE | (STRENGTH if rule.strength_words else frozenset())
    return [
        w
        for w in _novel_words(claim, evidence, rule.min_term_letters)
        if _zipf(w) < rule.common_zipf and stem(w) not in skip
    ]


def novel_strength(claim: str, evidence: str) -> list[str]:
    """Strength words (:data:`STRENGTH`) of ``claim`` whose stem the evidence never uses."""
    return [w for w in _novel_words(claim, evidence, 1) if stem(w) in STRENGTH]


def is_hedged(claim: str) -> bool:
    """The claim is worded as a possibility, interpretation or recommendation (``_HEDGE``)."""
    return _HEDGE.search(claim) is not None


def _value(text: str) -> float:
    return float(text.replace(",", "") if text.count(",") == 1 and "." not in text else text)


def novel_numbers(claim: str, evidence: str) -> list[str]:
    """Numbers of ``claim`` (shown with their unit) whose value is not written in the evidence."""
    stated = {_value(m.group(1)) for m in _NUMBER.finditer(evidence)}
    out = []
    for m in _NUMBER.finditer(claim):
        if _value(m.group(1)) not in stated:
            out.append(m.group(0).strip())
    return list(dict.fromkeys(out))


def novel_sources(claim: str, evidence: str) -> list[str]:
    """Named-source cues of ``claim`` that the evidence does not contain."""
    low = evidence.lower()
    return list(dict.fromkeys(m.lower() for m in _SOURCE.findall(claim) if m.lower() not in low))


def novel_concepts(
    claim: str, passages: list[str], kb: KnowledgeBase, cache: dict[str, set[str]] | None = None
) -> list[str]:
    """Surface forms of the claim's clinical concepts that no passage mentions (by canonical id).
    ``cache`` (passage text → canonical ids) spares re-reading passages shared by claims."""
    cache = {} if cache is None else cache
    stated: set[str] = set()
    for text in passages:
        if text not in cache:
            cache[text] = {c for m in kb.concepts_in(text) for c in m.canonical}
        stated |= cache[text]
    out = []
    for m in kb.concepts_in(claim):
        if set(m.kinds) & CLINICAL_KINDS and not set(m.canonical) & stated:
            out.append(m.surface)
    return list(dict.fromkeys(out))


def assess(
    claim: str,
    passages: list[str],
    kb: KnowledgeBase,
    rule: SupportRule = SupportRule(),
    cache: dict[str, set[str]] | None = None,
) -> Support:
    """Support of ``claim`` by the passage texts ``passages`` (rule in the module docstring)."""
    evidence = "\n".join(passages)
    terms = novel_terms(claim, evidence, rule)
    strength = novel_strength(claim, evidence) if rule.strength_words else []
    concepts = novel_concepts(claim, passages, kb, cache)
    numbers = novel_numbers(claim, evidence)
    sources = novel_sources(claim, evidence)
    against = contradiction(claim, evidence, rule.polarity) if rule.polarity else None
    hedged = is_hedged(claim)
    counted = not (hedged and rule.hedged_inference)
    n_terms = len(terms) if counted else 0
    n = n_terms + len(strength) + len(concepts) + len(numbers) + len(sources)
    n += against is not None
    supported = n_terms < rule.max_novel_terms and not (
        strength or concepts or numbers or sources or against
    )
    return Support(
        supported=supported,
        score=1.0 / (1.0 + n),
        novel_terms=terms,
        novel_concepts=concepts,
        novel_numbers=numbers,
        novel_sources=sources,
        contradicted_by=against,
        novel_strength=strength,
        hedged=hedged,
        terms_counted=counted,
    )
