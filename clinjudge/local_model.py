"""A GGUF model file the user has, served on 127.0.0.1 by llama-cpp-python's OpenAI-compatible
server, for the LLM backend (``--backend local --gguf FILE``, or ``clinjudge serve``).

Nothing is downloaded: the file must exist, start with the GGUF magic bytes and, when a sha256
is given, hash to it. The server runs in a child process (``python -m llama_cpp.server``) on a
free loopback port, is waited for until ``/v1/models`` answers, and is stopped when the process
exits. Its model id is ``<file stem>@<first 12 hex digits of the file's sha256>``, so replies
cached for one file are never served for another (the hash is computed once per file and kept
by path, size and modification time). A llama.cpp server answers one request at a time and a
1.5B model on two CPU cores needs minutes for a long prompt, so the settings it gives allow
one request in flight and a 30-minute timeout unless the user set others.

A run's calls reach the server at their floor (issue 38): the notes of a run are judged one
after the other (:func:`clinjudge.cli.common.run_concurrency`) and every call of a note opens
with the same transcript and note, so the server reuses the previous request's prefix (its
log says "prefix-match hit"). Its RAM prompt cache (``--cache``, states of earlier prompts) stays
off: in llama-cpp-python 0.3.36 each state it saved stayed in memory past the cache's size, so
the server grew by about 230 MB a request (12 requests: 2.2 → 5.0 GB with a 1 GiB cache, 2.2 →
2.3 GB without; a CEF run of 110 requests reached 18.6 GB on this 24 GB machine, 2026-12-04),
and the previous request's prefix, which it would add to, is reused without it. It runs on
:func:`default_threads` threads -- the cores this process may use -- unless ``--threads``
(``CLINJUDGE_THREADS``) says otherwise.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from clinjudge.cores import available_cores
from clinjudge.errors import ConfigError
from clinjudge.llm_cache import CACHE_DIR_ENV
from clinjudge.llm_settings import LLMSettings

GGUF_MAGIC = b"GGUF"
#: Context of the served model: the batch protocol's prompt, a long visit and a note fit.
DEFAULT_N_CTX = 16384
LOCAL_TIMEOUT = 1800.0
READY_SECONDS = 180.0
EXTRA_HINT = "pip install -e '.[local]' (llama-cpp-python builds from source, ~6-16 min)"

#: The server's threads unless ``--threads``: every core this process may use.
default_threads = available_cores


@dataclass
class LocalServer:
    """A running server: its endpoint, the model id it answers to, and its log."""

    gguf: Path
    sha256: str
    model_id: str
    base_url: str
    log: Path
    process: subprocess.Popen

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def provenance(self) -> dict[str, str]:
        return {"server": "llama-cpp-python", "gguf": self.gguf.name, "sha256": self.sha256}


def cache_root() -> Path:
    base = os.environ.get(CACHE_DIR_ENV) or Path.home() / ".cache" / "clinjudge"
    return Path(base).expanduser()


def check_gguf(path: Path) -> Path:
    """The resolved path of a readable GGUF file.

    Raises:
        ConfigError: missing, a directory, or not GGUF (a one-line reason).
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise ConfigError(f"GGUF file not found: {path}")
    if path.is_dir():
        raise ConfigError(f"--gguf is a directory, not a model file: {path}")
    with path.open("rb") as f:
        if f.read(4) != GGUF_MAGIC:
            raise ConfigError(f"not a GGUF model file (no GGUF header): {path}")
    return path.resolve()


def file_sha256(path: Path) -> str:
    """The file's sha256, remembered by (path, size, mtime) under the cache directory."""
    stat = path.stat()
    key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}"
    memo = cache_root() / "gguf_sha256.json"
    known: dict[str, str] = {}
    if memo.is_file():
        try:
            known = json.loads(memo.read_text())
        except (OSError, ValueError):
            known = {}
    if key in known:
        return known[key]
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    known[key] = digest.hexdigest()
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text(json.dumps(known, indent=1))
    return known[key]


def verified_gguf(path: Path, sha256: str | None = None) -> tuple[Path, str]:
    """``(path, sha256)`` of a GGUF file, checked against ``sha256`` when given.

    Raises:
        ConfigError: not a GGUF file, or its hash differs (never loaded then).
    """
    path = check_gguf(path)
    actual = file_sha256(path)
    if sha256 and actual != sha256.strip().lower():
        raise ConfigError(f"{path.name}: sha256 is {actual}, not the expected {sha256.strip()}")
    return path, actual


