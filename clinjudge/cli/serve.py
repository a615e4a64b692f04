"""``clinjudge serve``: a GGUF model file served on 127.0.0.1 for ``--backend llm``."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Annotated

import typer

from clinjudge.cli.common import one_line_errors, stderr
from clinjudge.cli.stopping import stop_signals


def serve(
    gguf: Annotated[Path, typer.Option("--gguf", help="The GGUF model file to serve.")],
    sha256: Annotated[
        str | None,
        typer.Option(help="The sha256 the file must have; checked before it is loaded."),
    ] = None,
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: a free one).", min=0)] = 8080,
    n_ctx: Annotated[
        int, typer.Option("--n-ctx", help="Context window in tokens.", min=512)
    ] = 16384,
    threads: Annotated[
        int | None,
        typer.Option(help="CPU threads (default: the cores this process may use).", min=1),
    ] = None,
) -> None:
    """Serve a GGUF model on 127.0.0.1 with llama-cpp-python's OpenAI-compatible server, and
    print the settings that point clinjudge at it. Stop it with Ctrl-C.

    Nothing is downloaded: bring the file. Needs the local extra (`pip install -e '.[local]'`).
    Then, in another shell: `clinjudge judge ... --backend llm --protocol claim`. Or skip this
    command: `--backend local --gguf FILE` starts the same server for one run.

    Exit codes: 0 stopped, 2 bad input or a server that does not start (one line).
    """
    from clinjudge.local_model import start_server

    with one_line_errors():
        server = start_server(gguf, sha256=sha256, port=port or None, n_ctx=n_ctx, threads=threads)
    stderr.print(f"serving {server.gguf.name} (sha256 {server.sha256[:12]}…) at {server.base_url}")
    print(f"export CLINJUDGE_MODEL={server.model_id} OPENAI_BASE_URL={server.base_url}")
    print("export CLINJUDGE_MAX_CONCURRENT_CALLS=1 CLINJUDGE_TIMEOUT=1800", flush=True)
    stderr.print(f"log: {server.log}; Ctrl-C stops it")
    try:
        with stop_signals():  # also from a script's background job (SIGINT inherited ignored)
            code = server.process.wait()
    except KeyboardInterrupt:
        server.stop()
        code = 0
    if code not in (0, -signal.SIGTERM, -signal.SIGINT):
        stderr.print(f"the server exited with {code}; see {server.log}")
        raise typer.Exit(1)
