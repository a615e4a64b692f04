"""Prompt files (package data) and their registry; no Python logic lives in the prompts."""

from clinjudge.prompts.registry import (
    Prompt,
    list_prompts,
    load_prompt,
    parse_prompt_overrides,
)

__all__ = ["Prompt", "list_prompts", "load_prompt", "parse_prompt_overrides"]
