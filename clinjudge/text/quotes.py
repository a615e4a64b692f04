"""Finding a quoted string in the text it quotes, keeping character offsets; quoting a
sentence in a rationale."""

from __future__ import annotations


def find_verbatim(text: str, quote: str) -> tuple[int, int] | None:
    """The span of ``quote`` (stripped) in ``text``: exact match first, then case-insensitive;
    ``None`` when it is not there verbatim (callers choose their own fuzzy fallback)."""
    quote = quote.strip()
    if not quote:
        return None
    at = text.find(quote)
    if at < 0:
        at = text.lower().find(quote.lower())
    return (at, at + len(quote)) if at >= 0 else None


def clip_quote(text: str, limit: int = 90) -> str:
    """``text`` on one line, cut to ``limit`` characters with "…" (a rationale's quote)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
