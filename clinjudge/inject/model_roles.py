"""The four model roles of the LLM injection pipeline and the settings they come from
(SPEC §5: "two independent models must agree that an error type applies", an injector, an LLM
validator).

* ``applicability_a`` and ``injector`` — the main model: ``CLINJUDGE_MODEL`` at
  ``OPENAI_BASE_URL`` (:class:`clinjudge.llm.LLMSettings`);
* ``applicability_b`` and ``validator`` — a second, independent model:
  ``CLINJUDGE_INJECT_MODEL_B`` at ``CLINJUDGE_INJECT_BASE_URL_B`` (default ``OPENAI_BASE_URL``),
  key ``CLINJUDGE_INJECT_API_KEY_B`` (default ``OPENAI_API_KEY``); the validator is a model that
  did not write the edit. A second model identical to the first (same id, same endpoint) is
  refused: two calls of one model are not two independent judgements.

Every call goes through :class:`clinjudge.llm.StructuredCaller`; decoding settings are shared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from clinjudge.errors import ConfigError
from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller
from clinjudge.prompts import Prompt, load_prompt

#: Prompt slot → built-in prompt name (each can be overridden with ``--prompt NAME=PATH``).
PROMPTS: dict[str, str] = {
    "applicability": "inject.applicability",
    "inject_error": "inject.error",
    "inject_rewrite": "inject.rewrite",
    "validate_error": "inject.validate_error",
    "validate_rewrite": "inject.validate_rewrite",
}
ROLES = ("applicability_a", "applicability_b", "injector", "validator")


class InjectSettings(BaseSettings):
    """The second model of the pipeline, from ``CLINJUDGE_INJECT_*`` (module docstring)."""

    model_config = SettingsConfigDict(env_prefix="CLINJUDGE_INJECT_", populate_by_name=True)

    model_b: str | None = None
    base_url_b: str | None = None
    api_key_b: SecretStr | None = Field(default=None)


def second_model_settings(settings: LLMSettings, inject: InjectSettings) -> LLMSettings:
    """LLM settings of model B: the main settings with B's model, endpoint and key."""
    if not inject.model_b:
        raise ConfigError(
            "the llm injection backend needs a second, independent model: set "
            "CLINJUDGE_INJECT_MODEL_B (and CLINJUDGE_INJECT_BASE_URL_B for another endpoint)"
        )
    b = settings.model_copy(
        update={
            "model": inject.model_b,
            "base_url": inject.base_url_b or settings.base_url,
            "api_key": inject.api_key_b or settings.api_key,
        }
    )
    if (b.model, b.base_url) == (settings.model, settings.base_url):
        raise ConfigError(
            "CLINJUDGE_INJECT_MODEL_B names the same model at the same endpoint as "
            "CLINJUDGE_MODEL: applicability needs two independent models"
        )
    return b


@dataclass
class InjectModels:
    """The callers per role and the prompts per slot (the graph's run context holds this)."""

    callers: dict[str, StructuredCaller]
    prompts: dict[str, Prompt]
    settings: dict[str, LLMSettings] = field(default_factory=dict)

    def model_ids(self) -> dict[str, str]:
        return {role: caller.model_id for role, caller in self.callers.items()}

    def provenance(self) -> dict[str, Any]:
        """Models per role, endpoints, decoding and prompt refs — never an API key."""
        first = next(iter(self.callers.values()))
        return {
            "models": self.model_ids(),
            "base_urls": {r: s.base_url for r, s in self.settings.items()},
            "decoding": first.decoding,
            "prompts": {slot: p.ref().model_dump() for slot, p in self.prompts.items()},
        }

    def usage(self) -> dict[str, dict[str, int]]:
        return {role: caller.usage.as_dict() for role, caller in self.callers.items()}


def load_inject_prompts(overrides: dict[str, Path] | None = None) -> dict[str, Prompt]:
    """The five prompts, any of them replaced by a file (``overrides``: prompt name → path)."""
    overrides = overrides or {}
    unknown = set(overrides) - set(PROMPTS.values())
    if unknown:
        raise ConfigError(f"no prompt named {sorted(unknown)[0]!r} in the injection pipeline")
    return {slot: load_prompt(name, overrides.get(name)) for slot, name in PROMPTS.items()}


def build_inject_models(
    settings: LLMSettings | None = None,
    inject: InjectSettings | None = None,
    *,
    cache: ResponseCache | None = None,
    prompt_overrides: dict[str, Path] | None = None,
) -> InjectModels:
    """Callers for the four roles from the environment (or the given settings)."""
    settings = settings or LLMSettings()
    if not settings.configured:
        raise ConfigError("backend llm needs a model: set CLINJUDGE_MODEL (and OPENAI_BASE_URL)")
    b = second_model_settings(settings, inject or InjectSettings())
    a_caller = StructuredCaller.from_settings(settings, cache=cache)
    b_caller = StructuredCaller.from_settings(b, cache=cache)
    # one caller per role, so that usage is counted per role; A and B share nothing
    callers = {
        "applicability_a": a_caller,
        "applicability_b": b_caller,
        "injector": StructuredCaller.from_settings(settings, cache=cache),
        "validator": StructuredCaller.from_settings(b, cache=cache),
    }
    return InjectModels(
        callers=callers,
        prompts=load_inject_prompts(prompt_overrides),
        settings={
            "applicability_a": settings,
            "applicability_b": b,
            "injector": settings,
            "validator": b,
        },
    )
