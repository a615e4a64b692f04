"""Counting a prompt's tokens before a run (``compare --dry-run``): with the model's own
tokenizer when it is known and installed, else an approximation that says so.

- an OpenAI model name that ``tiktoken`` maps to an encoding: that encoding (``tiktoken``
  fetches the encoding file once, from OpenAI's public storage, unless it is cached);
- a local GGUF file (``--gguf``): its own vocabulary through llama-cpp-python (the ``local``
  extra), loaded alone (``vocab_only``), no weights;
- else ``⌈characters / 4⌉``, the usual rule of thumb for English text, stated as such.

The count is of the prompt's text; a chat template adds a few tokens a call.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: Characters per token of the approximation.
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class TokenCounter:
    count: Callable[[str], int]
    #: How tokens are counted, for the output ("approximation: …" when not the model's own).
    method: str
    exact: bool


def approximate(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def token_counter(model: str | None, gguf: Path | None = None) -> TokenCounter:
    """The best counter for ``model`` (or the ``gguf`` file) available here (module
    docstring); never raises -- what could not be loaded is named in the approximation's
    ``method``."""
    why = f"no tokenizer known for {model!r}" if model else "no model named"
    if gguf is not None:
        try:
            from llama_cpp import Llama

            vocab = Llama(model_path=str(gguf), vocab_only=True, verbose=False)
        except Exception as exc:  # noqa: BLE001 - the extra missing, a bad file: approximate
            why = f"the tokenizer of {gguf.name} could not be loaded ({type(exc).__name__})"
        else:
            return TokenCounter(
                lambda text: len(vocab.tokenize(text.encode("utf-8"), add_bos=False)),
                f"the tokenizer of {gguf.name} (llama-cpp-python)",
                True,
            )
    elif model:
        try:
            import tiktoken

            name = tiktoken.encoding_name_for_model(model)
        except (ImportError, KeyError):
            pass
        else:
            try:
                encoding = tiktoken.get_encoding(name)
            except Exception as exc:  # noqa: BLE001 - offline, no cached file: approximate
                why = f"tiktoken's {name} could not be loaded ({type(exc).__name__})"
            else:
                return TokenCounter(
                    lambda text: len(encoding.encode(text, disallowed_special=())),
                    f"tiktoken's {name} (the tokenizer of {model})",
                    True,
                )
    return TokenCounter(
        approximate, f"approximation: characters / {CHARS_PER_TOKEN} ({why})", False
    )
