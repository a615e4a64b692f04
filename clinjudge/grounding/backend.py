"""Which backend a judge runs on, and what it then holds: the one place every judge factory
resolves ``offline``/``llm``/``auto``, builds its model caller, loads its prompts (with the
user's overrides) and starts its provenance (DESIGN "Two backends, one graph").

    auto (or None) → llm when a model is configured (CLINJUDGE_MODEL) or a chat model is given,
                     else offline
    local          → llm against the GGUF file of the settings (``--gguf``, CLINJUDGE_GGUF),
                     served on 127.0.0.1 by llama-cpp-python (:mod:`clinjudge.local_model`)

A report records what :attr:`ModelAccess.provenance` holds — package version, backend and, on
the LLM backend, model id, base URL, decoding and every prompt's name, version and hash; never
an API key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clinjudge import __version__
from clinjudge.errors import ConfigError
from clinjudge.redact import public_url

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from clinjudge.knowledge.base import KnowledgeBase
    from clinjudge.llm import LLMSettings, ResponseCache, StructuredCaller
    from clinjudge.llm_settings import Juror
    from clinjudge.prompts import Prompt
    from clinjudge.types import Backend


def resolve_backend(
    backend: str | None, settings: LLMSettings, chat_model: BaseChatModel | None = None
) -> Backend:
    """``auto``/None → ``llm`` when a model is configured, else ``offline``; a given
    ``chat_model`` means ``llm`` unless ``offline`` is asked for.

    Raises:
        ConfigError: an unknown backend, or ``llm`` with no model configured.
    """
    if chat_model is not None:
        return "offline" if backend == "offline" else "llm"
    if backend in (None, "auto"):
        return "llm" if settings.configured else "offline"
    if backend == "local":
        if settings.gguf is None:
            raise ConfigError("backend local needs a model file: --gguf FILE (or CLINJUDGE_GGUF)")
        return "llm"
    if backend not in ("offline", "llm"):
        raise ConfigError(f"unknown backend {backend!r}: use offline, llm, local or auto")
    if backend == "llm" and not settings.configured:
        raise ConfigError("backend llm needs a model: set CLINJUDGE_MODEL (and OPENAI_BASE_URL)")
    return backend  # type: ignore[return-value]


@dataclass
class ModelAccess:
    """A judge's resolved backend. On ``llm``: the caller and the loaded prompts, in the order
    asked for; offline both are empty."""

    backend: Backend
    provenance: dict[str, Any]
    caller: StructuredCaller | None = None
    prompts: list[Prompt] = field(default_factory=list)

    def prompt(self, name: str) -> Prompt:
        return next(p for p in self.prompts if p.name == name)


def check_prompt_overrides(
    overrides: Mapping[str, Path], prompt_names: Sequence[str], judge: str
) -> dict[str, Path]:
    """The overrides of this judge's prompts: those in its namespaces (``soap.`` for
    ``soap.lexical``); one in its namespaces that it does not use is an error.

    Raises:
        ConfigError: ``no prompt named 'soap.typo' in the SOAP judge``.
    """
    spaces = {n.partition(".")[0] for n in prompt_names}
    own = {k: v for k, v in overrides.items() if k.partition(".")[0] in spaces}
    unknown = sorted(set(own) - set(prompt_names))
    if unknown:
        raise ConfigError(f"no prompt named {unknown[0]!r} in {judge}")
    return own


def open_backend(
    backend: str | None,
    *,
    judge: str,
    settings: LLMSettings | None = None,
    chat_model: BaseChatModel | None = None,
    cache: ResponseCache | None = None,
    prompt_names: Sequence[str] = (),
    prompt_overrides: Mapping[str, Path] | None = None,
    known_prompts: Sequence[str] | None = None,
) -> ModelAccess:
    """Resolve ``backend`` (:func:`resolve_backend`) and, on ``llm``, build the caller over
    ``chat_model`` (else ``ChatOpenAI`` from ``settings``) and load ``prompt_names`` with the
    overrides of this ``judge`` (a name for error messages, e.g. ``"CEF"``). ``known_prompts``
    (default ``prompt_names``): every prompt of the judge's family that an override may name,
    such as the other SOAP mode's prompt.

    Raises:
        ConfigError: unknown backend, llm without a model, an override of an unknown prompt.
    """
    from clinjudge.llm import LLMSettings, StructuredCaller
    from clinjudge.prompts import load_prompt

    settings = settings or LLMSettings()
    resolved = resolve_backend(backend, settings, chat_model)
    overrides = check_prompt_overrides(prompt_overrides or {}, known_prompts or prompt_names, judge)
    provenance: dict[str, Any] = {"package_version": __version__, "backend": resolved}
    if resolved == "offline":
        return ModelAccess(resolved, provenance)
    if backend == "local" and chat_model is None:
        from clinjudge.embeddings import beside_a_server
        from clinjudge.local_model import local_settings

        settings, server = local_settings(settings)
        beside_a_server()  # the server holds the cores: retrieval's torch gets one thread
        provenance["local_model"] = server.provenance()
    caller = StructuredCaller.from_settings(settings, cache=cache, chat_model=chat_model)
    prompts = [load_prompt(name, overrides.get(name)) for name in prompt_names]
    provenance |= {
        "model": caller.model_id,
        "base_url": public_url(settings.base_url) if chat_model is None else None,
        "decoding": settings.decoding(),
        "prompts": [p.ref().model_dump() for p in prompts],
    }
    return ModelAccess(resolved, provenance, caller, prompts)


def check_jury_backend(backend: str | None) -> None:
    """A jury runs on the models it names: refused on ``offline`` and ``local``.

    Raises:
        ConfigError: ``--jury`` with ``--backend offline`` or ``local``.
    """
    if backend in ("offline", "local"):
        raise ConfigError(
            f"--jury names the models that grade; it does not run on --backend {backend} "
            "(serve a local model with `clinjudge serve` and name it in the jury)"
        )


def open_jury(
    jury: Sequence[Juror],
    backend: str | None,
    *,
    judge: str,
    settings: LLMSettings | None = None,
    cache: ResponseCache | None = None,
    prompt_names: Sequence[str] = (),
    prompt_overrides: Mapping[str, Path] | None = None,
    known_prompts: Sequence[str] | None = None,
) -> list[tuple[Juror, ModelAccess]]:
    """Each juror's :class:`ModelAccess`, opened by :func:`open_backend` on ``llm`` with the
    settings made for its model and URL (:meth:`~clinjudge.llm_settings.Juror.settings`): the
    same caller, prompts and provenance as a single model's, plus the juror's ``host``.

    Raises:
        ConfigError: ``backend`` is offline or local (a jury names its endpoints), or what
            :func:`open_backend` raises.
    """
    from clinjudge.llm import LLMSettings

    check_jury_backend(backend)
    base = settings or LLMSettings()
    seats = []
    for juror in jury:
        access = open_backend(
            "llm",
            judge=judge,
            settings=juror.settings(base),
            cache=cache,
            prompt_names=prompt_names,
            prompt_overrides=prompt_overrides,
            known_prompts=known_prompts,
        )
        access.provenance["host"] = juror.host()
        seats.append((juror, access))
    return seats


def with_output_modes(provenance: dict[str, Any], caller: StructuredCaller | None) -> dict:
    """``provenance`` with ``output_modes``: the replies received per dialect the server was
    asked for JSON in (``json_schema``, ``json_object``, ``text``; :mod:`clinjudge.llm_dialects`)
    -- how the verdicts were obtained, known only once calls were made."""
    if caller is None:
        return provenance
    return {**provenance, "output_modes": dict(caller.usage.output_modes)}


def knowledge_provenance(kb: KnowledgeBase) -> dict[str, Any]:
    """What a report records of the knowledge base: its digest, sources and packages."""
    return {
        "digest": kb.digest,
        "sources": kb.manifest.get("sources"),
        "packages": kb.manifest.get("packages"),
    }
