"""Reading a model's reply: reasoning blocks and code fences removed, the first JSON object
that validates against the schema, one-line error descriptions (DESIGN "Rules of thumb": a
reply that cannot be read is a recorded parse failure, never a guess)."""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from clinjudge.redact import without_credentials

M = TypeVar("M", bound=BaseModel)

_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
_CODE_FENCE = re.compile(r"```[A-Za-z0-9_+-]*")
#: Where a JSON object can start: ``{`` then a key or ``}``; prose braces like ``{so}`` are skipped.
_OBJECT_START = re.compile(r'\{(?=\s*["}])')


def strip_reply(text: str) -> str:
    """Remove reasoning blocks (``<think>…</think>``, also an unclosed one, or the tail of one
    whose opening tag the server dropped) and Markdown code fences."""
    if "</think>" in text and "<think>" not in text:
        text = text.rsplit("</think>", 1)[1]
    text = _THINK_BLOCK.sub("", text)
    return _CODE_FENCE.sub("", text).strip()


def brief_error(exc: ValidationError) -> str:
    """One line: the first three validation errors as ``loc: msg``."""
    parts = [
        f"{'.'.join(str(p) for p in err['loc']) or 'root'}: {err['msg']}"
        for err in exc.errors()[:3]
    ]
    more = f" (+{exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "schema mismatch: " + "; ".join(parts) + more


def parse_tolerant(text: str, schema: type[M]) -> tuple[M | None, str]:
    """The first JSON object embedded in ``text`` that validates against ``schema``.

    After :func:`strip_reply`, every ``{`` followed by a key or ``}`` is tried as the start of a
    JSON value with the stdlib scanner (``json.JSONDecoder.raw_decode``: it respects strings,
    escapes and nesting, and rejects truncated JSON); objects are tried in reading order, so an
    outer object before the objects nested in it.

    Returns:
        ``(model, "")`` on success, else ``(None, reason)`` with the first (outermost) problem.
    """
    text = strip_reply(text)
    decoder = json.JSONDecoder()
    reason = ""
    for candidate in _OBJECT_START.finditer(text):
        try:
            value, _ = decoder.raw_decode(text, candidate.start())
        except json.JSONDecodeError as exc:
            reason = reason or f"invalid JSON: {exc.msg} at char {exc.pos}"
            continue
        try:
            return schema.model_validate(value), ""
        except ValidationError as exc:
            reason = reason or brief_error(exc)
    return None, reason or "no JSON object in the reply"


def describe_exception(exc: BaseException, limit: int = 200) -> str:
    """``"<ExceptionType>: <first line of the message>"``, followed by the innermost cause when
    it says more (``"APIConnectionError: Connection error. (ConnectError: [Errno 111]
    Connection refused)"``), cut to ``limit`` characters."""
    text = _one_line(exc)
    root = exc
    seen = {id(exc)}
    while (inner := root.__cause__ or root.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        root = inner
    if root is not exc and str(root).strip() and _one_line(root) != text:
        text += f" ({_one_line(root)})"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _one_line(exc: BaseException) -> str:
    lines = without_credentials(str(exc)).strip().splitlines()
    message = lines[0] if lines else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
