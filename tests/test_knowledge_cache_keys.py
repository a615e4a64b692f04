"""The semantic index is keyed by the content of the model's files, not their modification
times: a reinstall of the same model (new mtimes) keeps the key, a changed file changes it."""

from __future__ import annotations

import os

from clinjudge.knowledge.cache import content_tree


def test_the_model_key_follows_content_not_modification_time(tmp_path):
    model = tmp_path / "model"
    (model / "sub").mkdir(parents=True)
    (model / "weights.bin").write_bytes(b"\x00" * 4096)
    (model / "sub" / "config.json").write_text('{"dim": 384}')
    cache = tmp_path / "cache"
    first = content_tree(model, cache)
    assert set(first) == {"weights.bin", "sub/config.json"}
    os.utime(model / "weights.bin", ns=(1, 1))  # a reinstall: same bytes, another mtime
    assert content_tree(model, cache) == first
    (model / "sub" / "config.json").write_text('{"dim": 768}')
    changed = content_tree(model, cache)
    assert changed["sub/config.json"] != first["sub/config.json"]
    assert changed["weights.bin"] == first["weights.bin"]
    memo = (cache / "file-hashes.json").read_text()
    assert memo.count(str((model / "weights.bin").resolve())) == 1  # the stale stat is dropped


def test_saving_an_index_removes_the_stale_copies(tmp_path):
    from clinjudge.knowledge.cache import remove_stale_indexes

    for name in ("index-old1", "index-old2", "index-new", "lexicon-abc"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "vectors.faiss").write_bytes(b"x")
    removed = remove_stale_indexes(tmp_path, keep=tmp_path / "index-new")
    assert sorted(p.name for p in removed) == ["index-old1", "index-old2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index-new", "lexicon-abc"]


def test_a_new_lexicon_removes_older_ones_of_the_same_sources_only(tmp_path):
    import json

    from clinjudge.knowledge.cache import remove_stale_lexicons

    def lexicon(name, sources, code):
        (tmp_path / f"{name}.pkl").write_bytes(b"x")
        manifest = {"sources": sources, "code": code, "extra": {}, "snomed": {}}
        (tmp_path / f"{name}.json").write_text(json.dumps(manifest))
        return manifest

    lexicon("lexicon-old", ["drugs", "icd10cm"], "v1")
    lexicon("lexicon-snomed", ["drugs", "icd10cm", "snomed"], "v1")
    (tmp_path / "lexicon-nomanifest.pkl").write_bytes(b"x")
    new = lexicon("lexicon-new", ["drugs", "icd10cm"], "v2")
    removed = remove_stale_lexicons(tmp_path, keep=tmp_path / "lexicon-new.pkl", manifest=new)
    assert [p.name for p in removed] == ["lexicon-old.pkl"]
    assert sorted(p.name for p in tmp_path.glob("*.pkl")) == [
        "lexicon-new.pkl",
        "lexicon-nomanifest.pkl",
        "lexicon-snomed.pkl",
    ]
    assert not (tmp_path / "lexicon-old.json").exists()
