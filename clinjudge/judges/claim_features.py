"""What the offline verifier measured about one claim, as named numbers (SPEC §1, steps 2–5).

The rules of :mod:`clinjudge.judges.offline` decide most claims; what they measure on the way
— how many of the claim's words the transcript states, how close its best evidence sentence is,
which *kinds* of words are unaccounted for — is kept here as a flat feature vector, so that a
combiner (:mod:`clinjudge.judges.combiner`) can weigh them against reference labels instead of
a cascade of hand-set thresholds.

Unaccounted words ("novel": not in the evidence window, not inside a verified quantity or a
concept stated in other words) are typed, because a reviewer weighs them differently:
``name`` (a capitalised word inside a sentence that names no concept: a surname the visit never
says), ``number``, ``concept`` (a knowledge-base concept: a drug, disease, symptom, finding,
procedure or test), ``rare`` (an uncommon English word, Zipf < 4 in ``wordfreq``: ``nondistended``,
``cyanosis``), and ``common`` (everyday words, mostly the note's own wording).

Also measured on the development labels and left out because they separated nothing (AUROC
0.50–0.51): the clinician's statement reported as the patient's ("she reports" whose best
evidence is the doctor's), soft status conflicts with the evidence window, and "drug X for
condition Y" pairs the visit never names within two sentences.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from wordfreq import zipf_frequency

from clinjudge.grounding.transcript_facts import ConceptMention, TranscriptFacts
from clinjudge.judges.offline_rules import ClaimAnalysis
from clinjudge.types import Claim, KnowledgeEntry, Verdict

VOCABULARY_PATH = Path(__file__).with_name("data") / "note_vocabulary.tsv"
#: Zipf frequency under which an unaccounted word counts as ``rare``.
RARE_ZIPF = 4.0


def _words(block: str) -> list[str]:
    return block.split()


#: Words that open many note sentences in capitals without naming anyone.
_NOT_NAMES = frozenset(
    _words(
        """i mr mrs ms miss dr the he she his her they patient plan follow continue no denies
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday"""
    )
)
_TITLES = ("Mr.", "Mrs.", "Ms.", "Dr.", "Mr", "Mrs", "Ms", "Dr")
_CAPITALISED = re.compile(r"[A-Z][a-z]+(?:['’-][A-Za-z]+)?")


def capitalised_names(text: str, mentions: Sequence[ConceptMention]) -> list[tuple[int, int]]:
    """Spans of capitalised words inside a sentence that name no knowledge concept: the
    candidates for a person's name ("Joyce *Price*", "Mr. *Moore*"). The first word of the
    claim, of a line, or after ``:``/``.``/a bullet is capitalised by grammar, not by name."""
    spans = []
    for m in _CAPITALISED.finditer(text):
        before = text[: m.start()].rstrip()
        titled = before.endswith(_TITLES)
        if (not before or before[-1] in ".:;!?•-*#\n(") and not titled:
            continue
        if m.group().lower() in _NOT_NAMES:
            continue
        if any(c.start <= m.start() and m.end() <= c.end for c in mentions):
            continue
        spans.append((m.start(), m.end()))
    return spans


@dataclass(frozen=True)
class NovelWords:
    """The claim's unaccounted content words, by type (module docstring)."""

    name: tuple[str, ...] = ()
    number: tuple[str, ...] = ()
    concept: tuple[str, ...] = ()
    rare: tuple[str, ...] = ()
    common: tuple[str, ...] = ()
    unsaid: tuple[str, ...] = ()  # those the visit never says anywhere, not only near the claim

    def specifics(self) -> list[str]:
        """Every unaccounted word except everyday wording, most telling first."""
        return [*self.name, *self.number, *self.concept, *self.rare]


def type_novel_words(
    text: str,
    tokens: Iterable[tuple[str, int, int]],
    covered: Iterable[bool],
    mentions: Sequence[ConceptMention],
) -> NovelWords:
    """Split the tokens not ``covered`` into the types of :class:`NovelWords`."""
    names = capitalised_names(text, mentions)
    groups: dict[str, list[str]] = {k: [] for k in ("name", "number", "concept", "rare", "common")}
    for (token, start, end), ok in zip(tokens, covered, strict=True):
        if ok:
            continue
        surface = text[start:end]
        if token[:1].isdigit():
            kind = "number"
        elif any(s <= start and end <= e for s, e in names):
            kind = "name"
        elif any(m.start <= start and end <= m.end for m in mentions):
            kind = "concept"
        elif zipf_frequency(surface.lower(), "en") < RARE_ZIPF:
            kind = "rare"
        else:
            kind = "common"
        groups[kind].append(surface)
    return NovelWords(**{k: tuple(v) for k, v in groups.items()})


