"""The provenance section of ``report.md``: what a reader needs to tell two runs apart."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import metadata
from typing import Any

from clinjudge.report.formatting import is_number, markdown_table, truncate


def provenance_section(report: dict[str, Any]) -> Iterator[str]:
    """``## Provenance`` of a compare report: version, dataset, each judge, every prompt with
    its hash, and every other provenance value flattened to ``key | value`` rows."""
    provenance = report.get("provenance")
    provenance = provenance if isinstance(provenance, dict) else {}
    judges = report.get("judges") or {}
    yield "## Provenance"
    lines = [
        f"- clinjudge version: {_package_version(provenance)}",
        f"- dataset: {report.get('dataset', 'n/a')} ({report.get('n_items', 'n/a')} items)",
        *(
            f"- judge {name}: mode {j.get('mode', 'n/a')}, backend {j.get('backend', 'n/a')}, "
            f"{seconds(j.get('seconds'))} in total"
            for name, j in judges.items()
        ),
    ]
    yield "\n".join(lines)
    prompts = list(_find_prompts(provenance))
    if prompts:
        rows = [
            [where, p.get("name", "?"), p.get("version", ""), p.get("sha256") or p.get("hash", "")]
            for where, p in prompts
        ]
        yield markdown_table(["where", "prompt", "version", "sha256"], rows)
    flat = [
        (key, value)
        for key, value in _flatten(provenance)
        if ".prompts" not in f".{key}" and key != "prompts"
    ]
    if flat:
        yield markdown_table(["key", "value"], [[k, truncate(str(v), 120)] for k, v in flat])


def _find_prompts(node: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Prompt records anywhere in the provenance: ``prompts`` as a list of dicts or a
    ``{name: sha256}`` / ``{name: {...}}`` mapping."""
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{where}.{key}" if where else str(key)
            if key == "prompts" and isinstance(value, list):
                yield from ((where or "run", p) for p in value if isinstance(p, dict))
            elif key == "prompts" and isinstance(value, dict):
                for name, ref in value.items():
                    record = ref if isinstance(ref, dict) else {"sha256": ref}
                    yield where or "run", {"name": name, **record}
            else:
                yield from _find_prompts(value, path)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _find_prompts(value, f"{where}[{i}]")


def _flatten(node: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _flatten(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(node, list) and node and any(isinstance(v, dict | list) for v in node):
        for i, value in enumerate(node):
            yield from _flatten(value, f"{prefix}[{i}]")
    else:
        yield prefix, node


def _package_version(provenance: dict[str, Any]) -> str:
    for key in ("package_version", "clinjudge_version", "version"):
        if provenance.get(key):
            return str(provenance[key])
    try:
        return metadata.version("clinjudge")
    except metadata.PackageNotFoundError:
        return "unknown"


def seconds(value: Any) -> str:
    return f"{value:.2f} s" if is_number(value) else "n/a"
