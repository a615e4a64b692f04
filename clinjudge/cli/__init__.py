"""The ``clinjudge`` command line: one module per command, shared helpers in
:mod:`.common`.

    clinjudge judge --transcript t.txt --note n.txt [--mode inference-aware] [--json]
    clinjudge compare aci-demo --judges lexical,inference-aware --out runs/demo
    clinjudge arena systems.csv --systems reference,gpt4,bart --judge pairwise --out runs/arena
    clinjudge report runs/demo --format tsv
    clinjudge knowledge search "heart attack"

Bad input exits with code 2 and a one-line reason on stderr, never a traceback.
"""

from __future__ import annotations

import typer

from clinjudge.cli.agreement import agreement
from clinjudge.cli.arena import arena
from clinjudge.cli.cef import cef
from clinjudge.cli.compare import compare
from clinjudge.cli.detect import detect, gate, pairs
from clinjudge.cli.factcheck import factcheck
from clinjudge.cli.help_style import quiet_type_labels
from clinjudge.cli.inject import inject
from clinjudge.cli.judge import judge
from clinjudge.cli.knowledge import knowledge_app
from clinjudge.cli.label import label
from clinjudge.cli.meta_eval import meta_eval
from clinjudge.cli.report import report
from clinjudge.cli.safety_case import safety_case
from clinjudge.cli.serve import serve

quiet_type_labels()
app = typer.Typer(
    help="Judge clinical text written by language models, claim by claim.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


def _version(shown: bool) -> None:
    if shown:
        from clinjudge import __version__

        typer.echo(f"clinjudge {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Judge clinical text written by language models, claim by claim."""


app.command()(judge)
app.command()(compare)
app.command()(arena)
app.command()(cef)
app.command()(factcheck)
app.command()(detect)
app.command()(pairs)
app.command()(gate)
app.command()(inject)
app.command("meta-eval")(meta_eval)
app.command()(report)
app.command()(agreement)
app.command()(label)
app.command("safety-case")(safety_case)
app.command()(serve)
app.add_typer(knowledge_app, name="knowledge", help="Build, search and inspect knowledge.")


def main() -> None:  # pragma: no cover - console entry point
    app()
