"""``python -m clinjudge`` runs the command line, as the ``clinjudge`` script does."""

if __name__ == "__main__":  # not when a collector (pytest's doctests) imports the module
    from clinjudge.cli import app

    app(prog_name="clinjudge")
