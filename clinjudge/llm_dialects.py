"""How an OpenAI-compatible server is asked for JSON: the three dialects, the order they are
tried in, and what each endpoint turned out to accept (DESIGN "server dialects live in
``llm.py`` alone": this module is its table, ``llm.py`` the one place that sends them).

    json_schema  response_format {"type": "json_schema", "json_schema": {...}}
                 OpenAI, vLLM ≥ 0.6, Ollama ≥ 0.5, LM Studio, SGLang
    json_object  response_format {"type": "json_object", "schema": {...}}
                 llama-cpp-python's server (the schema becomes a grammar); servers that know only
                 JSON mode read it as JSON mode and ignore the schema
    text         no response_format; the schema is written into the prompt

A server that refuses a dialect says so in an error that names ``response_format`` (HTTP 400,
422, or llama-cpp-python's 500 "('body', 'response_format', 'type') Input should be 'text' or
'json_object'"): the next dialect is tried, and the endpoint is remembered for the rest of the
process. Any other error (a context overflow, an outage) is the call's error, never a reason to
drop the schema.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Literal

import openai
from langchain_core.messages import BaseMessage, HumanMessage

OutputMode = Literal["json_schema", "json_object", "text"]
#: Most constrained first.
MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "text")

#: Appended to the prompt when the server is not given the schema itself (``text``) or may
#: ignore it (``json_object`` read as plain JSON mode).
SCHEMA_IN_PROMPT = (
    "\n\nReply with one JSON object that matches this JSON schema -- no prose, no code fence:\n"
    "{schema}"
)


def rejects_output_format(exc: BaseException) -> bool:
    """True when ``exc`` is a server (or chat model) refusing the way JSON was asked for: a
    chat model without the method, or an HTTP error whose message or body names
    ``response_format``."""
    if isinstance(exc, NotImplementedError):
        return True
    if isinstance(exc, openai.APIStatusError):
        said = f"{exc.message} {json.dumps(exc.body, default=str) if exc.body else ''}"
        return "response_format" in said
    return False


def next_mode(mode: OutputMode) -> OutputMode | None:
    """The dialect tried after ``mode`` is refused; ``None`` after ``text``."""
    i = MODES.index(mode)
    return MODES[i + 1] if i + 1 < len(MODES) else None


def schema_request(mode: OutputMode, json_schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` of the ``json_object`` dialect (``json_schema`` goes through
    LangChain's ``with_structured_output``; ``text`` sends none)."""
    if mode == "json_object":
        return {"type": "json_object", "schema": json_schema}
    return None


#: Where a prompt wants the schema written in the dialects that write it into the prompt: a line
#: of its own before the prompt's first placeholder, so that it is part of the prefix every
#: call about one item shares (issue 38); a prompt without it gets the schema at its end. Only
#: the first occurrence is the slot (data inserted later cannot move it).
SCHEMA_SLOT = "[[answer schema]]"


def with_schema(text: str, mode: OutputMode, json_schema: dict[str, Any]) -> str:
    """``text`` with the schema written where it asks (:data:`SCHEMA_SLOT`; the slot removed in
    the ``json_schema`` dialect), else appended (:func:`prompt_suffix`)."""
    if SCHEMA_SLOT in text:
        return text.replace(SCHEMA_SLOT, prompt_suffix(mode, json_schema).strip(), 1)
    return text + prompt_suffix(mode, json_schema)


def prompt_suffix(mode: OutputMode, json_schema: dict[str, Any]) -> str:
    """What is added to the last user message in this dialect: the schema, unless the server
    is given it as a ``json_schema`` response format."""
    if mode == "json_schema":
        return ""
    return SCHEMA_IN_PROMPT.format(schema=json.dumps(json_schema, ensure_ascii=False))


class EndpointModes:
    """The dialect each endpoint accepts, learnt once per process and shared by every caller
    (two judges on one server probe it once)."""

    def __init__(self) -> None:
        self._modes: dict[str, OutputMode] = {}
        self._lock = threading.Lock()

    def get(self, endpoint: str) -> OutputMode:
        with self._lock:
            return self._modes.get(endpoint, MODES[0])

    def refused(self, endpoint: str, mode: OutputMode) -> tuple[OutputMode | None, bool]:
        """Record that ``endpoint`` refused ``mode``: the dialect to use from now on (``None``
        when none is left) and whether this call is the one that learnt it (a concurrent call
        may have moved the endpoint on already)."""
        with self._lock:
            current = self._modes.get(endpoint, MODES[0])
            if MODES.index(current) > MODES.index(mode):
                return current, False
            following = next_mode(mode)
            if following is not None:
                self._modes[endpoint] = following
            return following, True

    def forget(self) -> None:
        with self._lock:
            self._modes.clear()


#: The process's memory of endpoints.
ENDPOINTS = EndpointModes()


def with_schema_messages(
    messages: list[BaseMessage], mode: OutputMode, json_schema: dict[str, Any]
) -> list[BaseMessage]:
    """The messages of a request in ``mode``: the schema written into the prompt's slot
    (:data:`~clinjudge.llm_dialects.SCHEMA_SLOT`), else at the end of the last message, where
    the server is not given it as a response format."""
    if any(SCHEMA_SLOT in m.text for m in messages if isinstance(m, HumanMessage)):
        return [
            HumanMessage(with_schema(m.text, mode, json_schema))
            if isinstance(m, HumanMessage) and SCHEMA_SLOT in m.text
            else m
            for m in messages
        ]
    suffix = prompt_suffix(mode, json_schema)
    if not suffix:
        return messages
    return [*messages[:-1], HumanMessage(f"{messages[-1].text}{suffix}")]
