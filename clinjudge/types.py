"""Pydantic models shared by every layer of clinjudge.

Offsets are Python string indices (``text[start:end]``) into the raw text they came from:
transcript turns into the raw transcript, sections and claims into the raw note.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field

Speaker = Literal["doctor", "patient", "other", "unknown"]
SoapSection = Literal["subjective", "objective", "assessment", "plan"]
Mode = Literal["lexical", "inference-aware"]
Backend = Literal["offline", "llm"]
Subtype = Literal[
    "restatement",  # tier 1
    "paraphrase",  # tier 2
    "terminology",
    "trade_generic",
    "abbreviation",
    "inference",  # tier 3
    "no_basis",  # tier 4
    "contradiction",  # tier 5
]

#: Tier -> (name, supported). SPEC §1, table "Five tiers".
TIERS: dict[int, tuple[str, bool]] = {
    1: ("direct restatement", True),
    2: ("paraphrase / medical translation / trade-generic equivalence", True),
    3: ("clinical inference", True),
    4: ("no basis (fabrication)", False),
    5: ("contradiction", False),
}

#: Tiers allowed per mode: the lexical judge knows only restatement, no basis and contradiction.
TIERS_BY_MODE: dict[str, frozenset[int]] = {
    "lexical": frozenset({1, 4, 5}),
    "inference-aware": frozenset({1, 2, 3, 4, 5}),
}


class Span(BaseModel):
    """A character span ``[start, end)`` of some source text, with the text it covers."""

    start: int
    end: int
    text: str


class Turn(BaseModel):
    """One speaker turn of a transcript; ``start``/``end`` cover the utterance (not the tag)."""

    index: int
    speaker: Speaker
    start: int
    end: int
    text: str


class Transcript(BaseModel):
    text: str
    turns: list[Turn]
    format: Literal["aci", "mts", "plain"] = "plain"


class Section(BaseModel):
    """A note section: its header as written (``""`` when the note has none) and its SOAP class."""

    header: str
    soap: SoapSection
    start: int  # body start (after the header line)
    end: int


class Note(BaseModel):
    text: str
    sections: list[Section]


class Claim(BaseModel):
    """One atomic, checkable statement of the note: ``note.text[start:end] == text`` for
    claims cut by the splitter; LLM-extracted claims keep the span of the sentence they
    were drawn from."""

    id: str
    text: str
    section: SoapSection
    header: str = ""
    start: int
    end: int


class Evidence(BaseModel):
    """A supporting or contradicting span, from the transcript or from the note's own facts."""

    source: Literal["transcript", "note"]
    start: int
    end: int
    text: str
    score: float | None = None


class KnowledgeEntry(BaseModel):
    """A knowledge-base entry that took part in a verdict (a synonym, trade/generic pair, ...)."""

    concept_id: str
    preferred: str
    source: str
    kind: str
    matched: str = ""
    relation: str = ""


#: How much a hallucinated claim matters (SPEC §9): ``major`` if acting on it could change
#: diagnosis, treatment or follow-up or harm the patient.
Severity = Literal["major", "minor"]
HarmCategory = Literal[
    "medication",
    "dose_frequency",
    "diagnosis",
    "test_result",
    "exam_finding",
    "history",
    "allergy",
    "plan_follow_up",
    "demographic_social",
]


class Verdict(BaseModel):
    claim_id: str
    tier: int = Field(ge=1, le=5)
    subtype: Subtype
    rationale: str
    evidence: list[Evidence] = []
    knowledge: list[KnowledgeEntry] = []
    backend: Backend
    #: Set on hallucinated verdicts (tiers 4–5) only.
    severity: Severity | None = None
    harm_category: HarmCategory | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def supported(self) -> bool:
        return TIERS[self.tier][1]


class ParseFailure(BaseModel):
    """A model output that could not be read as a verdict: recorded, never guessed."""

    claim_id: str
    kind: Literal["parse_failure"] = "parse_failure"
    reason: str
    raw: str = ""


class CallError(BaseModel):
    """A model call that failed (HTTP error after retries, timeout): recorded, never guessed."""

    claim_id: str
    kind: Literal["error"] = "error"
    reason: str


Outcome = Verdict | ParseFailure | CallError


class PromptRef(BaseModel):
    name: str
    version: str
    sha256: str
    path: str = ""


class Provenance(BaseModel):
    """What a reader needs to tell two runs apart and reproduce one. Never holds an API key."""

    package_version: str
    backend: Backend
    mode: Mode | None = None
    model: str | None = None
    base_url: str | None = None
    decoding: dict[str, object] = {}
    prompts: list[PromptRef] = []
    dataset: str | None = None
    knowledge: dict[str, object] = {}
    #: The offline verifier's settings and the digest of its fitted combiner: what decides an
    #: offline verdict, so that a run made with other rules is never resumed as this one.
    verifier: dict[str, object] = {}
    #: Replies received per dialect the server was asked for JSON in (json_schema,
    #: json_object, text): filled once calls were made.
    output_modes: dict[str, int] = {}
    #: ``--backend local``: the GGUF file served (name, sha256) and the server.
    local_model: dict[str, str] = {}
    created: str = ""


class NoteReport(BaseModel):
    """Per-note result of one judge: SPEC §1 "Outputs"."""

    note_id: str
    mode: Mode
    backend: Backend
    claims: list[Claim]
    verdicts: list[Verdict]
    failures: list[ParseFailure | CallError] = []
    seconds: float = 0.0

    @property
    def n_judged(self) -> int:
        return len(self.verdicts)

    @property
    def n_hallucinated(self) -> int:
        return sum(1 for v in self.verdicts if not v.supported)

    @property
    def hallucination_rate(self) -> float | None:
        """Tier 4-5 claims / judged claims (SPEC §1); ``None`` when no claim was judged.
        Parse failures and call errors are excluded from both numerator and denominator."""
        return self.n_hallucinated / self.n_judged if self.n_judged else None

    @property
    def n_major(self) -> int:
        """Hallucinated claims rated ``major`` (SPEC §9)."""
        return sum(1 for v in self.verdicts if not v.supported and v.severity == "major")

    @property
    def major_rate(self) -> float | None:
        """Major hallucinations / judged claims; ``None`` when no claim was judged."""
        return self.n_major / self.n_judged if self.n_judged else None

    @property
    def parse_failures(self) -> int:
        return sum(1 for f in self.failures if f.kind == "parse_failure")

    @property
    def errors(self) -> int:
        return sum(1 for f in self.failures if f.kind == "error")

    def tier_counts(self) -> dict[int, int]:
        counts = {t: 0 for t in TIERS}
        for v in self.verdicts:
            counts[v.tier] += 1
        return counts
