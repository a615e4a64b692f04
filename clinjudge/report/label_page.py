"""The labelling page ``clinjudge label`` serves (issue 26): the claim viewer's stylesheet and
helpers with ``templates/label.html.j2`` and ``templates/label.js``, the session's data embedded
as JSON (:meth:`clinjudge.agreement.labelling.LabelSession.page_data`). One note at a time with
its transcript beside it; each text unit highlighted in turn and labelled from the keyboard;
every label is sent to the server that served the page, which writes it at once."""

from __future__ import annotations

from typing import Any

from clinjudge.report.html_report import render_page


def render_label_page(data: dict[str, Any]) -> str:
    return render_page("label.html.j2", "label.js", data=data)
