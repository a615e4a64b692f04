"""``clinjudge knowledge build|search|stats`` (typer app, run in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinjudge.cli.knowledge import knowledge_app

FIXTURES = Path(__file__).parent / "fixtures" / "knowledge"
runner = CliRunner()


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("kb-cli")


def run(*args: str):
    return runner.invoke(knowledge_app, [str(a) for a in args])


def test_build_then_search_json(cache):
    small = ["--sources", "lay_terms,curated", "--cache-dir", cache]
    result = run("build", *small)
    assert result.exit_code == 0, result.output
    assert "index:" in result.output and "built" in result.output
    again = run("build", *small)
    assert "cached" in again.output  # second build reuses the index
    result = run("search", "heart attack", "--k", "3", "--json", *small)
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert len(hits) == 3
    assert set(hits[0]) == {"concept_id", "preferred", "source", "kind", "score", "matched"}
    assert hits[0]["preferred"] == "myocardial infarction"
    # several queries share one loading; the index's queries run on its ONNX export, whose
    # vectors are sentence-transformers' own
    many = run("search", "heart attack", "zestril", "--k", "2", "--json", *small)
    assert many.exit_code == 0, many.output
    by_query = json.loads(many.stdout)
    assert list(by_query) == ["heart attack", "zestril"]
    assert by_query["heart attack"][0]["preferred"] == "myocardial infarction"
    onnx = list(Path(cache).glob("index-*/encoder.onnx"))
    assert len(onnx) == 1


def test_the_onnx_query_encoder_gives_sentence_transformers_vectors(tmp_path):
    from clinjudge.knowledge.index import load_encoder, model_path
    from clinjudge.knowledge.onnx_encoder import OnnxEncoder, export_onnx, exportable

    folder = model_path()
    assert exportable(folder)
    export_onnx(folder, tmp_path / "encoder.onnx")
    texts = ["heart attack", "Zestril 10 mg daily", "hypertension " * 300, "a"]
    mine = OnnxEncoder(folder, tmp_path / "encoder.onnx").encode(texts, batch_size=3)
    theirs = load_encoder().encode(texts, normalize_embeddings=True)
    assert mine.shape == theirs.shape
    assert (mine * theirs).sum(axis=1).min() > 0.9999  # truncation at 256 tokens included


def test_stats_json_and_text(cache):
    small = ["--sources", "lay_terms,curated", "--cache-dir", cache]
    info = json.loads(run("stats", "--json", *small).stdout)
    assert info["per_source"]["lay_terms"] > 150 and info["surface_forms"] > 0
    assert info["cache_dir"] == str(cache)
    text = run("stats", *small).output
    assert "per source:" in text and "lay_terms" in text


def test_snomed_and_extra_inputs(cache):
    snomed = FIXTURES / "snomed" / "rf2"
    args = ["--sources", "curated", "--cache-dir", cache, "--snomed", snomed]
    info = json.loads(run("stats", "--json", *args).stdout)
    assert info["per_source"]["snomed"] == 5
    result = run("search", "Zorblaxitis", "--json", "--k", "1", *args)
    assert json.loads(result.stdout)[0]["concept_id"] == "SNOMED:999000011"


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--snomed", "/nonexistent/snomed"], "no such file"),
        (["--snomed", "EMPTY_DIR"], "RF2"),
        (["--extra", "/nonexistent/vocab.ttl"], "no such file"),
        (["--extra", str(FIXTURES / "PROVENANCE.md")], "unknown RDF format"),
        (["--sources", "icd10cm,nope"], "unknown knowledge sources"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, args, reason):
    args = [str(tmp_path) if a == "EMPTY_DIR" else a for a in args]
    sources = [] if "--sources" in args else ["--sources", "curated"]
    result = run("build", "--cache-dir", tmp_path, "--no-index", *sources, *args)
    assert result.exit_code == 2
    assert reason in result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_unparsable_vocabulary_exits_2(tmp_path):
    bad = tmp_path / "bad.ttl"
    bad.write_text("@prefix ex: <http://e/> .\nex:a ex:b")
    result = run(
        "build", "--cache-dir", tmp_path, "--no-index", "--sources", "curated", "--extra", bad
    )
    assert result.exit_code == 2 and "cannot parse" in result.output
