"""On-disk cache of knowledge builds: location, manifests and atomic writes.

A build is keyed by its *manifest*: the knowledge code, the bundled data files, the versions
of the packages the sources read, the selected sources and every user-supplied file (extra
vocabularies, SNOMED CT release). Any change gives another digest, hence a rebuild; an unchanged
manifest reuses the cached build. Bundled and extra files are hashed (sha256); a SNOMED CT
release directory is fingerprinted by path, size and modification time of its RF2 files (a full
release is gigabytes). The embedding model's files key the semantic index by their content
(:func:`content_tree`), so a reinstall of the same model reuses the index.

Location: ``cache_dir`` if given, else ``$CLINJUDGE_CACHE_DIR/knowledge``, else
``~/.cache/clinjudge/knowledge``.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import pickle
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from clinjudge.knowledge.bundled import data_path, sha256_file

FORMAT_VERSION = 1
_CODE_DIR = Path(__file__).resolve().parent


def cache_root(cache_dir: Path | None = None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("CLINJUDGE_CACHE_DIR")
    if env:
        return Path(env) / "knowledge"
    return Path.home() / ".cache" / "clinjudge" / "knowledge"


def package_versions(names: Iterable[str]) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "absent"
    return out


def code_hash() -> str:
    """Hash of the knowledge layer's Python sources: a code change invalidates old builds."""
    digest = hashlib.sha256()
    for path in sorted(_CODE_DIR.rglob("*.py")):
        digest.update(path.relative_to(_CODE_DIR).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def content_tree(root: Path, cache_dir: Path | None = None) -> dict[str, str]:
    """``relative path -> sha256`` (16 hex digits) of the files under ``root`` (or of
    ``root``): a key that survives a reinstall, which rewrites every file's modification time.
    Hashes are remembered by (path, size, mtime) in ``file-hashes.json`` of the cache root, so a
    90 MB model is read once per install, not once per process."""
    root = Path(root)
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    memo_path = cache_root(cache_dir) / "file-hashes.json"
    memo = read_json(memo_path) or {}
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    for p in files:
        st = p.stat()
        key = f"{p.resolve()}|{st.st_size}|{st.st_mtime_ns}"
        seen[key] = memo.get(key) or sha256_file(p)[:16]
        out[p.name if p == root else p.relative_to(root).as_posix()] = seen[key]
    if any(key not in memo for key in seen):
        paths = {key.split("|", 1)[0] for key in seen}
        kept = {k: v for k, v in memo.items() if k.split("|", 1)[0] not in paths}  # old stats go
        with contextlib.suppress(OSError):  # a read-only cache: the right key, just slower
            write_json(memo_path, {**kept, **seen})
    return out


def fingerprint_tree(root: Path) -> dict[str, list[int]]:
    """``relative path -> [size, mtime_ns]`` of the files under ``root`` (or of ``root``)."""
    root = Path(root)
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    out = {}
    for p in files:
        st = p.stat()
        out[p.name if p == root else p.relative_to(root).as_posix()] = [st.st_size, st.st_mtime_ns]
    return out


def lexicon_manifest(
    sources: Iterable[str],
    bundled_files: Iterable[str],
    packages: Iterable[str],
    extra: Iterable[Path] = (),
    snomed: Path | None = None,
) -> dict[str, Any]:
    """The manifest of a lexicon build (module docstring)."""
    return {
        "format": FORMAT_VERSION,
        "code": code_hash(),
        "sources": sorted(sources),
        "packages": package_versions(sorted(set(packages))),
        "files": {
            name: sha256_file(data_path(name))
            for name in sorted(set(bundled_files))
            if data_path(name).exists()
        },
        "extra": {str(Path(p).resolve()): sha256_file(Path(p)) for p in extra},
        "snomed": ({str(Path(snomed).resolve()): fingerprint_tree(Path(snomed))} if snomed else {}),
    }


def digest(manifest: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()[:16]


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, json.dumps(obj, indent=2, sort_keys=True).encode())


def read_json(path: Path) -> Any | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_pickle(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def read_pickle(path: Path) -> Any | None:
    """The cached object, or ``None`` when absent or unreadable (then it is rebuilt).

    The cyclic garbage collector is paused while the object is rebuilt, and what is loaded is
    then moved out of its reach (:func:`gc.freeze`): a cached build lives as long as the
    process, and collections walking its million containers again and again cost a
    ``knowledge search`` a third of its load. Reference counting still frees it once dropped.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        with open(path, "rb") as fh:
            loaded = pickle.load(fh)  # noqa: S301 - our own cache file
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None
    finally:
        if collecting:
            gc.enable()
    if collecting:
        gc.freeze()
    return loaded


@contextlib.contextmanager
def announced(what: str, detail: str) -> Iterator[None]:
    """A build the user waits for, said on stderr: ``clinjudge: building the knowledge
    WHAT (DETAIL), once …`` before, ``… WHAT built in N s`` after (never on stdout, which
    carries results)."""
    print(
        f"clinjudge: building the knowledge {what} ({detail}), once …", file=sys.stderr, flush=True
    )
    started = time.perf_counter()
    yield
    seconds = time.perf_counter() - started
    print(f"clinjudge: knowledge {what} built in {seconds:.0f} s", file=sys.stderr, flush=True)


def remove_stale_indexes(root: Path, keep: Path) -> list[Path]:
    """Delete the other ``index-*`` directories of a cache root (each an earlier model or
    vocabulary's ~48 MB index) once ``keep`` is saved; return what was removed."""
    removed = []
    for old in root.glob("index-*"):
        if old.is_dir() and old.resolve() != keep.resolve():
            shutil.rmtree(old, ignore_errors=True)
            removed.append(old)
    return removed


def remove_stale_lexicons(root: Path, keep: Path, manifest: dict[str, Any]) -> list[Path]:
    """Delete the other ``lexicon-*`` files built from the same selection of sources (same
    source names, extra files and SNOMED release paths) — earlier code or data of one
    vocabulary — once ``keep`` is saved; lexicons of other selections stay. Returns what was
    removed."""
    selection = _selection(manifest)
    removed = []
    for old in root.glob("lexicon-*.pkl"):
        if old.resolve() == keep.resolve():
            continue
        try:
            other = json.loads(old.with_suffix(".json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # no readable manifest: not ours to judge
        if _selection(other) == selection:
            for path in (old, old.with_suffix(".json"), old.with_suffix(".surfaces.json")):
                path.unlink(missing_ok=True)
            removed.append(old)
    return removed


def _selection(manifest: dict[str, Any]) -> tuple:
    return (
        tuple(manifest.get("sources") or ()),
        tuple(sorted(manifest.get("extra") or {})),
        tuple(sorted(manifest.get("snomed") or {})),
    )
