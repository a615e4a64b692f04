"""Endpoint and decoding settings of the LLM backend, and the chat model they make."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from clinjudge.errors import ConfigError
from clinjudge.llm_endpoints import split_urls
from clinjudge.redact import public_url, without_credentials

#: Placeholder key for local OpenAI-compatible servers that ignore authentication.
NO_KEY = "not-needed"


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
    #: Requests in flight to each URL of the endpoint at once, over every judge of the process
    #: -- of every worker, with ``--executor ray`` (None = as many as the run sends). A local
    #: llama.cpp server answers one at a time: with 1, a queued request's timeout does not run
    #: while it waits. ``OPENAI_BASE_URL`` may list replicas, comma-separated: requests go to
    #: the least busy, round-robin (:mod:`clinjudge.llm_endpoints`).
    max_concurrent_calls: int | None = Field(default=None, gt=0)
    #: A GGUF model file for ``--backend local`` (served by llama-cpp-python on 127.0.0.1) and
    #: the sha256 it must have (checked before it is loaded).
    gguf: Path | None = None
    gguf_sha256: str | None = None
    #: CPU threads of that server (``CLINJUDGE_THREADS``, ``--threads``; default: the cores
    #: this process may use, :func:`clinjudge.local_model.default_threads`).
    threads: int | None = Field(default=None, gt=0)

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
        """Model, endpoint and decoding for reports -- never the API key, and the endpoint without
        the credentials a URL may carry (:func:`clinjudge.redact.public_url`)."""
        return {
            "model": self.model,
            "base_url": public_url(self.base_url),
            "decoding": self.decoding(),
        }


def make_chat_model(settings: LLMSettings, base_url: str | None = None) -> BaseChatModel:
    """A ``ChatOpenAI`` for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...)
    at ``base_url`` (default: the first URL of ``settings.base_url``).

    Pinned to ``/v1/chat/completions`` (``use_responses_api=False``). The openai SDK retries
    429/5xx/connection errors ``max_retries`` times with backoff; ``timeout`` bounds each request.
    A missing key is allowed when ``base_url`` is set (local servers): a placeholder is sent.

    Raises:
        ValueError: no model set, or no key for the default OpenAI endpoint.
    """
    if not settings.configured:
        raise ValueError("no model configured: set CLINJUDGE_MODEL (and OPENAI_BASE_URL)")
    base_url = base_url or split_urls(settings.base_url)[0]
    if settings.api_key is not None:
        api_key = settings.api_key
    elif base_url:
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
        base_url=base_url,
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


class Juror(BaseModel):
    """One grader of a jury (issue 39 item 3): a model at an OpenAI-compatible endpoint, named
    ``MODEL@BASE_URL`` on the command line (``--jury``). Its name in reports is the model id;
    the key is the environment's (``OPENAI_API_KEY``), as for a single model, never recorded."""

    model: str
    base_url: str

    @property
    def name(self) -> str:
        return self.model

    def settings(self, base: LLMSettings) -> LLMSettings:
        """``base`` (decoding, timeout, retries, key, bounds) for this juror's model and URL."""
        return base.model_copy(update={"model": self.model, "base_url": self.base_url})

    def host(self) -> str:
        """The endpoint's host and port, without credentials or path (reports)."""
        return urlsplit(public_url(self.base_url) or "").netloc.rpartition("@")[2]


def parse_jury(entries: Iterable[str]) -> list[Juror]:
    """``["gpt-4o@https://api.openai.com/v1", "llama@http://gpu:8000/v1"]`` (an entry may also
    hold several, comma-separated) → jurors, in order. The model is what precedes the first
    ``@``; a model id holds none, a URL's credentials may.

    Raises:
        ConfigError: an entry without a model or an http(s) URL, fewer than two jurors, or a
            model named twice (its replies would be one juror's: the cache keys on the model).
    """
    jurors: list[Juror] = []
    for entry in (e.strip() for given in entries for e in given.split(",")):
        if not entry:
            continue
        model, _, url = entry.partition("@")
        shown = without_credentials(entry)
        if not model.strip() or not url.strip().lower().startswith(("http://", "https://")):
            raise ConfigError(
                f"--jury {shown!r}: name a juror MODEL@URL, e.g. llama3@http://localhost:8000/v1"
            )
        if any(j.model == model.strip() for j in jurors):
            raise ConfigError(
                f"--jury names model {model.strip()!r} twice; each juror is another model (or "
                "another name the server answers to)"
            )
        jurors.append(Juror(model=model.strip(), base_url=url.strip()))
    if len(jurors) < 2:
        raise ConfigError("--jury needs at least two jurors: MODEL@URL,MODEL@URL")
    return jurors
