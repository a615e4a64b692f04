"""Search backends of the fact-checker behind one interface (SPEC §3 step 3).

``make_search`` picks one by configuration: a JSONL corpus (``--corpus``), a web API
(``--search searxng|brave|tavily|serper``, ``--search-url``) or the knowledge index
(``--search knowledge``, the default when nothing else is given).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from clinjudge.errors import ConfigError
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.search.base import Passage, SearchBackend, SearchError
from clinjudge.search.local import (
    CorpusSearch,
    KnowledgeSearch,
    passages_from_value,
    read_corpus,
)
from clinjudge.search.web import WEB_BACKENDS, WebSearch, WebSearchConfig

SEARCH_NAMES: tuple[str, ...] = ("knowledge", *WEB_BACKENDS)


def make_search(
    search: str | None = None,
    *,
    search_url: str | None = None,
    corpus: str | Path | None = None,
    knowledge: KnowledgeBase | None = None,
    env: Mapping[str, str] | None = None,
    config: WebSearchConfig | None = None,
) -> SearchBackend:
    """The configured backend: ``corpus`` (a JSONL path) or ``search`` (a name of
    :data:`SEARCH_NAMES`); neither → the knowledge index. Raises :class:`ConfigError` for both at
    once, an unknown name, a missing key or URL, or an unreadable corpus."""
    if corpus is not None and search not in (None, "", "corpus"):
        raise ConfigError("give either a corpus or a search backend, not both")
    if corpus is not None:
        path = Path(corpus)
        return CorpusSearch(read_corpus(path), label=str(path))
    name = search or "knowledge"
    if name == "knowledge":
        return KnowledgeSearch(knowledge or KnowledgeBase.default())
    if name not in WEB_BACKENDS:
        raise ConfigError(f"unknown search backend {name!r}: choose from {', '.join(SEARCH_NAMES)}")
    return WEB_BACKENDS[name](search_url, env=env, config=config)


__all__ = [
    "SEARCH_NAMES",
    "CorpusSearch",
    "KnowledgeSearch",
    "Passage",
    "SearchBackend",
    "SearchError",
    "WebSearch",
    "WebSearchConfig",
    "make_search",
    "passages_from_value",
    "read_corpus",
]