#: Names of the features, in vector order (the combiner's weights follow this order). Kept
#: to what generalised across encounters in bench/train_combiner.py: section priors, claim length
#: and stylistic counts fitted the development systems' habits, not the facts, and were dropped.
FEATURES: tuple[str, ...] = (
    "coverage",  # share of content words in the evidence window or accounted for
    "coverage_anywhere",  # share found anywhere in the transcript
    "cosine",  # best embedding similarity to a window sentence
    "local_coverage",  # share stated by the single best evidence sentence and its neighbours
    "novel_name",  # unaccounted capitalised words naming no concept (a surname)
    "novel_number",
    "novel_concept",  # unaccounted knowledge-base concepts (drug, symptom, test …)
    "novel_fact",  # unaccounted words that notes rarely use without their visit saying them
    "novel_specificity",  # the most fact-like unaccounted word: 1 − its documentation rate
    "exam_unvoiced",  # an objective claim about a body system the visit never examined aloud
    "plan_unvoiced",  # follow-up / "call if" / monitoring wording the visit never used
    "pair",  # p(unsupported) of the claim beside its evidence, by judges.pair_model
)


def feature_vector(values: dict[str, float]) -> list[float]:
    """``values`` in :data:`FEATURES` order; a missing feature is 0."""
    return [float(values.get(name, 0.0)) for name in FEATURES]


@dataclass
class Measures:
    """What steps 2–4 measured about a claim, and the tier the threshold cascade gives."""

    lexical_coverage: float
    coverage: float = 0.0
    coverage_anywhere: float = 0.0
    cosine: float = 0.0
    unstated_number: str | None = None
    number_rule: bool = False  # the cascade ended on "a value the transcript never says"
    by_knowledge: bool = False  # supported through the knowledge base (tier 2 terms, inference)
    flags: dict[str, float] = field(default_factory=dict)  # named signals of the rules
    cascade: tuple[int, str, str, Sequence[KnowledgeEntry]] = (4, "no_basis", "", ())
    novel: NovelWords = field(default_factory=NovelWords)
    features: dict[str, float] = field(default_factory=dict)


@dataclass
class Assessment:
    """The rules' verdict on a claim, with the measured ``features`` and unaccounted words.
    ``decided_by_rule``: a contradiction, the safety floor, or the knowledge base (an equivalent
    term, a diagnosis inferable from the findings) settled it; the combiner leaves it alone."""

    claim: Claim
    verdict: Verdict
    decided_by_rule: bool = False
    features: dict[str, float] | None = None
    novel: NovelWords | None = None
    #: The pair scorer was not run (it could not change the decision); ``features["pair"]``
    #: holds the extreme (0 or 1) that makes the combiner's score a bound.
    pair_unread: bool = False


def claim_features(
    analysis: ClaimAnalysis, m: Measures, pool: set[str], facts: TranscriptFacts
) -> tuple[NovelWords, dict[str, float]]:
    """The claim's unaccounted words and its feature values (:data:`FEATURES`). A word the
    evidence spells differently ("Lucenti's" for "lucentes", "Aircast" for "air cast") is
    not unaccounted: :meth:`TranscriptFacts.says`, for words of seven letters or more."""
    text = analysis.claim.text
    covered = [
        ok or (len(token) >= 7 and facts.says(token))
        for ok, (token, _, _) in zip(analysis.covered(pool), analysis.tokens, strict=True)
    ]
    novel = type_novel_words(text, analysis.tokens, covered, analysis.mentions)
    unsaid = tuple(
        text[start:end]
        for (token, start, end), ok in zip(analysis.tokens, covered, strict=True)
        if not ok and not facts.says(token)
    )
    novel = dataclasses.replace(novel, unsaid=unsaid)
    values = {
        "coverage": m.coverage,
        "coverage_anywhere": m.coverage_anywhere,
        "cosine": m.cosine,
        "novel_name": float(len(novel.name)),
        "novel_number": float(len(novel.number)),
        "novel_concept": float(len(novel.concept)),
        **specificity_features(analysis, covered),
        **{k: float(v) for k, v in m.flags.items()},
    }
    return novel, values


#: Documentation rate at or above which an unaccounted word counts as the note's own wording.
WORDING_RATE = 0.5


@lru_cache(maxsize=1)
def documentation_rates() -> dict[str, float]:
    """Stem → share of the notes using it whose dialogue never does (``data/note_vocabulary
    .tsv``, built by ``bench/build_note_vocabulary.py`` from ACI-Bench train+valid and
    MTS-Dialog training)."""
    rates: dict[str, float] = {}
    with VOCABULARY_PATH.open() as f:
        for line in f:
            if line.startswith("#") or line.startswith("stem\t"):
                continue
            stem, notes, only = line.rstrip("\n").split("\t")
            rates[stem] = int(only) / int(notes)
    return rates


def specificity_features(analysis: ClaimAnalysis, covered: Sequence[bool]) -> dict[str, float]:
    """How fact-like the unaccounted words are: the count of those that are not documentation
    wording (rate < :data:`WORDING_RATE`, or a word notes rarely use) and the most fact-like
    one's 1 − rate."""
    rates = documentation_rates()
    novel = [t for (t, _, _), ok in zip(analysis.tokens, covered, strict=True) if not ok]
    return {
        "novel_fact": float(sum(rates.get(t, 0.0) < WORDING_RATE for t in novel)),
        "novel_specificity": max((1 - rates.get(t, 0.0) for t in novel), default=0.0),
    }
