"""What a run's judges are built from, as plain data that can travel to another process.

A :class:`JudgeSpec` holds the judge names, the backend, the claim source, each judge's
``--option`` settings, the bytes of every ``--prompt`` override, and the environment the LLM
settings are read from (``CLINJUDGE_*``, ``OPENAI_*``). The command line builds its judges
from one (:meth:`JudgeSpec.build`), and so does every Ray worker, once, so that a worker's
judges are the driver's: same prompts (byte for byte, hence the same hashes), same settings,
same knowledge base. The live evaluators never travel.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clinjudge.evaluators.base import Evaluator

#: Environment variables a worker takes from the driver: the LLM settings and caches.
ENV_PREFIXES = ("CLINJUDGE_", "OPENAI_")


@dataclass(frozen=True)
class JudgeSpec:
    """Judges as data (module docstring); ``prompts``: override name → the file's bytes."""

    judges: tuple[str, ...]
    backend: str = "auto"
    claims: str = "auto"
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    prompts: Mapping[str, bytes] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    #: ``MODEL@URL`` jurors (``--jury``) of the judges that take a jury.
    jury: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        judges: list[str] | tuple[str, ...],
        *,
        backend: str = "auto",
        claims: str = "auto",
        options: Mapping[str, Mapping[str, Any]] | None = None,
        prompt_overrides: Mapping[str, Path] | None = None,
        jury: tuple[str, ...] = (),
    ) -> JudgeSpec:
        """The spec of judges built in this process: override files read, environment taken.

        Raises:
            OSError: an override file cannot be read.
        """
        return cls(
            judges=tuple(judges),
            backend=backend,
            claims=claims,
            options={k: dict(v) for k, v in (options or {}).items()},
            prompts={k: Path(p).read_bytes() for k, p in (prompt_overrides or {}).items()},
            env={k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES)},
            jury=tuple(jury),
        )

    def build(self, prompt_paths: Mapping[str, Path] | None = None) -> dict[str, Evaluator]:
        """The judges, in order, sharing one knowledge base and one response cache.
        ``prompt_paths``: where the overrides are on this machine (the driver's own files);
        without them the override bytes are written to a temporary directory first (a worker).

        Raises:
            ConfigError: a judge refuses its settings.
        """
        from clinjudge.evaluators import BuildOptions, build_evaluator
        from clinjudge.knowledge.base import KnowledgeBase
        from clinjudge.llm import LLMSettings, ResponseCache

        paths = dict(prompt_paths) if prompt_paths is not None else self.write_prompts()
        kb = KnowledgeBase.default()
        cache = ResponseCache()
        return {
            name: build_evaluator(
                name,
                BuildOptions(
                    backend=self.backend,
                    settings=LLMSettings(),
                    prompt_overrides=paths,
                    knowledge=kb,
                    cache=cache,
                    options={"claims": self.claims, **self.options.get(name, {})},
                    jury=self.jury,
                ),
            )
            for name in self.judges
        }

    def write_prompts(self) -> dict[str, Path]:
        """The override bytes as files of a new temporary directory (name → path)."""
        if not self.prompts:
            return {}
        folder = Path(tempfile.mkdtemp(prefix="clinjudge-prompts-"))
        paths = {}
        for name, content in self.prompts.items():
            paths[name] = folder / f"{name}.md"
            paths[name].write_bytes(content)
        return paths

    def apply_env(self) -> None:
        """Make this process's LLM settings the driver's (a worker, before :meth:`build`)."""
        os.environ.update(self.env)
