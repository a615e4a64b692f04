"""Clinical error detection, one note at a time (SPEC §4 "Error-detection prompt matrix").

A detector reads a whole note and answers in four lines::

    Evidence: <exact quote from the note, or NA>
    Analysis: <3–5 sentences>
    Confidence: <0–100>
    Error: Yes|No

**Parsing** (:func:`parse_four_lines`) is strict about content and tolerant only of formatting.
Accepted: any letter case, Markdown emphasis around keys or values (``**Error:** Yes``), list
bullets, blank lines, ``<think>`` blocks and code fences (removed first), Evidence and Analysis
continued on following lines, quotes around the evidence, a trailing period after Yes/No, a
``%`` after the confidence. A **parse failure** (counted, never guessed): text before the
Evidence line or after the Error line, a missing or repeated field, fields out of order, an Error
value other than Yes/No ("maybe"), a confidence that is not an integer 0–100.

**Responders** produce the raw text: the LLM (neutral or conservative prompt file, greedy T=0 or
sampling T=0.7/top-p 0.9) or an offline baseline — ``always-error``, ``never-error``, ``random``
(a seeded coin per note id, so results do not depend on run order or resumption). Baselines write
the same four lines, so every run goes through the same parser.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from pydantic import BaseModel

from clinjudge.datasets.items import DatasetError
from clinjudge.files import atomic_write, read_jsonl
from clinjudge.llm import LLMSettings, StructuredCaller, Usage, make_chat_model
from clinjudge.llm_cache import ResponseCache
from clinjudge.llm_replies import strip_reply
from clinjudge.metrics.eca import has_evidence, normalize
from clinjudge.pairs import DetectionNote, NotePair
from clinjudge.prompts import Prompt, load_prompt
from clinjudge.types import CallError

PromptStyle = Literal["neutral", "conservative"]
Decoding = Literal["greedy", "sampling"]
BaselineKind = Literal["always-error", "never-error", "random"]
PROMPT_NAMES: dict[str, str] = {
    "neutral": "detect.neutral",
    "conservative": "detect.conservative",
}
#: SPEC §4: greedy T = 0; sampling T = 0.7, top-p 0.9.
DECODINGS: dict[str, dict[str, float | None]] = {
    "greedy": {"temperature": 0.0, "top_p": None},
    "sampling": {"temperature": 0.7, "top_p": 0.9},
}
BASELINES: tuple[str, ...] = ("always-error", "never-error", "random")
FIELDS: tuple[str, ...] = ("evidence", "analysis", "confidence", "error")
#: Part of every cache key: a reply cached for another output format is never served.
OUTPUT_FORMAT = {"format": "evidence-analysis-confidence-error", "version": 1}

#: A field line; the value's closing markup and blanks are cut by :func:`_field_value` (a lazy
#: value followed by ``\s*$`` re-read every run of blanks inside it: quadratic). Runs of
#: blanks are taken whole (possessive): a run split between two ``\s*`` reads the same.
_FIELD_LINE = re.compile(
    r"^\s*+(?:[-*+•]\s++|\d+[.)]\s++)?[*_]{0,3}\s*(?P<key>evidence|analysis|confidence|error)"
    r"\s*+[*_]{0,3}\s*+:\s*+[*_]{0,3}(?P<value>.*)",
    re.IGNORECASE,
)
_CONFIDENCE = re.compile(r"^(\d{1,3})(?:\s*%|\s*/\s*100)?$")
_QUOTES = "\"'“”‘’«»`"


class FourLines(BaseModel):
    """The parsed fields; ``evidence`` is ``None`` for "NA"."""

    evidence: str | None
    analysis: str
    confidence: int
    error: bool


class Detection(BaseModel):
    """One note's outcome: parsed (``ok``), unparseable (``parse_failure``) or a failed call
    (``error``, retried on the next run). ``reason`` says why it is not ``ok``."""

    status: Literal["ok", "parse_failure", "error"]
    parsed: FourLines | None = None
    reason: str | None = None
    raw: str = ""

    @property
    def flag(self) -> bool | None:
        return None if self.parsed is None else self.parsed.error


def _strip_markup(value: str) -> str:
    return value.strip().strip("*_").strip()


def _field_value(written: str) -> str:
    """A field's value without its trailing blanks and up to three closing ``*``/``_``."""
    value = written.rstrip()
    closing = min(3, len(value) - len(value.rstrip("*_")))
    return value[: len(value) - closing]


