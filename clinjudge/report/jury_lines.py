"""What a report says about a judge graded by a jury (``--jury``, issue 39 item 3: a rubric or a
SOAP judge): how far the jurors agree (Fleiss' κ overall, and per criterion for a rubric), the
ties, each juror's agreement with the jury's verdict and what each juror cost. Reads the
``jury`` block of the judge's summary (:mod:`clinjudge.metrics.jury`) and each juror's usage
in ``report.json``'s ``usage``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from clinjudge.report.formatting import markdown_table


def jury_line(name: str, summary: dict[str, Any]) -> str | None:
    """One console line: ``NAME: jury of 3 (a, b, c): Fleiss κ 0.41 (agreement 0.80, 30
    grades); 2 ties; with the jury: a 93%, b 87%, c 80%``; ``None`` without a jury."""
    jury = summary.get("jury")
    if not jury:
        return None
    k = jury["kappa"]
    with_jury = ", ".join(f"{n} {_with_jury(j)}" for n, j in jury["by_juror"].items())
    return (
        f"{name}: jury of {len(jury['jurors'])} ({', '.join(jury['jurors'])}): Fleiss κ "
        f"{_number(k['kappa'])} (observed agreement {_number(k['observed'])}, {k['n']} grades "
        f"with two votes or more); {jury['ties']} ties (not scored); {jury['no_votes']} with no "
        f"vote; each juror with the jury: {with_jury}"
    )


def jury_tables(name: str, summary: dict[str, Any], usage: dict[str, Any] | None) -> Iterator[str]:
    """``report.md``: the agreement per criterion (a rubric's) and per juror, with each juror's
    cost."""
    jury = summary.get("jury")
    if not jury:
        return
    line = jury_line(name, summary)
    yield (
        f"**Jury.** {line}. A juror whose reply gave no verdict is left out of that vote; a tie "
        "(as many votes each way) is kept as a tie, never broken, and not scored."
    )
    if "by_criterion" in jury:
        yield _criterion_table(jury)
    yield _juror_table(jury, usage)


def _criterion_table(jury: dict[str, Any]) -> str:
    return markdown_table(
        ("criterion", "Fleiss κ", "observed agreement", "items", "jurors split", "ties"),
        [
            (cid, _number(c["kappa"]), _number(c["observed"]), c["items"], c["split"], c["ties"])
            for cid, c in jury["by_criterion"].items()
        ],
    )


def _juror_table(jury: dict[str, Any], usage: dict[str, Any] | None) -> str:
    spent = (usage or {}).get("jurors") or {}
    return markdown_table(
        (
            "juror",
            "voted",
            "no verdict",
            "with the jury",
            "Cohen κ",
            "calls (this command)",
            "prompt tokens",
            "completion tokens",
        ),
        [
            (
                n,
                j["voted"],
                j["failed"],
                _with_jury(j),
                _number(j.get("kappa")),
                (spent.get(n) or {}).get("calls", "n/a"),
                (spent.get(n) or {}).get("input_tokens", "n/a"),
                (spent.get(n) or {}).get("output_tokens", "n/a"),
            )
            for n, j in jury["by_juror"].items()
        ],
    )


def _with_jury(juror: dict[str, Any]) -> str:
    """Its agreement with the verdict (met / not met), or its mean distance from the mean
    level."""
    if "mean_abs_difference" in juror:
        gap = juror["mean_abs_difference"]
        return "n/a" if gap is None else f"±{gap:.2f} levels"
    agreement = juror.get("agreement")
    return "n/a" if agreement is None else f"{agreement:.0%} (n {juror['n']})"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
