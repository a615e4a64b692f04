"""Every graph reads like its diagram: the diagram in the docstring of the function that
compiles it (else of its module) lists exactly the edges of ``get_graph()`` (what
``draw_mermaid()`` draws), and an edge written with a parenthesised label is a conditional one.

Diagram grammar: each line is a chain ``node ARROW node ARROW …`` starting with a node name;
``──>`` is an edge, ``──(why)──>`` a conditional edge (a router or a ``Send`` fan-out); the first
node of the first line is where the graph starts; ``END`` is the end.
"""

from __future__ import annotations

import importlib
import inspect
import re

import pytest

NODE = r"[A-Za-z_][A-Za-z0-9_]*"
ARROW = r"─+(?:\((?P<label>[^)]*)\)─+)?>"
CHAIN = re.compile(rf"^\s*{NODE}(?:\s*{ARROW}\s*{NODE})+\s*$")
STEP = re.compile(rf"\s*{ARROW}\s*({NODE})")

GRAPHS = [
    ("clinjudge.graphs.soap_judge", "build_graph"),
    ("clinjudge.graphs.cef", "build_graph"),
    ("clinjudge.graphs.factcheck", "build_graph"),
    ("clinjudge.graphs.factcheck", "build_evidence_graph"),
    ("clinjudge.graphs.numeric", "build_graph"),
    ("clinjudge.graphs.omission", "build_graph"),
    ("clinjudge.graphs.error_detection", "build_graph"),
    ("clinjudge.graphs.inject", "build_graph"),
    ("clinjudge.graphs.pairwise", "build_graph"),
    ("clinjudge.graphs.rubric", "build_graph"),
]


def diagram_edges(doc: str) -> set[tuple[str, str, bool]]:
    """``(source, target, conditional)`` of every arrow of the docstring's diagram lines."""
    edges: set[tuple[str, str, bool]] = set()
    first = True
    for line in doc.splitlines():
        if "─>" not in line and "─(" not in line:
            continue
        assert CHAIN.match(line), f"not a diagram chain: {line!r}"
        source = re.match(rf"\s*({NODE})", line).group(1)
        if first:
            edges.add(("__start__", source, False))
            first = False
        for step in STEP.finditer(line, re.match(rf"\s*{NODE}", line).end()):
            target = "__end__" if step.group(2) == "END" else step.group(2)
            edges.add((source, target, step.group("label") is not None))
            source = target
    return edges


def graph_edges(compiled) -> set[tuple[str, str, bool]]:
    return {(e.source, e.target, bool(e.conditional)) for e in compiled.get_graph().edges}


@pytest.mark.parametrize(("module", "builder"), GRAPHS)
def test_the_docstring_diagram_is_the_graph(module, builder):
    mod = importlib.import_module(module)
    build = getattr(mod, builder)
    doc = inspect.getdoc(build) or ""
    if "─>" not in doc:
        doc = inspect.getdoc(mod) or ""
    drawn = build().get_graph().draw_mermaid()
    assert graph_edges(build()) == diagram_edges(doc), drawn


def test_the_diagram_reader_tells_edges_from_conditional_edges():
    doc = "a ──> b ──(if x)──> END\n    b ──(else)──> c ──> END\nprose without arrows"
    assert diagram_edges(doc) == {
        ("__start__", "a", False),
        ("a", "b", False),
        ("b", "__end__", True),
        ("b", "c", True),
        ("c", "__end__", False),
    }
