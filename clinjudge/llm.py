"""LLM access: settings, chat-model factory, usage accounting and the one structured-call helper.

Every judge calls a model through :class:`StructuredCaller` (DESIGN "Rules of thumb"): schema first
(``response_format=json_schema`` with a dict schema), then a tolerant parse of the raw text, then
one re-ask; what still fails becomes a :class:`~clinjudge.types.ParseFailure`, and a transport
failure after the SDK's own retries a :class:`~clinjudge.types.CallError` -- never a guessed
verdict, never an exception out of :meth:`StructuredCaller.call`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from clinjudge.llm_cache import ResponseCache, cache_key
from clinjudge.llm_replies import describe_exception, parse_tolerant
from clinjudge.prompts import Prompt
from clinjudge.types import CallError, ParseFailure

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

#: Placeholder key for local OpenAI-compatible servers that ignore authentication.
NO_KEY = "not-needed"
RAW_LIMIT = 2000

REASK = (
    "Your previous reply could not be used ({error}). Reply again with only one JSON object that "
    "matches this JSON schema -- no prose, no code fence, no reasoning:\n{schema}"
)


class LLMSettings(BaseSettings):
    """Endpoint and decoding settings, read from the environment (DESIGN "Two backends").

    ``CLINJUDGE_MODEL``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``; every other field from
    ``CLINJUDGE_<FIELD>`` (e.g. ``CLINJUDGE_TEMPERATURE``, ``CLINJUDGE_REQUESTS_PER_SECOND``).
    The API key is a ``SecretStr``: it never appears in ``repr`` or :meth:`provenance`.
    """

    model_config = SettingsConfigDict(env_prefix="CLINJUDGE_", populate_by_name=True)

    model: str | None = None
    base_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")
    api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    seed: int | None = None
    timeout: float = Field(default=60.0, gt=0.0)  # seconds per HTTP request
    max_retries: int = Field(default=2, ge=0)  # SDK retries of 408/409/429/5xx/connection errors
    requests_per_second: float | None = Field(default=None, gt=0.0)  # None = unlimited
    max_tokens: int | None = Field(default=None, gt=0)

    @property
    def configured(self) -> bool:
        """True when a model is set, i.e. the LLM backend can be used."""
        return bool(self.model)

    def decoding(self) -> dict[str, Any]:
        """The settings that change what the model writes (part of every cache key)."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
        }

    def provenance(self) -> dict[str, Any]:
        """Model, endpoint and decoding for reports -- never the API key."""
        return {"model": self.model, "base_url": self.base_url, "decoding": self.decoding()}


def make_chat_model(settings: LLMSettings) -> BaseChatModel:
    """A ``ChatOpenAI`` for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...).

    Pinned to ``/v1/chat/completions`` (``use_responses_api=False``). The openai SDK retries
    429/5xx/connection errors ``max_retries`` times with backoff; ``timeout`` bounds each request.
    A missing key is allowed when ``base_url`` is set (local servers): a placeholder is sent.

    Raises:
        ValueError: no model set, or no key for the default OpenAI endpoint.
    """
    if not settings.configured:
        raise ValueError("no model configured: set CLINJUDGE_MODEL (and OPENAI_BASE_URL)")
    if settings.api_key is not None:
        api_key = settings.api_key
    elif settings.base_url:
        api_key = SecretStr(NO_KEY)
    else:
        raise ValueError("OPENAI_API_KEY is required when OPENAI_BASE_URL is not set")
    rate_limiter = None
    if settings.requests_per_second:
        rate_limiter = InMemoryRateLimiter(
            requests_per_second=settings.requests_per_second,
            check_every_n_seconds=min(0.1, 1.0 / settings.requests_per_second),
            max_bucket_size=max(1.0, settings.requests_per_second),
        )
    return ChatOpenAI(
        model=settings.model,
        base_url=settings.base_url,
        api_key=api_key,
        temperature=settings.temperature,
        top_p=settings.top_p,
        seed=settings.seed,
        max_tokens=settings.max_tokens,
        # a Timeout object (unhashable) makes langchain-openai build this model its own HTTP
        # client instead of reusing a process-wide cached one bound to the first event loop —
        # which breaks every later asyncio.run() in the same process ("Event loop is closed")
        timeout=openai.Timeout(settings.timeout),
        max_retries=settings.max_retries,
        rate_limiter=rate_limiter,
        use_responses_api=False,
    )


