"""A jury of graders (issue 39 item 3; MedHELM's LLM-as-jury): the verdict of several raters on
one subject, and how far they agree over many subjects. Used by every judge a jury can grade
(the rubric judge's criteria, the SOAP judges' claims).

**Verdict** (:func:`majority`): the label most of the raters who voted gave; when the top labels
are given by as many raters each, a *tie* — no verdict, never a guess. A rater without a
verdict (its reply unreadable, its call failed) does not vote. On levels (numbers) the verdict
is their mean instead (:func:`mean_level`).

**Agreement** (:func:`jury_agreement`), over subjects each with the votes of the raters who
voted, the raters who failed, and the jury's verdict:

    kappa        Fleiss' κ over the subjects (:func:`clinjudge.metrics.fleiss.fleiss_kappa`,
                 κ = (P̄ − P̄_e) / (1 − P̄_e), levels taken as categories), with the observed
                 agreement P̄ and the subjects with two votes or more
    ties         subjects whose vote tied; no_votes: subjects no rater voted on
    by_juror[j]  the subjects j voted on and failed on, and its agreement with the verdict on the
                 decided subjects it voted on: the share equal to the verdict and Cohen's κ of its
                 labels against the verdicts (SPEC §9; ``None`` when undefined) — on levels, the
                 mean absolute difference from the jury's mean

A juror's own vote is part of the majority it is compared with, so with few jurors its
agreement reads high; κ between jurors is the number to trust. Pure functions; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clinjudge.metrics.fleiss import fleiss_kappa, label_counts


@dataclass(frozen=True)
class JurySubject:
    """One thing the jury judged: ``votes`` juror → label (those who voted), ``failed`` the
    jurors without a verdict, ``verdict`` the jury's (``None``: tied or no vote)."""

    votes: Mapping[str, Hashable]
    verdict: Hashable | float | None
    failed: Sequence[str] = field(default_factory=tuple)

    @property
    def tie(self) -> bool:
        return self.verdict is None and len(self.votes) > 0


def majority(votes: Mapping[str, Hashable]) -> tuple[Hashable | None, list[str]]:
    """The label most voters gave and who gave it; ``(None, [])`` on a tie or with no vote."""
    counts = label_counts(votes.values())
    if not counts:
        return None, []
    top = max(counts.values())
    leaders = [label for label, n in counts.items() if n == top]
    if len(leaders) > 1:
        return None, []
    return leaders[0], [j for j, label in votes.items() if label == leaders[0]]


def mean_level(votes: Mapping[str, float]) -> float | None:
    return sum(votes.values()) / len(votes) if votes else None


def jury_agreement(subjects: Sequence[JurySubject], jurors: Sequence[str]) -> dict[str, Any]:
    """The agreement block (module docstring) of ``subjects`` graded by ``jurors``."""
    return {
        "jurors": list(jurors),
        "subjects": len(subjects),
        "kappa": fleiss_kappa(label_counts(s.votes.values()) for s in subjects).as_dict(),
        "ties": sum(1 for s in subjects if s.tie),
        "no_votes": sum(1 for s in subjects if not s.votes),
        "by_juror": {j: _juror(j, subjects) for j in jurors},
    }


def _juror(name: str, subjects: Sequence[JurySubject]) -> dict[str, Any]:
    from clinjudge.metrics.agreement import cohen_kappa

    voted = [s for s in subjects if name in s.votes]
    out: dict[str, Any] = {
        "voted": len(voted),
        "failed": sum(1 for s in subjects if name in s.failed),
    }
    decided = [s for s in voted if s.verdict is not None]
    if decided and isinstance(decided[0].verdict, float):
        gaps = [abs(float(s.votes[name]) - float(s.verdict)) for s in decided]  # type: ignore[arg-type]
        return {**out, "mean_abs_difference": sum(gaps) / len(gaps), "n": len(gaps)}
    own = [s.votes[name] for s in decided]
    jury = [s.verdict for s in decided]
    kappa = cohen_kappa(own, jury) if own else math.nan  # type: ignore[arg-type]
    return {
        **out,
        "agreement": sum(a == b for a, b in zip(own, jury, strict=True)) / len(own)
        if own
        else None,
        "kappa": None if math.isnan(kappa) else kappa,
        "n": len(own),
    }
