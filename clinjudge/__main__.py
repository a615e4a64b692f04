"""``python -m clinjudge`` runs the command line, as the ``clinjudge`` script does."""

from clinjudge.cli import app

app(prog_name="clinjudge")
