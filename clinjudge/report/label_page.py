"""The labelling page ``clinjudge label`` serves (issue 26): the claim viewer's stylesheet and
helpers with ``templates/label.html.j2`` and ``templates/label.js``, the list of notes and the
progress embedded as JSON (:meth:`clinjudge.agreement.labelling.LabelSession.page_data`); each
note is fetched from the server when it is opened (``GET /note/N``). One note at a time with its
transcript beside it, turns numbered from 1; each text unit highlighted in turn and labelled
from the keyboard, with cited turns and a marked span; every label is sent to the server that
served the page, which writes it at once."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from clinjudge.report.html_report import render_page

#: An inline script (a bare ``<script>``: the JSON data block has attributes and never runs)
#: or style sheet of the page, and its text.
_INLINE = re.compile(r"<(?P<tag>script|style)>(?P<text>.*?)</(?P=tag)>", re.DOTALL)


def render_label_page(data: dict[str, Any]) -> str:
    return render_page("label.html.j2", "label.js", data=data)


def inline_hashes(page: str) -> dict[str, list[str]]:
    """The content-security-policy sources (``sha256-…``) of the page's inline scripts and
    style sheets, by tag: the server allows these and nothing else. They do not depend on the
    page's data, so one rendering gives the hashes of every page the server sends."""
    found: dict[str, list[str]] = {"script": [], "style": []}
    for block in _INLINE.finditer(page):
        digest = hashlib.sha256(block["text"].encode("utf-8")).digest()
        found[block["tag"]].append("sha256-" + base64.b64encode(digest).decode("ascii"))
    return found
