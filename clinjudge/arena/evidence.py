"""What the other judges found in one text, as the offline pairwise judge reads it (SPEC §6,
issue 25).

From the inference-aware SOAP judge's row (SPEC §1, a :class:`~clinjudge.types.NoteReport`
as a dict) and the omission judge's row (SPEC §9) of the same text against the same source:

- ``n_claims``: claims with a verdict (claims left without one — a failed call — are not
  counted anywhere); ``n_grounded``: those of tier 1–3 (stated, paraphrased or inferable);
- ``n_major_errors``: tier 4–5 claims rated ``major`` (acting on them could change care);
  ``n_person_errors``: tier 4–5 claims about who the patient is (``demographic_social``:
  age, sex, occupation, family, habits), whatever their severity;
- ``n_repeated``: claims whose normalised wording repeats an earlier claim of the same text;
  ``n_headed_sections``: SOAP sections (of four) holding a claim under a section header;
- ``n_facts``, ``n_covered``: the visit's facts and those the text states;
  ``n_critical``, ``n_critical_covered``: the same for critical facts (red flags, allergies,
  abnormal results, medication changes, return precautions); ``n_contradicted_facts``:
  facts the text states otherwise.

Both judges are offline and deterministic, so a text's evidence does not depend on the text it
is compared with, nor on the order the two are shown in.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

_WORDS = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class TextEvidence:
    """Counts of one text (module docstring)."""

    n_claims: int
    n_grounded: int
    n_major_errors: int
    n_person_errors: int
    n_repeated: int
    n_headed_sections: int
    n_facts: int
    n_covered: int
    n_critical: int
    n_critical_covered: int
    n_contradicted_facts: int

    @property
    def grounded_share(self) -> float | None:
        return self.n_grounded / self.n_claims if self.n_claims else None

    @property
    def major_error_rate(self) -> float | None:
        """Major unsupported or contradicted claims per claim: a short note does not look
        safer for saying less."""
        return self.n_major_errors / self.n_claims if self.n_claims else None

    @property
    def repeated_share(self) -> float | None:
        return self.n_repeated / self.n_claims if self.n_claims else None

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TextEvidence:
        return cls(**{k: int(data[k]) for k in cls.__dataclass_fields__})


def evidence_from_rows(soap_row: dict[str, Any], omission_row: dict[str, Any]) -> TextEvidence:
    """The text's evidence from its SOAP row (``claims``, ``verdicts``) and its omission row
    (``facts`` with ``status`` and ``importance``).

    Raises:
        ValueError: the omission row has no facts (its judging failed).
    """
    facts = omission_row.get("facts")
    if facts is None:
        raise ValueError(f"the omission judge has no facts for {omission_row.get('id')!r}")
    claims = soap_row.get("claims") or []
    text_of = {c["id"]: c["text"] for c in claims}
    verdicts = soap_row.get("verdicts") or []
    errors = [v for v in verdicts if v["tier"] >= 4]
    seen: set[str] = set()
    repeated = 0
    for v in verdicts:
        words = " ".join(_WORDS.findall(text_of.get(v["claim_id"], "").lower()))
        repeated += bool(words) and words in seen
        seen.add(words)
    critical = [f for f in facts if f["importance"] == "critical"]
    return TextEvidence(
        n_claims=len(verdicts),
        n_grounded=len(verdicts) - len(errors),
        n_major_errors=sum(1 for v in errors if v.get("severity") == "major"),
        n_person_errors=sum(1 for v in errors if v.get("harm_category") == "demographic_social"),
        n_repeated=repeated,
        n_headed_sections=len({c["section"] for c in claims if c.get("header")}),
        n_facts=len(facts),
        n_covered=sum(1 for f in facts if f["status"] == "covered"),
        n_critical=len(critical),
        n_critical_covered=sum(1 for f in critical if f["status"] == "covered"),
        n_contradicted_facts=sum(1 for f in facts if f["status"] == "contradicted"),
    )
