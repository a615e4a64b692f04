"""One sentence of a note judged offline against a transcript: the verdict of its one claim."""

from __future__ import annotations

from clinjudge.api import judge_note


def one_verdict(setup, transcript: str, sentence: str, section: str):
    result = judge_note(transcript, f"{section}\n\n{sentence}\n", setup=setup)
    assert len(result.report.verdicts) == 1, result.report
    return result.report.verdicts[0]
