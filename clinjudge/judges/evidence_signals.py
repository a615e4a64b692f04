"""Where a claim's words come from: one passage of the visit, or words gathered from far apart.

A summariser can write every word of a claim from the transcript and still be wrong by joining
facts said minutes apart ("taking Protonix for his migraines" when Protonix was for reflux).
``local_coverage`` — the share of the claim's words stated by its single best evidence sentence
and that sentence's neighbours — feeds the combiner (:mod:`clinjudge.judges.combiner`); it
decides no verdict alone.

Also measured on the development labels and left out because they separated nothing (AUROC
0.50–0.51): the clinician's statement reported as the patient's ("she reports" whose best
evidence is the doctor's), soft status conflicts with the evidence window, and "drug X for
condition Y" pairs the visit never names within two sentences.
"""

from __future__ import annotations

from clinjudge.judges.evidence import Unit
from clinjudge.judges.offline_facts import TranscriptFacts
from clinjudge.judges.offline_rules import ClaimAnalysis


def local_coverage(analysis: ClaimAnalysis, facts: TranscriptFacts, best: Unit | None) -> float:
    """Share of claim words in the best evidence sentence ± 1 (or accounted for by a rule)."""
    if not analysis.tokens:
        return 1.0
    pool: set[str] = set()
    if best is not None:
        for u in facts.index.window(best, before=1, after=1):
            pool |= u.tokens
    hit = sum(
        token in pool or any(s <= start and end <= e for s, e in analysis.accounted)
        for token, start, end in analysis.tokens
    )
    return hit / len(analysis.tokens)
