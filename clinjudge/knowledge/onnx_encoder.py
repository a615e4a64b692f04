"""The knowledge index's query encoder without sentence-transformers: the same model exported
once to ONNX and run by onnxruntime with the model's own fast tokenizer (``tokenizers``).

Importing sentence-transformers (with transformers and torch) costs 10–35 s on a busy two-core
machine, which a one-query command (``clinjudge knowledge search``) paid on every call; the
ONNX session loads in well under a second. The embedding is the sentence-transformers one:
the transformer's last hidden state, mean-pooled over the attention mask, scaled to unit length
(all-MiniLM-L6-v2's modules: Transformer → mean Pooling → Normalize), with its tokenizer's
truncation at the model's ``max_seq_length``. A model whose pooling is not the mean is not
exported (:func:`exportable`): the index keeps sentence-transformers for it.

The export (:func:`export_onnx`) runs where sentence-transformers already runs — when the
index is built, or on the first query against an index cached before this encoder existed —
and is written next to the index, so the cache's manifest governs it too.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: The exported transformer, in the index's cache directory.
ONNX_FILE = "encoder.onnx"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def exportable(model_dir: str) -> bool:
    """A sentence-transformers directory this module reproduces: a fast tokenizer and mean
    pooling."""
    folder = Path(model_dir)
    pooling = folder / "1_Pooling" / "config.json"
    if not (folder / "tokenizer.json").is_file() or not pooling.is_file():
        return False
    config = json.loads(pooling.read_text(encoding="utf-8"))
    return bool(config.get("pooling_mode_mean_tokens")) and not any(
        config.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens")
    )


def export_onnx(model_dir: str, target: Path) -> None:
    """Export the transformer of ``model_dir`` to ``target`` (inputs :data:`_INPUTS`, output the
    last hidden state; batch and sequence axes dynamic), atomically."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(model_dir).eval()

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    ids = torch.ones((1, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    tmp = target.with_name(target.name + ".tmp")
    target.parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's notices (torch is pinned)
        torch.onnx.export(
            LastHidden(),
            (ids, ids, torch.zeros_like(ids)),
            str(tmp),
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    os.replace(tmp, target)


class OnnxEncoder:
    """``encode(texts)`` as sentence-transformers computes it (module docstring), on one
    thread."""

    def __init__(self, model_dir: str, onnx_path: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        config = Path(model_dir) / "sentence_bert_config.json"
        max_tokens = json.loads(config.read_text(encoding="utf-8")).get("max_seq_length", 256)
        self.tokenizer = Tokenizer.from_file(str(Path(model_dir) / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self.tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(onnx_path), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: Sequence[str], batch_size: int = 64, **_: Any) -> np.ndarray:
        """Unit-length mean-pooled embeddings of ``texts``, ``(len(texts), dim)`` float32."""
        out = []
        for i in range(0, len(texts), batch_size):
            encodings = self.tokenizer.encode_batch(list(texts[i : i + batch_size]))
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            hidden = self.session.run(["last_hidden_state"], feed)[0]
            mask = feed["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out.append(pooled / np.clip(norms, 1e-12, None))
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)