def parse_four_lines(raw: str) -> Detection:
    """Read the four-line answer strictly (see the module docstring for the rules)."""
    text = strip_reply(raw or "")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return _failure(raw, "empty reply")
    values: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        match = _FIELD_LINE.match(line)
        if match:
            key = match["key"].lower()
            if key in values:
                return _failure(raw, f"{key.capitalize()} line appears twice")
            expected = FIELDS[len(values)]
            if key != expected:
                return _failure(raw, f"expected the {expected.capitalize()} line, got {key}")
            values[key] = [_field_value(match["value"])]
            current = key
        elif current is None:
            return _failure(raw, "text before the Evidence line")
        elif current in ("evidence", "analysis"):
            values[current].append(line.strip())
        else:
            return _failure(raw, f"text after the {current.capitalize()} line")
    missing = [f.capitalize() for f in FIELDS if f not in values]
    if missing:
        return _failure(raw, f"missing {', '.join(missing)} line")
    error_value = _strip_markup(values["error"][0]).rstrip(".!").strip(_QUOTES).strip().lower()
    if error_value not in ("yes", "no"):
        return _failure(raw, f"Error must be Yes or No, got {values['error'][0].strip()!r}")
    confidence = _CONFIDENCE.match(_strip_markup(values["confidence"][0]))
    if not confidence or not 0 <= int(confidence[1]) <= 100:
        return _failure(
            raw, f"Confidence must be an integer 0-100, got {values['confidence'][0].strip()!r}"
        )
    evidence = " ".join(_strip_markup(v) for v in values["evidence"]).strip().strip(_QUOTES)
    parsed = FourLines(
        evidence=evidence.strip() if has_evidence(evidence) else None,
        analysis=" ".join(_strip_markup(v) for v in values["analysis"]).strip(),
        confidence=int(confidence[1]),
        error=error_value == "yes",
    )
    return Detection(status="ok", parsed=parsed, raw=raw)


def _failure(raw: str, reason: str) -> Detection:
    return Detection(status="parse_failure", reason=reason, raw=raw)


def format_four_lines(evidence: str | None, analysis: str, confidence: int, error: bool) -> str:
    """The four lines a detector must write (used by the baselines)."""
    return (
        f"Evidence: {evidence or 'NA'}\nAnalysis: {analysis}\n"
        f"Confidence: {confidence}\nError: {'Yes' if error else 'No'}"
    )


def evidence_in_note(evidence: str | None, note: str) -> bool | None:
    """Whether the evidence is an exact quote of the note (case and whitespace aside);
    ``None`` when there is no evidence."""
    if not has_evidence(evidence):
        return None
    return normalize(evidence or "") in normalize(note)


# --------------------------------------------------------------------------- prediction rows


def prediction_row(
    note: DetectionNote,
    pairs: Sequence[NotePair],
    detection: Detection,
    detector: str,
    seconds: float,
) -> dict[str, Any]:
    """One line of ``predictions.jsonl``: the note, which member of which pair(s) it is (with the
    sentences ECA compares), the raw answer, the parsed fields (``null`` when unparsed)."""
    evidence = detection.parsed.evidence if detection.parsed else None
    return {
        "note_id": note.note_id,
        "pair_id": pairs[0].pair_id if pairs else None,
        "member": "error" if note.has_error else "clean",
        "has_error": note.has_error,
        "source_id": note.source_id,
        "error_type": note.error_type,
        "pairs": [
            {
                "pair_id": p.pair_id,
                "error_sentence": p.error_sentence,
                "corrected_sentence": p.corrected_sentence,
                "error_type": p.error_type,
                "how": p.how,
                "similarity": p.similarity,
            }
            for p in pairs
        ],
        "detector": detector,
        "status": detection.status,
        "parsed": detection.parsed.model_dump() if detection.parsed else None,
        "reason": detection.reason,
        "evidence_in_note": evidence_in_note(evidence, note.text),
        "raw": detection.raw,
        "seconds": round(seconds, 4),
    }


def read_predictions(path: Path, *, repair: bool = False) -> dict[str, dict[str, Any]]:
    """Rows of a predictions file by note id; a later row for the same note replaces an earlier
    one (a retried call). A torn last line (an interrupted run) is ignored, and with ``repair``
    removed from the file so that appending can continue.

    Raises:
        DatasetError: a line in the middle is not a JSON object with a ``note_id``.
    """
    if not path.exists():
        return {}
    lines = list(read_jsonl(path, skip_bom=False))
    rows: dict[str, dict[str, Any]] = {}
    for index, line in enumerate(lines):
        if not (line.ok and isinstance(line.value, dict) and "note_id" in line.value):
            if index == len(lines) - 1:
                if repair:
                    atomic_write(path, (x.raw + b"\n" for x in lines[:-1]))
                break
            raise DatasetError(f"{path}, line {line.number}: not a prediction row") from None
        rows[str(line.value["note_id"])] = line.value
    return rows


# --------------------------------------------------------------------------- responders


class Responder(Protocol):
    """Produces a detector's raw answer for one note, or a `CallError`."""

    name: str

    def info(self) -> dict[str, Any]: ...

    async def respond(self, note_id: str, text: str) -> str | CallError: ...


