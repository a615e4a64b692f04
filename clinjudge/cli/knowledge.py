"""``clinjudge knowledge ...`` commands (the lead mounts :data:`knowledge_app` on the main app).

``build`` builds (or reuses) the cached lexicon and semantic index, ``search`` queries them,
``stats`` describes them. Bad input (a missing file, an unreadable vocabulary or SNOMED CT
release) exits with code 2 and a one-line reason, without a traceback.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clinjudge.cli.common import UsageError, one_line_errors

if TYPE_CHECKING:
    from clinjudge.knowledge.base import KnowledgeBase

knowledge_app = typer.Typer(
    name="knowledge", help="Medical knowledge: build, search and inspect.", no_args_is_help=True
)

SnomedOption = Annotated[
    Path | None,
    typer.Option("--snomed", help="SNOMED CT RF2 release directory or OWL/Turtle file."),
]
ExtraOption = Annotated[
    list[Path] | None,
    typer.Option("--extra", help="Extra SKOS/OWL/Turtle vocabulary (repeatable)."),
]
SourcesOption = Annotated[
    str | None,
    typer.Option("--sources", help="Comma-separated subset of the built-in sources."),
]
CacheOption = Annotated[
    Path | None,
    typer.Option("--cache-dir", help="Cache directory (default $CLINJUDGE_CACHE_DIR/knowledge)."),
]


def _load(
    cache_dir: Path | None,
    extra: list[Path] | None,
    snomed: Path | None,
    sources: str | None = None,
) -> KnowledgeBase:
    from clinjudge.knowledge.base import KnowledgeBase

    names = [s.strip() for s in sources.split(",") if s.strip()] if sources else None
    with one_line_errors():
        kb = KnowledgeBase.load(cache_dir, extra=extra or [], snomed=snomed, sources=names)
    return kb


@knowledge_app.command()
def build(
    snomed: SnomedOption = None,
    extra: ExtraOption = None,
    cache_dir: CacheOption = None,
    sources: SourcesOption = None,
    index: Annotated[bool, typer.Option(help="Also build the semantic index.")] = True,
) -> None:
    """Build (or reuse) the knowledge lexicon and semantic index."""
    start = time.perf_counter()
    kb = _load(cache_dir, extra, snomed, sources)
    typer.echo(f"lexicon: {len(kb.lexicon.concepts)} concepts ({time.perf_counter() - start:.1f}s)")
    if index:
        start = time.perf_counter()
        vectors = len(kb.index())
        state = "built" if kb.index_rebuilt else "cached"
        typer.echo(f"index: {vectors} vectors, {state} ({time.perf_counter() - start:.1f}s)")
    typer.echo(f"cache: {kb.root}")


@knowledge_app.command()
def search(
    texts: Annotated[
        list[str], typer.Argument(help="Query text; several queries share one loading.")
    ],
    k: Annotated[int, typer.Option("--k", min=1, help="Number of hits.")] = 5,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print JSON: the hits of one query, or an object of hits per query.",
        ),
    ] = False,
    snomed: SnomedOption = None,
    extra: ExtraOption = None,
    cache_dir: CacheOption = None,
    sources: SourcesOption = None,
) -> None:
    """Hybrid (exact + semantic) concept search.

    Example: `clinjudge knowledge search "heart attack" "sugar" "zestril"` (the knowledge base
    loads once, about as long as `--help`; each query then takes milliseconds).
    """
    with one_line_errors():
        if not all(text.strip() for text in texts):
            raise UsageError("a search text is empty")
    kb = _load(cache_dir, extra, snomed, sources)
    found = {text: kb.search(text, k=k) for text in texts}
    if as_json:
        hits = {text: [asdict(h) for h in found[text]] for text in texts}
        typer.echo(json.dumps(hits[texts[0]] if len(texts) == 1 else hits, indent=2))
        return
    for text in texts:
        if len(texts) > 1:
            typer.echo(f"== {text}")
        for h in found[text]:
            typer.echo(f"{h.score:.3f}  {h.concept_id:<24} {h.preferred}  [{h.kind}; {h.matched}]")


@knowledge_app.command()
def stats(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    snomed: SnomedOption = None,
    extra: ExtraOption = None,
    cache_dir: CacheOption = None,
    sources: SourcesOption = None,
) -> None:
    """Concepts per source and kind, surface forms, index size, cache path."""
    info = _load(cache_dir, extra, snomed, sources).stats()
    if as_json:
        typer.echo(json.dumps(info, indent=2))
        return
    typer.echo(
        f"concepts: {info['concepts']}  classes: {info['classes']}  "
        f"surface forms: {info['surface_forms']}"
    )
    for title in ("per_source", "per_kind"):
        typer.echo(title.replace("_", " ") + ":")
        for name, n in info[title].items():
            typer.echo(f"  {name:<20} {n}")
    idx = info["index"]
    built = f"{idx['bytes'] / 1e6:.1f} MB" if idx["built"] else "not built"
    typer.echo(f"index: {idx['model']} ({built}) {idx['path']}")
    typer.echo(f"cache: {info['cache_dir']}")
