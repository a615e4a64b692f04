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
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Characters per token of the approximation.
CHARS_PER_TOKEN = 4
#: How long fetching a tokenizer may take before the approximation is used instead (tiktoken
#: fetches without a timeout of its own: a firewalled network would hang the dry run).
LOAD_SECONDS = 10.0


@dataclass(frozen=True)
class TokenCounter:
    count: Callable[[str], int]
    #: How tokens are counted, for the output ("approximation: …" when not the model's own).
    method: str
    exact: bool


def within(seconds: float, load: Callable[..., Any], *args: Any) -> Any:
    """``load(*args)``, or :class:`TimeoutError` when it takes longer than ``seconds`` (it goes
    on in a daemon thread, which does not keep the process alive)."""
    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["value"] = load(*args)
        except Exception as exc:  # noqa: BLE001 - handed to the caller
            done["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if "error" in done:
        raise done["error"]
    if "value" not in done:
        raise TimeoutError(f"not loaded in {seconds:.0f} s")
    return done["value"]


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
                encoding = within(LOAD_SECONDS, tiktoken.get_encoding, name)
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