@dataclass
class BaselineResponder:
    """Offline baselines: ``always-error``, ``never-error`` and ``random`` (flags with
    probability ``p_flag`` from a coin seeded by ``(seed, note id)``). They quote no evidence."""

    kind: BaselineKind
    seed: int = 0
    p_flag: float = 0.5

    def __post_init__(self) -> None:
        if self.kind not in BASELINES:
            raise ValueError(f"baseline must be one of {', '.join(BASELINES)}, got {self.kind!r}")
        self.name = f"baseline:{self.kind}"

    def flag(self, note_id: str) -> bool:
        if self.kind == "always-error":
            return True
        if self.kind == "never-error":
            return False
        return random.Random(f"{self.seed}:{note_id}").random() < self.p_flag

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"detector": self.name}
        if self.kind == "random":
            out |= {"seed": self.seed, "p_flag": self.p_flag}
        return out

    async def respond(self, note_id: str, text: str) -> str:
        flag = self.flag(note_id)
        return format_four_lines(
            None,
            f"Baseline {self.kind}: the note is not read.",
            50 if self.kind == "random" else 100,
            flag,
        )


class LLMResponder:
    """One plain-text chat call per note, through the shared `ResponseCache`.

    The cache key is :func:`~clinjudge.llm_cache.cache_key` of (prompt file hash, model id,
    decoding, rendered prompt, `OUTPUT_FORMAT`); as for structured calls, only replies that parse
    are stored, so a parse failure is asked again on a later run. Transport errors (after the
    SDK's retries) become a `CallError`, never an exception."""

    def __init__(
        self,
        model: BaseChatModel | Runnable,
        prompt: Prompt,
        *,
        model_id: str,
        decoding: dict[str, Any],
        cache: ResponseCache | None = None,
    ) -> None:
        self.prompt = prompt
        self.caller = StructuredCaller(
            model,  # type: ignore[arg-type]
            cache=cache,
            model_id=model_id,
            decoding=decoding,
        )
        self.name = f"llm:{model_id}"

    @property
    def usage(self) -> Usage:
        return self.caller.usage

    @property
    def model_id(self) -> str:
        return self.caller.model_id

    @property
    def decoding(self) -> dict[str, Any]:
        return self.caller.decoding

    def info(self) -> dict[str, Any]:
        return {
            "detector": self.name,
            "model": self.caller.model_id,
            "decoding": self.caller.decoding,
            "prompt": self.prompt.ref().model_dump(),
        }

    async def respond(self, note_id: str, text: str) -> str | CallError:
        return await self.caller.call_text(
            self.prompt,
            {"note": text},
            key=note_id,
            output_format=OUTPUT_FORMAT,
            accept=lambda raw: parse_four_lines(raw).status == "ok",
        )


def make_llm_responder(
    prompt: PromptStyle = "neutral",
    decoding: Decoding = "greedy",
    *,
    settings: LLMSettings | None = None,
    chat_model: BaseChatModel | None = None,
    prompt_override: str | None = None,
    cache: ResponseCache | None = None,
) -> LLMResponder:
    """An `LLMResponder` for one cell of the prompt × decoding matrix.

    With ``settings`` (default: from the environment) the chat model is built by
    :func:`~clinjudge.llm.make_chat_model` with the decoding's temperature and top-p; a given
    ``chat_model`` is bound to them instead.

    Raises:
        ValueError: unknown prompt style or decoding, a prompt file without ``{{note}}``, or no
            model configured.
    """
    if prompt not in PROMPT_NAMES:
        raise ValueError(f"--prompt must be one of {', '.join(PROMPT_NAMES)}, got {prompt!r}")
    if decoding not in DECODINGS:
        raise ValueError(f"--decoding must be one of {', '.join(DECODINGS)}, got {decoding!r}")
    template = load_prompt(PROMPT_NAMES[prompt], prompt_override)
    if "note" not in template.placeholders:
        raise ValueError(f"prompt {template.path or template.name} has no {{{{note}}}} placeholder")
    params = DECODINGS[decoding]
    if chat_model is not None:
        bound = {k: v for k, v in params.items() if v is not None}
        model_id = str(
            getattr(chat_model, "model_name", None)
            or getattr(chat_model, "model", None)
            or type(chat_model).__name__
        )
        return LLMResponder(
            chat_model.bind(**bound),
            template,
            model_id=model_id,
            decoding={"name": decoding, **params},
            cache=cache,
        )
    settings = (settings or LLMSettings()).model_copy(update=params)
    return LLMResponder(
        make_chat_model(settings),
        template,
        model_id=str(settings.model),
        decoding={"name": decoding, **settings.decoding()},
        cache=cache,
    )
