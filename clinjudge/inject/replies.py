"""What the models of the injection pipeline answer, and how an accepted answer becomes a pair
(SPEC §5: applicability by two models; one injected error as JSON — rationale, original span,
replacement, clinical consequence, edited text; an LLM validator).

The schemas are the ``json_schema`` of each structured call
(:class:`clinjudge.llm.StructuredCaller`). A pair's spans are never taken from the model's
claims: they are the measured hull of the change (:func:`clinjudge.inject.shape.measure_edit`);
the claims are kept in ``meta``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from clinjudge.inject.pairs import PairRecord
from clinjudge.inject.shape import ShapeCheck
from clinjudge.inject.taxonomy import InjectionType


class Applicability(BaseModel):
    """Can an error (or rewrite) of the type be made in this text?"""

    applicable: bool
    reason: str = Field(description="one sentence: where it could be made, or why not")


class Injection(BaseModel):
    """Exactly one edit of the text."""

    rationale: str = Field(description="why this edit is an instance of the type")
    original_span: str = Field(description="the exact text replaced, copied verbatim; '' to insert")
    replacement: str = Field(description="the text that replaces it; '' to delete")
    consequence: str = Field(description="the clinical consequence if the edit went unnoticed")
    edited_text: str = Field(
        description="the whole text with the edit applied, nothing else changed"
    )


class ErrorValidation(BaseModel):
    """The validator's verdict on an injected error: all four must be true."""

    type_matches: bool
    clinically_significant: bool
    fluent: bool
    single_error: bool
    reason: str = ""


class RewriteValidation(BaseModel):
    """The validator's verdict on a legitimate rewrite: all four must be true."""

    type_matches: bool
    meaning_preserved: bool
    fluent: bool
    single_edit: bool
    reason: str = ""


def validation_schema(kind: str) -> type[ErrorValidation] | type[RewriteValidation]:
    return ErrorValidation if kind == "error" else RewriteValidation


def failed_checks(verdict: ErrorValidation | RewriteValidation) -> list[str]:
    """Names of the validator's checks that are false (empty: the edit passes)."""
    return [k for k, v in verdict.model_dump().items() if isinstance(v, bool) and not v]


def restore_outer_whitespace(original: str, edited: str) -> str:
    """``edited`` with the original's leading and trailing whitespace: models often drop a final
    newline, which is no part of the edit. Inner text is left exactly as the model wrote it."""
    core = edited.strip()
    lead = original[: len(original) - len(original.lstrip())]
    trail = original[len(original.rstrip()) :]
    return lead + core + trail if core else edited


def limits_text(t: InjectionType) -> str:
    """The type's edit-shape limits in words, for the prompts."""
    lim = t.limits
    regions = "one place" if lim.regions == 1 else f"at most {lim.regions} nearby places"
    return (
        f"remove at most {lim.destroy} characters, add at most {lim.write} characters, change "
        f"at most {lim.sentences} sentence(s), change the length by at most {lim.length} "
        f"characters, edit {regions}"
    )


def type_variables(t: InjectionType) -> dict[str, str]:
    """The prompt variables describing a type."""
    return {
        "type_id": t.id,
        "type_name": t.name,
        "definition": t.definition,
        "example": t.example,
        "limits": limits_text(t),
    }


def llm_pair(
    *,
    pair_id: str,
    source_id: str,
    t: InjectionType,
    source: str,
    original: str,
    injection: Injection,
    edited: str,
    shape: ShapeCheck,
    validation: dict[str, Any],
    models: dict[str, str],
    attempts: int,
    meta: dict[str, Any] | None = None,
) -> PairRecord:
    """The pair of an accepted model injection; spans from the measured edit."""
    assert shape.shape is not None  # an accepted edit changed something
    a, b = shape.shape.original_span
    c, d = shape.shape.edited_span
    return PairRecord(
        pair_id=pair_id,
        source_id=source_id,
        kind=t.kind,
        type=t.id,
        source=source,
        original=original,
        edited=edited,
        original_span=(a, b),
        edited_span=(c, d),
        before=original[a:b],
        after=edited[c:d],
        rationale=injection.rationale,
        consequence=injection.consequence,
        backend="llm",
        models=models,
        validator=validation,
        shape=shape.record(),
        attempts=attempts,
        meta={
            **(meta or {}),
            "claimed_original_span": injection.original_span,
            "claimed_replacement": injection.replacement,
        },
    )
