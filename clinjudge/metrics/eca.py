"""Evidence Contrastive Analysis, ECA (SPEC §4): did the evidence a detector quoted point at the
sentence that differs between the two notes of a pair?

**Hit rule.** Evidence ``e`` hits sentence ``s`` when, after case-folding and collapsing
whitespace (and dropping wrapping quotes), ``e`` is a substring of ``s``, or at least
``coverage`` (60%) of the words of ``s`` (counted with repetition) occur among the words of
``e``. Chinese/Japanese text has no spaces, so there the units are characters (letters, digits,
CJK characters; punctuation and spaces ignored). Empty or "NA" evidence never hits.

**Measures.**
- TP-localization = flagged erroneous notes whose evidence hits the error sentence / flagged
  erroneous notes (the true positives).
- FP-evidence-hit = flagged clean notes whose evidence hits the corrected sentence / flagged clean
  notes (the false positives).

**Five categories** of the ECA pairs: the Pred1 pairs (both notes flagged) and, following the
seed's parse-failure rule, every pair with a member whose output was not parsed:
``extraction_fail`` (a member unparsed, or a flagged member without evidence), else by the two
hits — ``both_hit``, ``error_only_hit``, ``clean_only_hit``, ``no_hit``. Pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from clinjudge.metrics.classification import Estimate, wilson_estimate

EcaCategory = Literal["both_hit", "error_only_hit", "clean_only_hit", "no_hit", "extraction_fail"]
CATEGORIES: tuple[EcaCategory, ...] = (
    "both_hit",
    "error_only_hit",
    "clean_only_hit",
    "no_hit",
    "extraction_fail",
)
WORD_COVERAGE = 0.6
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_WORD = re.compile(r"\w+")
_QUOTES = "\"'“”‘’«»「」『』`"
_NO_EVIDENCE = frozenset({"", "na", "n/a", "none", "null", "-"})


def is_cjk(text: str) -> bool:
    """True when ``text`` contains Chinese or Japanese characters (Han, kana)."""
    return bool(_CJK.search(text))


def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed, wrapping quotes removed."""
    flat = " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())
    return flat.strip(_QUOTES + " ")


def units(text: str, *, cjk: bool) -> list[str]:
    """Words (Latin scripts) or characters (CJK) of a normalized text, in order."""
    flat = normalize(text)
    if cjk:
        return [ch for ch in flat if ch.isalnum()]
    return _WORD.findall(flat)


def has_evidence(evidence: str | None) -> bool:
    """False for missing, empty or "NA"-like evidence."""
    return evidence is not None and normalize(evidence) not in _NO_EVIDENCE


def evidence_hits(
    evidence: str | None,
    sentence: str | None,
    *,
    coverage: float = WORD_COVERAGE,
    cjk: bool | None = None,
) -> bool:
    """The hit rule: substring containment, or ≥ ``coverage`` of the sentence's units covered.

    ``cjk=None`` decides from the sentence's script."""
    if not has_evidence(evidence) or not sentence or not normalize(sentence):
        return False
    e, s = normalize(evidence or ""), normalize(sentence)
    if e in s:
        return True
    cjk = is_cjk(sentence) if cjk is None else cjk
    sentence_units = units(sentence, cjk=cjk)
    if not sentence_units:
        return False
    evidence_units = set(units(evidence or "", cjk=cjk))
    covered = sum(1 for u in sentence_units if u in evidence_units)
    return covered / len(sentence_units) >= coverage


@dataclass(frozen=True)
class EcaPair:
    """What ECA reads from one pair: the two flags (``None`` = unparsed), the two evidence
    quotes, the error sentence of the erroneous note and the corrected sentence of its twin."""

    error_flag: bool | None
    clean_flag: bool | None
    error_evidence: str | None
    clean_evidence: str | None
    error_sentence: str
    corrected_sentence: str

    @property
    def unparsed(self) -> bool:
        return self.error_flag is None or self.clean_flag is None

    @property
    def pred1(self) -> bool:
        """Both notes flagged as erroneous."""
        return bool(self.error_flag) and bool(self.clean_flag)


def eca_category(pair: EcaPair, *, coverage: float = WORD_COVERAGE) -> EcaCategory | None:
    """The ECA category of a pair, or ``None`` when it is not an ECA pair (a member was cleared
    and both were parsed)."""
    if not (pair.pred1 or pair.unparsed):
        return None
    if pair.unparsed or not (
        has_evidence(pair.error_evidence) and has_evidence(pair.clean_evidence)
    ):
        return "extraction_fail"
    error_hit = evidence_hits(pair.error_evidence, pair.error_sentence, coverage=coverage)
    clean_hit = evidence_hits(pair.clean_evidence, pair.corrected_sentence, coverage=coverage)
    if error_hit and clean_hit:
        return "both_hit"
    if error_hit:
        return "error_only_hit"
    if clean_hit:
        return "clean_only_hit"
    return "no_hit"


def tp_localization(pairs: Sequence[EcaPair], *, coverage: float = WORD_COVERAGE) -> Estimate:
    """Flagged erroneous notes whose evidence hits the error sentence, with a Wilson interval."""
    flagged = [p for p in pairs if p.error_flag]
    hits = sum(
        evidence_hits(p.error_evidence, p.error_sentence, coverage=coverage) for p in flagged
    )
    return wilson_estimate(hits, len(flagged))


def fp_evidence_hit(pairs: Sequence[EcaPair], *, coverage: float = WORD_COVERAGE) -> Estimate:
    """Flagged clean notes whose evidence hits the corrected sentence, with a Wilson interval."""
    flagged = [p for p in pairs if p.clean_flag]
    hits = sum(
        evidence_hits(p.clean_evidence, p.corrected_sentence, coverage=coverage) for p in flagged
    )
    return wilson_estimate(hits, len(flagged))


def eca_summary(pairs: Sequence[EcaPair], *, coverage: float = WORD_COVERAGE) -> dict[str, object]:
    """Counts and rates of the five categories over the ECA pairs, plus TP-localization and
    FP-evidence-hit over all pairs."""
    categories = [c for p in pairs if (c := eca_category(p, coverage=coverage)) is not None]
    n = len(categories)
    counts = {name: categories.count(name) for name in CATEGORIES}
    return {
        "n": n,
        "n_pred1": sum(p.pred1 for p in pairs),
        "categories": {
            name: {"count": k, "rate": k / n if n else None} for name, k in counts.items()
        },
        "tp_localization": tp_localization(pairs, coverage=coverage),
        "fp_evidence_hit": fp_evidence_hit(pairs, coverage=coverage),
        "coverage_threshold": coverage,
    }
