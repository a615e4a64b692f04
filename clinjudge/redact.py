"""What may be written down of an endpoint: URLs without their credentials.

``OPENAI_BASE_URL`` (and a search backend's URL) may carry secrets — ``https://user:secret@gateway/v1``
or ``…/v1?api_key=…`` — and every report, manifest and console line records the URL. Everything
that records one goes through :func:`public_url` (one URL, or a comma-separated list of
replicas) or, for free text such as an error message, :func:`without_credentials`: the userinfo
becomes ``***@`` and the value of every query parameter whose name looks like a secret becomes
``***``. The API key itself is never recorded at all (it is not part of any URL we build).
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

#: Query parameter names whose values are secrets (matched as substrings, any case).
_SECRET_NAMES = re.compile(
    r"key|token|secret|passw|pwd|auth|sig|credential|session|cookie|code", re.IGNORECASE
)
#: ``scheme://userinfo@`` inside any text; userinfo is bounded and holds no space, ``/`` or ``@``.
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]{0,20}://)[^\s/@]{1,256}@")
#: ``name=value`` of a secret-looking query parameter inside any text.
_SECRET_PARAM = re.compile(
    r"(?P<name>[?&;](?:[\w.-]{0,40}?)(?:key|token|secret|passw|pwd|auth|sig|credential|session"
    r"|cookie|code)[\w.-]{0,40}=)[^&\s#]{1,2048}",
    re.IGNORECASE,
)
HIDDEN = "***"


def public_url(url: str | None) -> str | None:
    """``url`` (or each URL of a comma-separated list) without userinfo and secret query values
    (module docstring); ``None`` stays ``None``."""
    if url is None:
        return None
    return ",".join(_one_public_url(part) for part in url.split(","))


def _one_public_url(url: str) -> str:
    stripped = url.strip()
    try:
        parts = urlsplit(stripped)
    except ValueError:
        return without_credentials(stripped)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{HIDDEN}@{netloc.rpartition('@')[2]}"
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(_SECRET_NAMES.search(k) for k, _ in pairs):
        query = urlencode(
            [(k, HIDDEN if _SECRET_NAMES.search(k) else v) for k, v in pairs], safe="*"
        )
    if netloc == parts.netloc and query == parts.query:
        return stripped
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def without_credentials(text: str) -> str:
    """``text`` with the userinfo of every URL in it and the values of secret-looking query
    parameters replaced by ``***`` (for error messages that quote a URL)."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{HIDDEN}@", text)
    return _SECRET_PARAM.sub(lambda m: f"{m['name']}{HIDDEN}", text)
