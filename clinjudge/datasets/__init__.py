"""Dataset loaders: bundled eval sets, generic CSV/JSONL/JSON files and the public benchmark sets.

``load_items("aci-demo")`` or ``load_items("my.csv")`` → :class:`Dataset` of :class:`Item`.
"""

from clinjudge.datasets.benchmarks import (
    load_aci_bench,
    load_mts_dialog,
    load_primock57,
    strip_transcription_markup,
)
from clinjudge.datasets.items import Dataset, DatasetError, Item
from clinjudge.datasets.loader import bundled_sets, eval_sets_dir, load_items

__all__ = [
    "Dataset",
    "DatasetError",
    "Item",
    "bundled_sets",
    "eval_sets_dir",
    "load_aci_bench",
    "load_items",
    "load_mts_dialog",
    "load_primock57",
    "strip_transcription_markup",
]