@dataclass
class Usage:
    """Counters of one :class:`StructuredCaller`.

    ``calls`` counts model invocations actually sent (re-asks included, cache hits excluded); the
    openai SDK's own transport retries happen below it and are not visible here. Tokens come from
    ``AIMessage.usage_metadata`` of every reply received.
    """

    calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    parse_failures: int = 0
    errors: int = 0

    def add_tokens(self, message: BaseMessage) -> None:
        meta = getattr(message, "usage_metadata", None) or {}
        self.input_tokens += int(meta.get("input_tokens", 0) or 0)
        self.output_tokens += int(meta.get("output_tokens", 0) or 0)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


# --------------------------------------------------------------------------- the caller


@dataclass
class _Attempt:
    parsed: BaseModel | None
    raw: str
    error: str


class StructuredCaller:
    """The one robust structured-output call used by every judge (DESIGN "Rules of thumb").

    ``call`` renders the prompt, serves a cached reply when there is one, and otherwise:
    (a) asks with ``response_format=json_schema`` and a dict schema (a pydantic class would make
    the SDK raise on a non-JSON reply) and validates the reply with the pydantic schema -- parsed
    strictly from the raw text, not LangChain's ``parsed``, whose partial-JSON parser "repairs"
    truncated output;
    (b) else takes the first valid JSON object embedded in the text (:func:`parse_tolerant`);
    (c) else re-asks once, quoting the error and the schema;
    (d) else returns a ``ParseFailure``. Exceptions of the model call (after the SDK's retries)
    become a ``CallError``. A server that answers ``response_format`` with HTTP 400 is asked
    without it from then on (``structured_output`` turns ``False``), relying on (b)-(c).
    Only validated results are cached.
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        cache: ResponseCache | None,
        model_id: str,
        decoding: dict[str, Any],
        rebuild: Callable[[], BaseChatModel] | None = None,
    ) -> None:
        """``rebuild`` makes the model again for another event loop (see :attr:`model`)."""
        self._model = model
        self._rebuild = rebuild
        self._model_loop: weakref.ref | None = None
        self.cache = cache
        self.model_id = model_id
        self.decoding = dict(decoding)
        self.usage = Usage()
        self.structured_output = True

    @property
    def model(self) -> BaseChatModel:
        """The chat model for the running event loop. A model's HTTP client belongs to the loop
        of its first call; a caller built from settings makes a new model when it is used from
        another loop (a second ``asyncio.run``), where the old client would fail with "Event
        loop is closed". A chat model given by the caller is used as it is."""
        if self._rebuild is not None:
            loop = asyncio.get_running_loop()
            held = self._model_loop() if self._model_loop is not None else None
            if held is not loop:
                if self._model_loop is not None:
                    self._model = self._rebuild()
                self._model_loop = weakref.ref(loop)
        return self._model

    @classmethod
    def from_settings(
        cls,
        settings: LLMSettings,
        *,
        cache: ResponseCache | None = None,
        chat_model: BaseChatModel | None = None,
    ) -> StructuredCaller:
        """A caller over ``chat_model`` (any LangChain chat model) or else
        :func:`make_chat_model`, keyed by the model id (the settings' model, else the chat
        model's name) and the settings' decoding."""
        model = chat_model or make_chat_model(settings)
        model_id = settings.model or getattr(model, "model_name", None) or type(model).__name__
        rebuild = None if chat_model is not None else (lambda: make_chat_model(settings))
        return cls(
            model,
            cache=cache,
            model_id=str(model_id),
            decoding=settings.decoding(),
            rebuild=rebuild,
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

    async def call(
        self, prompt: Prompt, variables: dict[str, Any], schema: type[M], *, key: str
    ) -> M | ParseFailure | CallError:
        """One structured call; ``key`` is the id put in failure records (callers re-key them).

        Raises:
            KeyError: ``variables`` lacks a placeholder of ``prompt`` (a programming error).
        """
        rendered = prompt.render(**variables)
        json_schema = schema.model_json_schema()
        ckey = self._cache_key(prompt, rendered, json_schema)
        if self.cache is not None and (hit := self.cache.get(ckey)) is not None:
            try:
                cached = schema.model_validate(hit)
            except ValidationError:
                log.warning("stale cache entry %s ignored", ckey[:12])
            else:
                self.usage.cache_hits += 1
                return cached

        messages: list[BaseMessage] = [HumanMessage(rendered)]
        try:
            first = await self._attempt(messages, schema, json_schema)
            final = first
            if first.parsed is None:
                history = [*messages, AIMessage(first.raw)] if first.raw else messages
                reask = REASK.format(error=first.error, schema=json.dumps(json_schema))
                final = await self._attempt([*history, HumanMessage(reask)], schema, json_schema)
        except Exception as exc:  # transport errors after SDK retries; never raise out of call
            self.usage.errors += 1
            return CallError(claim_id=key, reason=describe_exception(exc))

        if final.parsed is None:
            self.usage.parse_failures += 1
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
                self.usage.cache_hits += 1
                return hit["raw"]
        try:
            self.usage.calls += 1
            message = await self.model.ainvoke([HumanMessage(rendered)])
        except Exception as exc:  # transport failure after SDK retries: recorded, not raised
            self.usage.errors += 1
            return CallError(claim_id=key, reason=describe_exception(exc))
        self.usage.add_tokens(message)
        raw = message.text if isinstance(message, BaseMessage) else str(message)
        if not accept(raw):
            self.usage.parse_failures += 1
        elif self.cache is not None:
            self.cache.put(ckey, {"raw": raw}, model_id=self.model_id, prompt_sha256=prompt.sha256)
        return raw

    async def _attempt(
        self, messages: list[BaseMessage], schema: type[BaseModel], json_schema: dict[str, Any]
    ) -> _Attempt:
        """One request (two if the server rejects ``response_format``), then validation."""
        if self.structured_output:
            try:
                return await self._ask_structured(messages, schema, json_schema)
            except NotImplementedError:  # a chat model without json_schema structured output
                self.structured_output = False
                return await self._ask_plain(messages, schema)
            except openai.BadRequestError as exc:
                log.warning("server rejected response_format (%s); asking in plain text", exc)
                self.structured_output = False
                try:
                    return await self._ask_plain(messages, schema)
                except openai.BadRequestError:
                    self.structured_output = True  # the 400 was not about response_format
                    raise
        return await self._ask_plain(messages, schema)

    async def _ask_structured(
        self, messages: list[BaseMessage], schema: type[BaseModel], json_schema: dict[str, Any]
    ) -> _Attempt:
        runnable = self.model.with_structured_output(
            json_schema, method="json_schema", include_raw=True
        )
        self.usage.calls += 1
        out = await runnable.ainvoke(messages)
        raw_message = out["raw"]
        self.usage.add_tokens(raw_message)
        raw = raw_message.text if isinstance(raw_message, BaseMessage) else str(raw_message)
        # out["parsed"] is not trusted: for a dict schema LangChain parses with a *partial* JSON
        # parser that silently closes truncated JSON (a cut-off verdict list would pass). The raw
        # text is parsed strictly instead; a clean JSON reply is simply the first object found.
        parsed, error = parse_tolerant(raw, schema)
        return _Attempt(parsed, raw, error)

    async def _ask_plain(self, messages: list[BaseMessage], schema: type[BaseModel]) -> _Attempt:
        self.usage.calls += 1
        message = await self.model.ainvoke(messages)
        self.usage.add_tokens(message)
        raw = message.text
        parsed, error = parse_tolerant(raw, schema)
        return _Attempt(parsed, raw, error)
