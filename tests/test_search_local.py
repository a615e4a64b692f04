"""Local search: the JSONL corpus (reading, errors, windows, hybrid BM25 + FAISS retrieval), a
row's own corpus in every accepted shape, and the knowledge index as passages."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from clinjudge.errors import ConfigError
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.search import CorpusSearch, KnowledgeSearch, Passage, make_search
from clinjudge.search.local import passages_from_value, read_corpus, split_passage

CORPUS = Path(__file__).parent / "fixtures" / "factcheck" / "corpus.jsonl"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase.default()


def test_read_corpus_fields():
    passages = read_corpus(CORPUS)
    assert [p.id for p in passages] == ["aspirin-secondary", "amoxicillin-aom", "metformin"]
    assert passages[0].url == "https://example.org/aspirin"
    assert passages[2].title == "Metformin" and passages[1].url == ""


def test_read_corpus_errors_name_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "fine"}\n{"id": "b"}\n')
    with pytest.raises(ConfigError, match="line 2: passage has no text"):
        read_corpus(bad)
    bad.write_text('{"id": "a", "text": "fine"}\nnot json\n')
    with pytest.raises(ConfigError, match="line 2: invalid JSON"):
        read_corpus(bad)
    with pytest.raises(ConfigError, match="not found"):
        read_corpus(tmp_path / "missing.jsonl")


def test_row_evidence_shapes():
    as_strings = passages_from_value(["Aspirin prevents stroke.", "  "])
    assert [(p.id, p.text) for p in as_strings] == [("e1", "Aspirin prevents stroke.")]
    objects = [{"id": "x", "text": "Metformin.", "url": "https://m"}]
    assert passages_from_value(objects)[0].url == "https://m"
    assert passages_from_value(json.dumps(objects))[0].id == "x"
    with pytest.raises(ConfigError, match="JSON list"):
        passages_from_value("[not json")
    with pytest.raises(ConfigError, match="expected a list"):
        passages_from_value({"text": "a dict"})


def test_long_passages_become_overlapping_sentence_windows():
    names = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]
    sentences = [f"This sentence talks about {n} at length." for n in names]
    passage = Passage(id="long", text=" ".join(sentences * 3))
    windows = split_passage(passage, max_chars=100, window=3, stride=2)
    assert all(w.id == "long" for w in windows)
    assert windows[0].text.count(".") == 3
    assert windows[0].text.split(". ")[-1] in windows[1].text  # one sentence of overlap
    assert split_passage(Passage(id="s", text="Short."), max_chars=100) == [
        Passage(id="s", text="Short.")
    ]


def test_corpus_search_ranks_the_passage_that_answers():
    engine = make_search(corpus=CORPUS)
    assert isinstance(engine, CorpusSearch)
    top = asyncio.run(engine.search("metformin hypoglycaemia when used alone", 2))
    assert top[0].id == "metformin" and top[0].score > top[1].score
    assert asyncio.run(engine.search("amoxicillin otitis", 1))[0].id == "amoxicillin-aom"
    assert engine.describe()["n_passages"] == 3


def test_dense_part_finds_a_paraphrase_without_shared_words():
    engine = CorpusSearch(
        [
            Passage(id="heart", text="Myocardial infarction is treated with urgent reperfusion."),
            Passage(id="skin", text="Eczema responds to emollients and topical steroids."),
        ]
    )
    lexical_only = CorpusSearch(engine.passages, dense=False)
    query = "heart attack therapy"
    assert asyncio.run(lexical_only.search(query, 2)) == []  # no shared word
    assert asyncio.run(engine.search(query, 1))[0].id == "heart"


def test_knowledge_search_gives_concept_passages(kb):
    engine = KnowledgeSearch(kb)
    hits = asyncio.run(engine.search("Zestril", 3))
    assert hits and hits[0].source == "knowledge"
    assert any("lisinopril" in (h.title + h.text).lower() for h in hits)
    assert all(h.id == kb.concept(h.id).id for h in hits)  # ids are concept ids
    assert asyncio.run(engine.search("   ", 3)) == []
