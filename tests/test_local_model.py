"""``--backend local`` and ``clinjudge serve`` before any model is loaded: the file is checked
(exists, GGUF header, sha256) and a bad one is one line with exit code 2; a file that is GGUF
only by its header makes the real server exit, and that is one line too. No model needed."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run

from clinjudge.errors import ConfigError
from clinjudge.grounding.backend import resolve_backend
from clinjudge.llm import LLMSettings
from clinjudge.local_model import (
    check_gguf,
    default_threads,
    file_sha256,
    server_command,
    verified_gguf,
)

FIXTURES = Path(__file__).parent / "fixtures" / "real_model"


@pytest.fixture
def fake_gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + bytes(range(256)) * 4)
    return path


def test_a_gguf_file_is_checked_before_anything_is_loaded(fake_gguf: Path, tmp_path: Path) -> None:
    assert check_gguf(fake_gguf) == fake_gguf.resolve()
    with pytest.raises(ConfigError, match="not found"):
        check_gguf(tmp_path / "missing.gguf")
    with pytest.raises(ConfigError, match="directory"):
        check_gguf(tmp_path)
    (tmp_path / "model.bin").write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ConfigError, match="no GGUF header"):
        check_gguf(tmp_path / "model.bin")


def test_the_sha256_is_checked_and_remembered(fake_gguf: Path) -> None:
    digest = hashlib.sha256(fake_gguf.read_bytes()).hexdigest()
    assert verified_gguf(fake_gguf, digest.upper()) == (fake_gguf.resolve(), digest)
    with pytest.raises(ConfigError, match=f"sha256 is {digest}, not the expected 00"):
        verified_gguf(fake_gguf, "00" * 32)
    memo = Path(fake_gguf.parent / "cache" / "gguf_sha256.json")
    assert digest in memo.read_text()
    assert file_sha256(fake_gguf) == digest


def test_the_server_listens_on_loopback_only(fake_gguf: Path) -> None:
    command = server_command(fake_gguf, "tiny@abc", 8123, n_ctx=4096, threads=2)
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--model_alias") + 1] == "tiny@abc"
    assert command[command.index("--n_ctx") + 1] == "4096"


def test_the_server_keeps_no_ram_cache_and_runs_on_the_cores_it_may_use(
    fake_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38: the RAM prompt cache is off (it grew the server by ~230 MB a request, past its
    size), and the threads are the process's cores unless ``--threads`` / ``CLINJUDGE_THREADS``
    says otherwise."""
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 3, 5})
    assert default_threads() == 3
    command = server_command(fake_gguf, "tiny@abc", 8123)
    assert command[command.index("--cache") + 1] == "False"
    assert "--cache_size" not in command
    assert command[command.index("--n_threads") + 1] == "3"
    assert command[command.index("--n_threads_batch") + 1] == "3"
    assert server_command(fake_gguf, "t", 1, threads=1)[command.index("--n_threads") + 1] == "1"
    monkeypatch.setenv("CLINJUDGE_THREADS", "5")
    assert LLMSettings().threads == 5


def test_backend_local_needs_a_file() -> None:
    with pytest.raises(ConfigError, match="--gguf FILE"):
        resolve_backend("local", LLMSettings())
    assert resolve_backend("local", LLMSettings(gguf=Path("x.gguf"))) == "llm"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "backend local needs a model file: --gguf FILE"),
        (["--gguf", "missing.gguf"], "GGUF file not found"),
        (["--gguf", str(FIXTURES / "note.txt")], "no GGUF header"),
    ],
)
def test_judge_with_backend_local_and_a_bad_file_is_one_line(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CLINJUDGE_GGUF", "")  # --gguf sets it: restored after the test
    monkeypatch.delenv("CLINJUDGE_GGUF")
    monkeypatch.chdir(tmp_path)
    result = run(
        "judge",
        "--transcript",
        str(FIXTURES / "visit.txt"),
        "--note",
        str(FIXTURES / "note.txt"),
        "--backend",
        "local",
        *args,
    )
    assert_one_line_error(result, message)


def test_serve_refuses_a_file_whose_hash_differs(fake_gguf: Path) -> None:
    result = run("serve", "--gguf", fake_gguf, "--sha256", "ab" * 32)
    assert_one_line_error(result, "not the expected")


@pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="the local extra is not installed"
)
def test_a_file_the_runtime_cannot_load_is_one_line_not_a_hang(fake_gguf: Path) -> None:
    result = run("serve", "--gguf", fake_gguf, "--port", 0)
    assert_one_line_error(result, "the model server exited")


def test_without_the_local_extra_the_error_names_it(
    fake_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import clinjudge.local_model as local_model

    real = importlib.util.find_spec
    monkeypatch.setattr(
        local_model.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real(name, *a),
    )
    result = run("serve", "--gguf", fake_gguf)
    assert_one_line_error(result, "pip install -e '.[local]'")
