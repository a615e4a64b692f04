"""LLM access: usage accounting and the one structured-call helper. Settings and the chat-model
factory live in :mod:`clinjudge.llm_settings`, the JSON dialects of servers in
:mod:`clinjudge.llm_dialects`; both are re-exported here.

Every judge calls a model through :class:`StructuredCaller` (DESIGN "Rules of thumb"): schema
first (in the server's dialect), then a tolerant parse of the raw text, then one re-ask; what
still fails becomes a :class:`~clinjudge.types.ParseFailure`, and a transport failure after the
SDK's own retries a :class:`~clinjudge.types.CallError` -- never a guessed verdict, never an
exception out of :meth:`StructuredCaller.call`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_openai.chat_models.base import BaseChatOpenAI
from pydantic import BaseModel, ValidationError

from clinjudge.llm_cache import ResponseCache, cache_key
from clinjudge.llm_dialects import (
    ENDPOINTS,
    OutputMode,
    rejects_output_format,
    schema_request,
    with_schema,
    with_schema_messages,
)
from clinjudge.llm_endpoints import call_gate, split_urls
from clinjudge.llm_flights import SharedFlights
from clinjudge.llm_replies import describe_exception, parse_tolerant
from clinjudge.llm_settings import NO_KEY, LLMSettings, make_chat_model
from clinjudge.llm_usage import Usage
from clinjudge.prompts import Prompt
from clinjudge.types import CallError, ParseFailure

__all__ = [
    "NO_KEY",
    "LLMSettings",
    "OutputMode",
    "ResponseCache",
    "StructuredCaller",
    "Usage",
    "make_chat_model",
]

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

RAW_LIMIT = 2000

REASK = (
    "Your previous reply could not be used ({error}). Reply again with only one JSON object that "
    "matches this JSON schema -- no prose, no code fence, no reasoning:\n{schema}"
)


# --------------------------------------------------------------------------- the caller


@dataclass
class _Attempt:
    parsed: BaseModel | None
    raw: str
    error: str


class StructuredCaller:
    """The one robust structured-output call used by every judge (DESIGN "Rules of thumb").

    ``call`` renders the prompt, serves a cached reply when there is one, and otherwise:
    (a) asks for JSON in the endpoint's dialect (:mod:`clinjudge.llm_dialects`: ``json_schema``
    with a dict schema -- a pydantic class would make the SDK raise on a non-JSON reply --, else
    ``json_object`` with the schema, else plain text with the schema in the prompt) and
    validates the reply with the pydantic schema -- parsed strictly from the raw text, not
    LangChain's ``parsed``, whose partial-JSON parser "repairs" truncated output;
    (b) else takes the first valid JSON object embedded in the text (:func:`parse_tolerant`);
    (c) else re-asks once, quoting the error and the schema;
    (d) else returns a ``ParseFailure``. Exceptions of the model call (after the SDK's retries)
    become a ``CallError``; a reply cut off at the token limit is a parse attempt that failed.
    A server that refuses a dialect with an error naming ``response_format`` (any status) is
    asked in the next one, and its endpoint keeps that dialect for the rest of the process.
    ``schema`` validates; ``wire_schema`` (default: ``schema``'s JSON schema) is what the
    server is asked to follow -- it may constrain more (an enum of the ids asked for).
    Only validated results are cached; identical calls in flight at once are sent once
    (:mod:`clinjudge.llm_flights`).
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        cache: ResponseCache | None,
        model_id: str,
        decoding: dict[str, Any],
        rebuild: Callable[[int], BaseChatModel] | None = None,
        endpoint: str | None = None,
        max_concurrent: int | None = None,
        replicas: int = 1,
    ) -> None:
        """``rebuild(i)`` makes the model of replica ``i`` (for another event loop, or another
        replica: see :meth:`model_for`); ``endpoint`` names the server whose dialect is
        remembered (default: this model); ``max_concurrent`` bounds the requests in flight to
        each of its ``replicas`` over every caller of the process (every worker's, under a
        shared gate: :mod:`clinjudge.llm_endpoints`)."""
        self._model = model
        self.endpoint = endpoint or f"{type(model).__name__}@{id(model):x}#{model_id}"
        self._rebuild = rebuild
        self._model_loop: weakref.ref | None = None
        self._models: dict[int, BaseChatModel] = {0: model}
        self.replicas = max(1, replicas)
        self.cache = cache
        self.model_id = model_id
        self.decoding = dict(decoding)
        self.usage = Usage()
        self.max_concurrent = max_concurrent
        self._flights: SharedFlights = SharedFlights()

    def _lease(self) -> AbstractAsyncContextManager[int]:
        """Held around each request: yields the replica it goes to (the process's gate)."""
        return call_gate().lease(self.endpoint, self.replicas, self.max_concurrent)

    @property
    def output_mode(self) -> OutputMode:
        """The dialect the next call asks in (what the endpoint accepted so far)."""
        return ENDPOINTS.get(self.endpoint)

    @property
    def model(self) -> BaseChatModel:
        """The chat model of the first replica for the running event loop."""
        return self.model_for(0)

    def model_for(self, replica: int) -> BaseChatModel:
        """The chat model of ``replica`` for the running event loop. A model's HTTP client
        belongs to the loop of its first call; a caller built from settings makes new models
        when it is used from another loop (a second ``asyncio.run``), where the old client would
        fail with "Event loop is closed". A chat model given by the caller is used as it is."""
        if self._rebuild is None:
            return self._model
        loop = asyncio.get_running_loop()
        held = self._model_loop() if self._model_loop is not None else None
        if held is not loop:
            if self._model_loop is not None:
                self._models = {}
            self._model_loop = weakref.ref(loop)
        if replica not in self._models:
            self._models[replica] = self._rebuild(replica)
        return self._models[replica]

    @classmethod
    def from_settings(
        cls,
        settings: LLMSettings,
        *,
        cache: ResponseCache | None = None,
        chat_model: BaseChatModel | None = None,
    ) -> StructuredCaller:
        """A caller over ``chat_model`` (any LangChain chat model) or else
        :func:`make_chat_model` for each URL of the settings (replicas used round-robin), keyed
        by the model id (the settings' model, else the chat model's name) and the decoding."""
        urls = split_urls(settings.base_url)
        model = chat_model or make_chat_model(settings, base_url=urls[0])
        model_id = settings.model or getattr(model, "model_name", None) or type(model).__name__
        rebuild = None
        if chat_model is None:
            rebuild = lambda i: make_chat_model(settings, base_url=urls[i])  # noqa: E731
        endpoint = None if chat_model is not None else f"{settings.base_url or 'openai'}#{model_id}"
        return cls(
            model,
            cache=cache,
            model_id=str(model_id),
            decoding=settings.decoding(),
            rebuild=rebuild,
            endpoint=endpoint,
            max_concurrent=settings.max_concurrent_calls,
            replicas=1 if chat_model is not None else len(urls),
        )

    def _cache_key(self, prompt: Prompt, rendered: str, output: dict[str, Any]) -> str:
        """(prompt file hash, model id, decoding, rendered prompt, schema or output format)."""
        return cache_key(
            prompt_sha256=prompt.sha256,
            model_id=self.model_id,
            decoding=self.decoding,
            rendered=rendered,
            schema=output,
        )

    def rendered(self, prompt: Prompt, variables: dict[str, Any], wire_schema: dict) -> str:
        """The text :meth:`call` sends first for these arguments, in the endpoint's current
        dialect (the schema written in where the server cannot take it as a response format)
        -- for an estimate before a run; nothing is sent."""
        return with_schema(prompt.render(**variables), self.output_mode, wire_schema)

    async def call(
        self,
        prompt: Prompt,
        variables: dict[str, Any],
        schema: type[M],
        *,
        key: str,
        wire_schema: dict[str, Any] | None = None,
    ) -> M | ParseFailure | CallError:
        """One structured call; ``key`` is the id put in failure records (callers re-key them);
        ``wire_schema``: the JSON schema sent (default ``schema``'s).

        Raises:
            KeyError: ``variables`` lacks a placeholder of ``prompt`` (a programming error).
        """
        rendered = prompt.render(**variables)
        json_schema = wire_schema or schema.model_json_schema()
        ckey = self._cache_key(prompt, rendered, json_schema)
        if self.cache is None:
            return await self._send(prompt, rendered, schema, json_schema, key, ckey)
        if (hit := self.cache.get(ckey)) is not None:
            try:
                cached = schema.model_validate(hit)
            except ValidationError:
                log.warning("stale cache entry %s ignored", ckey[:12])
            else:
                self.usage.count(cache_hits=1)
                return cached
        result, shared = await self._flights.run(
            ckey, lambda: self._send(prompt, rendered, schema, json_schema, key, ckey)
        )
        if not shared:
            return result
        self.usage.count(cache_hits=1)  # the same call, in flight for another item
        if isinstance(result, ParseFailure | CallError):
            return result.model_copy(update={"claim_id": key})
        return result.model_copy(deep=True)

    async def _send(
        self,
        prompt: Prompt,
        rendered: str,
        schema: type[M],
        json_schema: dict[str, Any],
        key: str,
        ckey: str,
    ) -> M | ParseFailure | CallError:
        """:meth:`call` past the cache: the request, one re-ask, the cache filled."""
        messages: list[BaseMessage] = [HumanMessage(rendered)]
        try:
            first = await self._attempt(messages, schema, json_schema)
            final = first
            if first.parsed is None:
                history = [*messages, AIMessage(first.raw)] if first.raw else messages
                reask = REASK.format(error=first.error, schema=json.dumps(json_schema))
                final = await self._attempt([*history, HumanMessage(reask)], schema, json_schema)
        except Exception as exc:  # transport errors after SDK retries; never raise out of call
            self.usage.count(errors=1)
            return CallError(claim_id=key, reason=describe_exception(exc))

        if final.parsed is None:
            self.usage.count(parse_failures=1)
            return ParseFailure(
                claim_id=key,
                reason=f"first reply: {first.error}; after re-ask: {final.error}",
                raw=final.raw[:RAW_LIMIT],
            )
        if self.cache is not None:
            self.cache.put(
                ckey,
                final.parsed.model_dump(mode="json"),
                model_id=self.model_id,
                prompt_sha256=prompt.sha256,
            )
        return final.parsed  # type: ignore[return-value]

    async def call_text(
        self,
        prompt: Prompt,
        variables: dict[str, Any],
        *,
        key: str,
        output_format: dict[str, Any],
        accept: Callable[[str], bool],
    ) -> str | CallError:
        """One plain-text call (no schema) for outputs read by their own parser: the reply's
        text, or a ``CallError``. Cached (``output_format`` in the key where a schema would be)
        only when ``accept(reply)``, so a reply its parser refuses is counted as a parse failure
        and asked again on a later run."""
        rendered = prompt.render(**variables)
        ckey = self._cache_key(prompt, rendered, output_format)
        if self.cache is not None:
            hit = self.cache.get(ckey)
            if isinstance(hit, dict) and isinstance(hit.get("raw"), str):
                self.usage.count(cache_hits=1)
                return hit["raw"]
        try:
            self.usage.count(calls=1)
            async with self._lease() as replica:
                message = await self.model_for(replica).ainvoke([HumanMessage(rendered)])
        except Exception as exc:  # transport failure after SDK retries: recorded, not raised
            self.usage.count(errors=1)
            return CallError(claim_id=key, reason=describe_exception(exc))
        self.usage.add_tokens(message)
        raw = message.text if isinstance(message, BaseMessage) else str(message)
        if not accept(raw):
            self.usage.count(parse_failures=1)
        elif self.cache is not None:
            self.cache.put(ckey, {"raw": raw}, model_id=self.model_id, prompt_sha256=prompt.sha256)
        return raw

    async def _attempt(
        self, messages: list[BaseMessage], schema: type[BaseModel], json_schema: dict[str, Any]
    ) -> _Attempt:
        """One request in the endpoint's dialect (more when the server refuses it), then
        validation."""
        mode = self.output_mode
        while True:
            try:
                attempt = await self._ask(mode, messages, schema, json_schema)
            except Exception as exc:
                if not rejects_output_format(exc):
                    raise
                following, learnt = ENDPOINTS.refused(self.endpoint, mode)
                if following is None:
                    raise
                if learnt:
                    log.warning(
                        "%s refused response_format %s (%s); asking with %s from now on",
                        self.endpoint,
                        mode,
                        describe_exception(exc),
                        following,
                    )
                mode = following
                continue
            self.usage.replied(mode)
            return attempt

    async def _ask(
        self,
        mode: OutputMode,
        messages: list[BaseMessage],
        schema: type[BaseModel],
        json_schema: dict[str, Any],
    ) -> _Attempt:
        messages = with_schema_messages(messages, mode, json_schema)
        try:
            async with self._lease() as replica:
                runnable = self._runnable(self.model_for(replica), mode, json_schema)
                self.usage.count(calls=1)  # a dialect the model lacks raised: no call sent
                out = await runnable.ainvoke(messages)
        except openai.LengthFinishReasonError as exc:  # cut off at max_tokens: a bad reply
            choices = exc.completion.choices if exc.completion else []
            raw = (choices[0].message.content or "") if choices else ""
            parsed, error = parse_tolerant(raw, schema)
            return _Attempt(parsed, raw, f"reply cut off at the token limit ({error})")
        message = out["raw"] if isinstance(out, dict) else out
        self.usage.add_tokens(message)
        raw = message.text if isinstance(message, BaseMessage) else str(message)
        # with_structured_output's out["parsed"] is not trusted: for a dict schema LangChain
        # parses with a *partial* JSON parser that silently closes truncated JSON (a cut-off
        # verdict list would pass). The raw text is parsed strictly instead; a clean JSON reply
        # is simply the first object found.
        parsed, error = parse_tolerant(raw, schema)
        return _Attempt(parsed, raw, error)

    @staticmethod
    def _runnable(model: BaseChatModel, mode: OutputMode, json_schema: dict[str, Any]) -> Any:
        """``model`` asking for JSON in ``mode``."""
        if mode == "json_schema":
            return model.with_structured_output(json_schema, method="json_schema", include_raw=True)
        if mode == "json_object":
            if not isinstance(model, BaseChatOpenAI):  # no response_format to bind
                raise NotImplementedError(f"{type(model).__name__} has no json_object mode")
            return model.bind(response_format=schema_request(mode, json_schema))
        return model
