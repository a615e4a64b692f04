"""The package's layers hold (docs/design-notes.md): import-linter's contracts in
``pyproject.toml`` are kept, no two modules import each other in a circle, and no module
grows past 400 lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp

PACKAGE = Path(__file__).resolve().parents[1] / "clinjudge"
MAX_LINES = 400


def test_import_linter_contracts_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    run = subprocess.run([str(lint)], capture_output=True, text=True, cwd=PACKAGE.parent)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_between_modules():
    g = grimp.build_graph("clinjudge", exclude_type_checking_imports=True)
    graph = {m: set(g.find_modules_directly_imported_by(m)) & g.modules for m in g.modules}
    assert strongly_connected(graph) == []
    assert strongly_connected({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [{"a", "b"}]


def test_no_module_is_over_400_lines():
    sizes = {
        str(p.relative_to(PACKAGE.parent)): len(p.read_text(encoding="utf-8").splitlines())
        for p in PACKAGE.rglob("*.py")
    }
    assert {p: n for p, n in sizes.items() if n > MAX_LINES} == {}


def test_the_command_line_loads_without_the_heavy_libraries():
    """``clinjudge --help`` starts fast because no command module imports the knowledge layer,
    the numeric stack or the LLM client at load time (issue 16: lazy imports)."""
    heavy = ["torch", "numpy", "scipy", "pydantic", "rdflib", "langgraph", "langchain_core"]
    probe = f"import sys, clinjudge.cli; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == ""
