"""Any SKOS / OWL / OBO-in-OWL vocabulary read with ``rdflib``.

A concept is every IRI subject that has a label: ``skos:prefLabel`` (else ``rdfs:label``) is the
preferred term (English first when several), ``skos:altLabel``, ``skos:hiddenLabel`` and
``oboInOwl:hasExactSynonym`` are synonyms; ``rdfs:subClassOf`` / ``skos:broader`` to an IRI give
``is_a``; ``oboInOwl:hasDbXref`` and ``skos:exactMatch`` give ``xref``; deprecated or obsolete
classes are skipped. Ids are compact: OBO PURLs become ``DOID:5844``, SNOMED CT IRIs
``SNOMED:<id>``, other IRIs their namespace prefix (``ex:chestPain``) or the IRI itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

from rdflib import OWL, RDFS, SKOS, Graph, Literal, Namespace, URIRef
from rdflib.util import guess_format

from clinjudge.knowledge.concept import Concept

OBOINOWL = Namespace("http://www.geneontology.org/formats/oboInOwl#")
_OBO = "http://purl.obolibrary.org/obo/"
_SNOMED = ("http://snomed.info/id/", "http://snomed.info/sct/")
_PREFERRED = (SKOS.prefLabel, RDFS.label)
_SYNONYMS = (SKOS.altLabel, SKOS.hiddenLabel, OBOINOWL.hasExactSynonym)
_PARENTS = (RDFS.subClassOf, SKOS.broader)
_XREFS = (OBOINOWL.hasDbXref, SKOS.exactMatch)


class RdfError(ValueError):
    """A vocabulary file that cannot be read (missing, unknown format, syntax error)."""


def load_graph(path: Path) -> Graph:
    """Parse ``path`` (format from its extension; Turtle, RDF/XML, N-Triples, JSON-LD ...)."""
    path = Path(path)
    if not path.is_file():
        raise RdfError(f"{path}: no such file")
    fmt = guess_format(str(path)) or ("xml" if path.suffix in (".owl", ".rdf") else None)
    if fmt is None:
        raise RdfError(f"{path}: unknown RDF format (use .ttl, .owl, .rdf, .nt, .jsonld)")
    graph = Graph()
    try:
        graph.parse(str(path), format=fmt)
    except Exception as exc:  # rdflib raises many parser-specific types
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RdfError(f"{path}: cannot parse as {fmt}: {reason}") from exc
    return graph


def compact_id(graph: Graph, iri: URIRef) -> str:
    text = str(iri)
    if text.startswith(_OBO):
        local = text[len(_OBO) :]
        prefix, sep, code = local.partition("_")
        return f"{prefix}:{code}" if sep else local
    for base in _SNOMED:
        if text.startswith(base):
            return "SNOMED:" + text[len(base) :]
    try:
        prefix, _, local = graph.compute_qname(iri, generate=False)
    except (ValueError, KeyError):
        return text
    return f"{prefix}:{local}" if prefix else text


def _best_label(labels: list[Literal]) -> str:
    english = [lab for lab in labels if lab.language in (None, "en", "en-US", "en-GB")]
    return str(sorted(english or labels, key=lambda lab: (lab.language is None, str(lab)))[0])


def iter_concepts(
    path: Path,
    source: str = "rdf",
    kind: str | Callable[[str], str] = "other",
) -> Iterator[Concept]:
    """Concepts of an RDF vocabulary file (module docstring). ``kind`` is a kind name or a
    function of the preferred label (SNOMED CT uses the FSN semantic tag)."""
    graph = load_graph(path)
    deprecated = {s for s in graph.subjects(OWL.deprecated, None) if graph.value(s, OWL.deprecated)}
    labels: dict[URIRef, dict[str, list[Literal]]] = defaultdict(lambda: defaultdict(list))
    for predicate in (*_PREFERRED, *_SYNONYMS):
        for subject, obj in graph.subject_objects(predicate):
            if isinstance(subject, URIRef) and isinstance(obj, Literal):
                labels[subject][str(predicate)].append(obj)
    for subject in sorted(labels):
        if subject in deprecated:
            continue
        found = labels[subject]
        preferred_labels = found.get(str(SKOS.prefLabel)) or found.get(str(RDFS.label))
        if not preferred_labels:
            continue
        preferred = _best_label(preferred_labels)
        if preferred.lower().startswith("obsolete "):
            continue
        synonyms = [str(lab) for p in (*_PREFERRED, *_SYNONYMS) for lab in found.get(str(p), [])]
        relations = [
            ("is_a", compact_id(graph, parent))
            for p in _PARENTS
            for parent in graph.objects(subject, p)
            if isinstance(parent, URIRef)
        ]
        relations += [
            ("xref", compact_id(graph, x) if isinstance(x, URIRef) else str(x))
            for p in _XREFS
            for x in graph.objects(subject, p)
        ]
        yield Concept(
            id=compact_id(graph, subject),
            source=source,
            kind=kind(preferred) if callable(kind) else kind,
            preferred=preferred,
            synonyms=tuple(s for s in dict.fromkeys(synonyms) if s != preferred),
            relations=tuple(dict.fromkeys(relations)),
        )
