"""Finding a quoted string in the text it quotes, keeping character offsets."""

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
