"""Reading and writing the knowledge layer's package data (``clinjudge/knowledge/data/``).

Derived source files are gzipped JSON Lines (one object per line) or small CSV files with a
header row; ``#`` lines in curated CSV/TXT files are comments. See ``data/PROVENANCE.md``.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"


def data_path(name: str) -> Path:
    """Path of a bundled data file."""
    return DATA_DIR / name


def read_jsonl_gz(path: Path) -> Iterator[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def write_jsonl_gz(path: Path, rows: Iterable[dict]) -> int:
    """Write rows deterministically (gzip mtime 0, sorted keys); returns the row count."""
    n = 0
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        for row in rows:
            line = json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"
            gz.write(line.encode("utf-8"))
            n += 1
    return n


def read_csv(path: Path) -> Iterator[dict[str, str]]:
    """Rows of a CSV file with a header, skipping blank and ``#`` comment lines."""
    with open(path, encoding="utf-8", newline="") as fh:
        lines = [ln for ln in fh if ln.strip() and not ln.lstrip().startswith("#")]
    for row in csv.DictReader(io.StringIO("".join(lines))):
        yield {k.strip(): (v or "").strip() for k, v in row.items() if k}


def read_word_list(path: Path) -> list[str]:
    """Non-comment lines of a word list; text after `` #`` on a line is a comment."""
    words = []
    for line in path.read_text(encoding="utf-8").splitlines():
        word = line.split(" #", 1)[0].strip()
        if word and not word.startswith("#"):
            words.append(word)
    return words


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
