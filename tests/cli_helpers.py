"""Running the ``clinjudge`` CLI in tests, and the check every bad input must pass: exit code 2,
one line on stderr naming the reason, no traceback."""

from __future__ import annotations

from typer.testing import CliRunner

from clinjudge.cli import app

runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def assert_one_line_error(result, needle: str) -> None:
    assert result.exit_code == 2, result.output
    text = result.stderr if hasattr(result, "stderr") else result.output
    assert "Traceback" not in result.output and "Traceback" not in text
    lines = [line for line in text.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], text
