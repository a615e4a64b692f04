"""The search interface of the fact-checker (SPEC §3 step 3): one small protocol, one passage type.

A :class:`SearchBackend` has a ``name`` and ``async search(query, k) -> list[Passage]`` returning at
most ``k`` passages, best first. Web backends (:mod:`.web`), the local passage corpus and the
knowledge index (:mod:`.local`) all implement it, so the fact-checking graph never knows which one
it runs. A backend that cannot answer after its retries raises :class:`SearchError` (one line),
which the graph records as that claim's error — never a crash of the whole answer.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel


class SearchError(Exception):
    """A search that failed after retries (HTTP status, timeout, unreadable reply): one line."""


class Passage(BaseModel):
    """One retrieved piece of evidence.

    ``id`` is the corpus passage id, the knowledge concept id, or the URL for web results;
    ``text`` is the snippet the rater reads; ``source`` names the backend that found it.
    """

    id: str
    text: str
    url: str = ""
    title: str = ""
    score: float | None = None
    source: str = ""


class SearchBackend(Protocol):
    name: str

    async def search(self, query: str, k: int) -> list[Passage]:
        """At most ``k`` passages for ``query``, best first; raises :class:`SearchError`."""
        ...

    def describe(self) -> dict[str, object]:
        """JSON-ready identity for provenance: backend name, base URL or corpus digest — never a
        key."""
        ...
