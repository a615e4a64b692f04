"""Prompt files: loading, overriding and rendering (DESIGN "Users and their three jobs", job 2).

A prompt is a Markdown file with a small YAML front matter (``name``, ``version``) and a body with
``{{placeholder}}`` variables. Built-in prompts ship as package data next to this module; any of
them can be replaced by a file path (``--prompt soap.inference_aware=my_prompt.md``). Every report
records :meth:`Prompt.ref` -- name, version, sha256 of the whole file and, for overrides, the path
-- so that two runs can be told apart and reproduced.

**Data cannot close a section.** A prompt fences its data between its own delimiters
(``<conversation>`` … ``</conversation>``, ``<<<`` … ``>>>``). A note or transcript holding those
very delimiters could end the data early and write text the model reads as instructions. So
:meth:`Prompt.render` neutralises, in every value it inserts, each delimiter the prompt itself
uses — its tags (any case, spaces inside the brackets) and runs of three or more ``<`` or
``>`` — by writing its angle brackets as ``‹`` ``›``: the model still reads the words, but no
value can open or close a section of the prompt.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel

from clinjudge.types import PromptRef

#: ``{{ name }}``: an identifier between double braces; anything else (JSON braces) is left alone.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
CUSTOM_VERSION = "custom"
#: A tag of a prompt's own text: ``<conversation>``, ``</note_sections>``.
_TAG = re.compile(r"</?([A-Za-z_][A-Za-z0-9_-]{0,40})>")
_FENCE = "<<<"


@lru_cache(maxsize=256)
def delimiters_of(text: str) -> re.Pattern[str] | None:
    """The pattern of the delimiters a prompt ``text`` uses (module docstring), ``None`` when
    it uses none: each tag name in any case with optional spaces (``< / Conversation >``), and
    runs of ``<`` or ``>`` when the prompt fences with ``<<<``."""
    names = sorted(set(_TAG.findall(text)))
    parts = []
    if names:
        alternatives = "|".join(re.escape(n) for n in names)
        parts.append(rf"<[ \t]{{0,8}}/?[ \t]{{0,8}}(?:{alternatives})[ \t]{{0,8}}>")
    if _FENCE in text:
        parts.append(r"<{3,}|>{3,}")
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def fenced(value: str, delimiters: re.Pattern[str] | None) -> str:
    """``value`` with every match of ``delimiters`` written with ``‹`` ``›`` for its angle
    brackets (module docstring)."""
    if delimiters is None or ("<" not in value and ">" not in value):
        return value
    return delimiters.sub(lambda m: m.group(0).replace("<", "‹").replace(">", "›"), value)


class Prompt(BaseModel):
    """One prompt template. ``sha256`` hashes the whole file (front matter included), so any edit
    -- even of the version line -- yields a new hash."""

    name: str
    version: str
    text: str
    sha256: str
    path: str = ""  # "" for built-ins (package data); the file path for overrides

    @property
    def builtin(self) -> bool:
        return not self.path

    @property
    def placeholders(self) -> frozenset[str]:
        """Names of the ``{{variables}}`` the body uses."""
        return frozenset(PLACEHOLDER.findall(self.text))

    def render(self, **variables: object) -> str:
        """Replace each ``{{name}}`` with ``str(variables[name])`` in one pass.

        Values are inserted literally: braces in JSON or transcripts are never interpreted, and a
        value containing ``{{x}}`` is not substituted again; the prompt's own delimiters inside a
        value are neutralised (module docstring). Extra variables are ignored.

        Raises:
            KeyError: a placeholder of the body has no value.
        """
        missing = sorted(self.placeholders - variables.keys())
        if missing:
            raise KeyError(
                f"prompt {self.name!r} needs variable(s) {', '.join(missing)}; "
                f"given: {', '.join(sorted(variables)) or 'none'}"
            )
        delimiters = delimiters_of(self.text)
        return PLACEHOLDER.sub(lambda m: fenced(str(variables[m.group(1)]), delimiters), self.text)

    def ref(self) -> PromptRef:
        return PromptRef(name=self.name, version=self.version, sha256=self.sha256, path=self.path)


def _parse(content: str, *, default_name: str | None, path: str) -> Prompt:
    """Split front matter from body. Without front matter the file is all body, named
    ``default_name`` with version ``"custom"``."""
    sha = hashlib.sha256(content.encode("utf-8")).hexdigest()
    match = _FRONT_MATTER.match(content)
    meta: dict[str, object] = {}
    body = content
    if match:
        loaded = yaml.safe_load(match.group(1)) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{path or 'prompt'}: front matter must be a mapping")
        meta, body = loaded, content[match.end() :]
    name = default_name or meta.get("name")
    if not name:
        raise ValueError(f"{path or 'prompt'}: front matter has no 'name'")
    version = meta.get("version", CUSTOM_VERSION)
    return Prompt(name=str(name), version=str(version), text=body, sha256=sha, path=path)


def _builtin_files() -> dict[str, str]:
    """Built-in prompt name -> file content, read from the package data."""
    found: dict[str, str] = {}
    for entry in resources.files(__package__).iterdir():
        if entry.name.endswith(".md"):
            content = entry.read_text(encoding="utf-8")
            found[_parse(content, default_name=None, path="").name] = content
    return found


def list_prompts() -> list[str]:
    """Names of the built-in prompts, sorted."""
    return sorted(_builtin_files())


def load_prompt(name: str, override: str | Path | None = None) -> Prompt:
    """The built-in prompt ``name``, or the file ``override`` standing in for it.

    The override keeps ``name`` (the slot it fills); its version comes from its own front matter,
    or is ``"custom"`` without one; ``path`` records where it came from. An override may not use
    placeholders the built-in does not receive (they could never be filled).

    Raises:
        KeyError: no built-in prompt ``name`` and no override.
        ValueError: unreadable override or unknown placeholders in it.
    """
    builtins = _builtin_files()
    if override is None:
        if name not in builtins:
            raise KeyError(f"unknown prompt {name!r}; built-in prompts: {', '.join(builtins)}")
        return _parse(builtins[name], default_name=None, path="")
    path = Path(override).expanduser()
    try:
        content = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"prompt override for {name!r}: cannot read {path}: {exc}") from exc
    prompt = _parse(content, default_name=name, path=str(path.resolve()))
    if name in builtins:
        allowed = _parse(builtins[name], default_name=None, path="").placeholders
        unknown = sorted(prompt.placeholders - allowed)
        if unknown:
            raise ValueError(
                f"prompt override {path} uses unknown placeholder(s) {', '.join(unknown)}; "
                f"{name} provides {', '.join(sorted(allowed))}"
            )
    return prompt


def parse_prompt_overrides(items: list[str]) -> dict[str, Path]:
    """Parse CLI values ``NAME=PATH`` (e.g. ``soap.inference_aware=my_prompt.md``).

    Raises:
        ValueError: with a one-line reason for a missing ``=``, an empty side, an unknown prompt
            name, a name given twice, or a file that does not exist.
    """
    known = set(list_prompts())
    overrides: dict[str, Path] = {}
    for item in items:
        name, sep, raw_path = (part.strip() for part in item.partition("="))
        if not sep or not name or not raw_path:
            raise ValueError(f"bad prompt override {item!r}: expected NAME=PATH")
        if name not in known:
            raise ValueError(f"bad prompt override {item!r}: unknown prompt {name!r}")
        if name in overrides:
            raise ValueError(f"bad prompt override {item!r}: {name!r} given twice")
        path = Path(raw_path).expanduser()
        if not path.is_file():
            raise ValueError(f"bad prompt override {item!r}: no such file {path}")
        overrides[name] = path
    return overrides