def require_runtime() -> None:
    """Raises ConfigError naming the extra when llama-cpp-python's server is not installed."""
    for module in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette"):
        if importlib.util.find_spec(module) is None:
            raise ConfigError(f"serving a GGUF file needs the local extra: {EXTRA_HINT}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: Runs llama-cpp-python's server in a process that exits when its parent does (a run killed
#: with -9 leaves no model server behind): a thread polls the parent's pid.
WITH_PARENT = """
import os, runpy, sys, threading, time
parent = os.getppid()
def watch():
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
sys.argv = ["llama_cpp.server", *sys.argv[1:]]
runpy.run_module("llama_cpp.server", run_name="__main__")
"""


def server_command(
    gguf: Path, model_id: str, port: int, *, n_ctx: int = DEFAULT_N_CTX, threads: int | None = None
) -> list[str]:
    threads = threads or default_threads()
    return [
        sys.executable, "-c", WITH_PARENT,
        "--model", str(gguf), "--model_alias", model_id,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--n_threads_batch", str(threads),
        "--use_mlock", "False",
        "--cache", "False",  # its RAM cache grows without bound (module docstring)
        # no logits kept for every prompt token (the server's default keeps n_ctx × vocab
        # floats: gigabytes for a 16k context); clinjudge asks for no logprobs
        "--logits_all", "False",
    ]  # fmt: skip


def start_server(
    gguf: Path,
    *,
    sha256: str | None = None,
    port: int | None = None,
    n_ctx: int = DEFAULT_N_CTX,
    threads: int | None = None,
    ready_seconds: float = READY_SECONDS,
    stream_log: bool = False,
) -> LocalServer:
    """Start llama-cpp-python's server on ``gguf`` and wait until it answers.

    Raises:
        ConfigError: no runtime, a bad file or hash, or a server that exits or does not answer
            within ``ready_seconds`` (the last line of its log is quoted).
    """
    path, digest = verified_gguf(gguf, sha256)
    require_runtime()
    model_id = f"{path.stem}@{digest[:12]}"
    port = port or free_port()
    log = cache_root() / "local-server" / f"{model_id}.{port}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            server_command(path, model_id, port, n_ctx=n_ctx, threads=threads),
            stdout=None if stream_log else out,
            stderr=None if stream_log else subprocess.STDOUT,
            env=env,
        )
    server = LocalServer(path, digest, model_id, f"http://127.0.0.1:{port}/v1", log, process)
    deadline = time.monotonic() + ready_seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ConfigError(f"the model server exited ({process.returncode}): {_last_line(log)}")
        if _answers(server.base_url):
            return server
        time.sleep(0.5)
    server.stop()
    raise ConfigError(f"the model server did not answer within {ready_seconds:.0f} s; see {log}")


def _answers(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as reply:
            return reply.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _last_line(log: Path) -> str:
    try:
        lines = [x for x in log.read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return "(no log)"
    return lines[-1].strip()[:300] if lines else "(empty log)"


_SERVERS: dict[tuple[Path, int], LocalServer] = {}
_LOCK = threading.Lock()


def shared_server(
    gguf: Path,
    sha256: str | None = None,
    n_ctx: int = DEFAULT_N_CTX,
    threads: int | None = None,
) -> LocalServer:
    """One server per file for the whole process (every judge of a run shares it), stopped at
    exit."""
    path = check_gguf(gguf)
    with _LOCK:
        server = _SERVERS.get((path, n_ctx))
        if server is None or server.process.poll() is not None:
            server = start_server(path, sha256=sha256, n_ctx=n_ctx, threads=threads)
            _SERVERS[(path, n_ctx)] = server
            atexit.register(server.stop)
        elif sha256 and server.sha256 != sha256.strip().lower():
            raise ConfigError(f"{path.name}: sha256 is {server.sha256}, not {sha256.strip()}")
        return server


def local_settings(settings: LLMSettings) -> tuple[LLMSettings, LocalServer]:
    """``settings`` pointed at a server for ``settings.gguf``: its URL and model id, and,
    unless set, one request in flight and a 30-minute timeout.

    Raises:
        ConfigError: no GGUF file given, or the server cannot start.
    """
    if settings.gguf is None:
        raise ConfigError("backend local needs a model file: --gguf FILE (or CLINJUDGE_GGUF)")
    server = shared_server(settings.gguf, settings.gguf_sha256, threads=settings.threads)
    update: dict[str, object] = {"model": server.model_id, "base_url": server.base_url}
    if "timeout" not in settings.model_fields_set:
        update["timeout"] = LOCAL_TIMEOUT
    if settings.max_concurrent_calls is None:
        update["max_concurrent_calls"] = 1
    return settings.model_copy(update=update), server
