"""``clinjudge label``: a reviewer labels the notes of a compare run unit by unit in the browser,
served on 127.0.0.1 (issue 26; :mod:`clinjudge.agreement.labelling`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from clinjudge.cli.common import UsageError, one_line_errors, stderr
from clinjudge.errors import ConfigError


def _items(run, dataset: str | None):
    """The run's dataset items, loaded as its compare command recorded them.

    Raises:
        ConfigError: no command recorded, or a dataset that cannot be read.
    """
    command = dict(run.manifest.get("command") or {})
    if not command:
        raise ConfigError(
            f"{run.path}: run.json records no compare command (run the same compare into it "
            "once with this version)"
        )
    if dataset is not None:
        command["dataset"] = dataset
    from clinjudge.cli.compare import load_run_items
    from clinjudge.datasets.loader import DatasetError

    try:
        return load_run_items(command, require_source=False).items
    except (DatasetError, OSError, KeyError, ValueError) as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(
            f"{run.path}: cannot read the run's dataset {command['dataset']!r} ({reason}); "
            "give --dataset FILE if it has moved"
        ) from None


def label(
    run_dir: Annotated[Path, typer.Argument(help="A directory written by `clinjudge compare`.")],
    reviewer: Annotated[
        str,
        typer.Option(
            help="Your name: the label file is RUN_DIR/labels/REVIEWER.jsonl (letters, digits, "
            "'_' and '-'). Each reviewer labels into a file of their own."
        ),
    ],
    port: Annotated[
        int, typer.Option(help="Port on 127.0.0.1 (default 0: a free one).", min=0, max=65535)
    ] = 0,
    show_verdicts: Annotated[
        bool,
        typer.Option(
            "--show-verdicts",
            help="Show the SOAP judges' claims over each unit with their tiers (default: "
            "hidden, so labels are blind).",
        ),
    ] = False,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the URL only; open no browser.")
    ] = False,
    dataset: Annotated[
        str | None,
        typer.Option(help="The dataset file, when it has moved since the run."),
    ] = None,
) -> None:
    """Label every sentence of a run's notes in the browser: supported, unsupported or
    contradicted, major or minor, with an optional comment; each label is written to
    RUN_DIR/labels/REVIEWER.jsonl at once. Stop with Ctrl-C; run it again to resume.

    Example: `clinjudge compare notes.csv --judges lexical,inference-aware --out runs/mine`,
    `clinjudge label runs/mine --reviewer alice`, then
    `clinjudge agreement runs/mine --labels runs/mine/labels/alice.jsonl --out runs/mine-agreement`.

    **Units.** RUN_DIR/units.jsonl (written when absent) cuts each note into sentences within
    lines, as the shared claim-labels units are cut; section headers are not labelled.

    **Keys.** j/k next/previous unit, 1/2/3 supported/unsupported/contradicted, m major ↔
    minor, c comment (Enter saves), x remove the label, n/p next/previous note, ? the keys.

    **Blind.** The judges' verdicts are hidden unless --show-verdicts is given.

    **Only you.** The printed URL holds a token the page exchanges for a cookie; nothing is
    served without it. One label server per reviewer: a second one for the same reviewer exits
    with 2 naming the first.

    Exit codes: 0 stopped with Ctrl-C or SIGTERM; 2 bad input (not a run directory, no note to
    label, a dataset that cannot be read, a bad reviewer name, a port that is taken, another
    label server for the same reviewer).
    """
    with one_line_errors():
        from clinjudge.agreement.labelling_store import check_reviewer

        try:
            check_reviewer(reviewer)
        except ConfigError as e:
            raise UsageError(str(e)) from None
        if run_dir.is_file():
            raise UsageError(f"{run_dir}: a file, not a run directory")
        from clinjudge.agreement.labelling import reviewer_lock
        from clinjudge.agreement.runs import read_run
        from clinjudge.run_kind import require_kind

        require_kind(run_dir, ("compare",), "`clinjudge label`")

        run = read_run(run_dir)
        lock = reviewer_lock(run.path, reviewer).acquire()
    try:
        if lock.took_over:
            print(lock.took_over, file=sys.stderr)
        _serve(run, reviewer, port, show_verdicts, not no_browser, dataset)
    finally:
        lock.release()


def _serve(
    run, reviewer: str, port: int, show_verdicts: bool, open_browser: bool, dataset: str | None
) -> None:
    """Serve the reviewer's session of ``run`` until Ctrl-C or SIGTERM (the caller holds the
    reviewer's lock)."""
    with one_line_errors():
        from clinjudge.agreement.labelling import open_session
        from clinjudge.agreement.labelling_server import LabelServer

        session = open_session(run, _items(run, dataset), reviewer, show_verdicts=show_verdicts)
        try:
            server = LabelServer(session, port)
        except OSError as e:
            raise ConfigError(f"cannot serve on 127.0.0.1:{port} ({e.strerror or e})") from None
    progress = session.progress()
    stderr.print(
        f"{len(session.notes)} notes, {progress['labelled']}/{progress['units']} units labelled "
        f"by {reviewer}; labels: {session.labels.path}; units: {session.units_file}; "
        f"verdicts {'shown' if show_verdicts else 'hidden (blind)'}; Ctrl-C stops"
    )
    _stop_on_signals(server.stop)  # before the URL: a script may signal as soon as it reads it
    print(server.url, flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    server.serve_forever()
    progress = session.progress()
    stderr.print(
        f"stopped: {progress['labelled']}/{progress['units']} units labelled in "
        f"{session.labels.path}"
    )


def _stop_on_signals(stop: Callable[[], None]) -> None:
    """Ctrl-C and SIGTERM stop the server cleanly, also when the command was started from a
    script in the background (which starts it with SIGINT ignored, so Python would not turn
    Ctrl-C into ``KeyboardInterrupt``): every label is already on disk. uvicorn installs its
    own handlers while it serves and passes the signal on to these when it returns, where a
    second stop does nothing (so the exit code stays 0)."""
    import signal

    def handler(signum: int, frame: object) -> None:
        stop()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, handler)
