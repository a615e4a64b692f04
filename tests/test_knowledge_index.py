"""Semantic index: build on a small source subset with the real model, cache reuse, rebuild."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clinjudge.knowledge import base as base_module
from clinjudge.knowledge.base import KnowledgeBase
from clinjudge.knowledge.index import ConceptIndex, load_encoder, select_surfaces

FIXTURES = Path(__file__).parent / "fixtures" / "knowledge"
SMALL = ("lay_terms", "curated")


@pytest.fixture(scope="module")
def encoder():
    return load_encoder()


@pytest.fixture(scope="module")
def small(tmp_path_factory, encoder) -> KnowledgeBase:
    kb = KnowledgeBase.load(tmp_path_factory.mktemp("kb-small"), sources=SMALL)
    kb.index(encoder=encoder)
    return kb


def test_search_ranks_the_exact_concept_first(small):
    hits = small.search("heart attack", k=3)
    assert hits[0].preferred == "myocardial infarction" and hits[0].score == 1.0
    assert hits[0].matched == "heart attack"
    assert len({h.concept_id for h in hits}) == len(hits)  # one hit per class
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))


def test_dense_search_finds_paraphrases(small):
    hits = small.search("pain in the chest", k=3)
    assert "chest pain" in [h.preferred for h in hits]
    assert all(0.0 < h.score <= 1.0 for h in hits)
    breath = [h.preferred for h in small.search("breathing is hard", k=5)]
    assert {"dyspnea", "shortness of breath", "difficulty breathing"} & set(breath)


def test_index_selection_skips_abbreviations_and_rare_drugs(small):
    texts, owners = select_surfaces(small.lexicon.concepts)
    assert len(texts) == len(owners) == len(small.index())
    assert "heart attack" in texts and "myocardial infarction" in texts


def test_index_is_reused_from_the_cache(small, encoder, monkeypatch):
    again = KnowledgeBase.load(small.root, sources=SMALL)

    def no_build(*args, **kwargs):
        raise AssertionError("the cached index should have been loaded")

    monkeypatch.setattr(ConceptIndex, "build", no_build)
    assert len(again.index(encoder=encoder)) == len(small.index())
    assert not again.index_rebuilt
    assert (
        again.search("heart attack", k=1)[0].concept_id
        == small.search("heart attack", 1)[0].concept_id
    )


def test_changed_input_rebuilds_lexicon_and_index(tmp_path, encoder, monkeypatch, capsys):
    vocab = tmp_path / "vocab.ttl"
    shutil.copy(FIXTURES / "extra_vocab.ttl", vocab)
    cache = tmp_path / "cache"
    first = KnowledgeBase.load(cache, sources=("curated",), extra=[vocab])
    first.index(encoder=encoder)
    assert first.index_rebuilt
    said = capsys.readouterr().err
    assert "building the knowledge index (" in said and "knowledge index built in" in said
    assert "building the knowledge lexicon (curated, vocab.ttl; " in said
    assert "knowledge lexicon built in" in said
    assert first.lookup("wobbly pyrexia")[0].id == "ex:wobbleFever"
    assert first.lookup("wobbly pyrexia")[0].source == "vocab"

    # unchanged inputs: the lexicon comes from the cache (no build) and so does the index
    real_build = base_module.build_lexicon
    monkeypatch.setattr(base_module, "build_lexicon", lambda *a, **k: pytest.fail("rebuilt"))
    second = KnowledgeBase.load(cache, sources=("curated",), extra=[vocab])
    second.index(encoder=encoder)
    assert second.digest == first.digest and not second.index_rebuilt
    monkeypatch.setattr(base_module, "build_lexicon", real_build)

    # a changed vocabulary file: new manifest, new lexicon, new index
    vocab.write_text(vocab.read_text().replace("wobbly pyrexia", "shaky pyrexia"))
    third = KnowledgeBase.load(cache, sources=("curated",), extra=[vocab])
    assert third.digest != first.digest
    assert third.lookup("wobbly pyrexia") == [] and third.lookup("shaky pyrexia")
    third.index(encoder=encoder)
    assert third.index_rebuilt
    assert third.search("shaky pyrexia", k=1)[0].concept_id == "ex:wobbleFever"
    # the changed vocabulary's old lexicon is stale (same source selection): removed
    assert len(list(cache.glob("lexicon-*.pkl"))) == 1


def test_stats_report_the_index(small):
    info = small.stats()
    assert info["index"]["built"] and info["index"]["bytes"] > 0
    assert info["index"]["vectors"] == len(small.index())
    assert set(info["per_source"]) == {"curated", "lay_terms"}


def test_unwritable_cache_still_builds(tmp_path, encoder):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the cache directory should be")
    kb = KnowledgeBase.load(blocked, sources=("curated",))
    assert kb.lookup("angina")
    assert len(kb.index(encoder=encoder)) > 0 and kb.index_rebuilt
