"""Shared pytest fixtures. Keep this file small: one fixture per shared resource."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from openai_stub import OpenAIStub


@pytest.fixture(autouse=True)
def _fresh_endpoint_memory() -> Iterator[None]:
    """Each test starts with no remembered server dialect (llm_dialects.ENDPOINTS)."""
    from clinjudge.llm_dialects import ENDPOINTS

    ENDPOINTS.forget()
    yield


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A loopback OpenAI-compatible server: ``.base_url``, ``.requests``, ``.script(fn)``."""
    stub = OpenAIStub().start()
    try:
        yield stub
    finally:
        stub.stop()
