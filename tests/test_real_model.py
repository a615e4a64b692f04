"""The real-model tier: every model-backed command against a real GGUF model served by
llama-cpp-python on 127.0.0.1 (``--backend local``), on short real notes.

What is asserted is what a user relies on whatever the model's quality: every claim, question
and fact ends as a parsed answer or a recorded failure (never a crash, never a guess), the JSON
dialect the server accepts is found and recorded, and a finished run resumes without a call.

The tier needs the local extra and a model file: ``CLINJUDGE_LOCAL_GGUF`` (and optionally
``CLINJUDGE_GGUF_SHA256``). Without them the tests skip and say why;
``CLINJUDGE_REQUIRE_LOCAL_MODEL=1`` (set by ``.ci/run``) makes that a failure instead.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from cli_helpers import run

FIXTURES = Path(__file__).parent / "fixtures"
VISIT = FIXTURES / "real_model" / "visit.txt"
NOTE = FIXTURES / "real_model" / "note.txt"
#: A reply this long from a 1.5B model is a loop, not an answer (read as a parse failure).
MAX_TOKENS = "700"


def _missing() -> str | None:
    gguf = os.environ.get("CLINJUDGE_LOCAL_GGUF")
    if not gguf:
        return "no model: set CLINJUDGE_LOCAL_GGUF to a GGUF file (.ci/run assembles one)"
    if not Path(gguf).is_file():
        return f"CLINJUDGE_LOCAL_GGUF is not a file: {gguf}"
    if importlib.util.find_spec("llama_cpp") is None:
        return "the local extra is not installed: pip install -e '.[local]'"
    return None


@pytest.fixture(scope="module")
def gguf() -> str:
    reason = _missing()
    if reason:
        if os.environ.get("CLINJUDGE_REQUIRE_LOCAL_MODEL") == "1":
            pytest.fail(f"CLINJUDGE_REQUIRE_LOCAL_MODEL=1 but {reason}")
        pytest.skip(reason)
    return os.environ["CLINJUDGE_LOCAL_GGUF"]


@pytest.fixture
def local(gguf: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The CLI options of a local run. Replies are cached as in any run (keyed by the model
    file's hash), so a second session of the tier asks less."""
    monkeypatch.setenv("CLINJUDGE_MAX_TOKENS", MAX_TOKENS)
    monkeypatch.setenv("CLINJUDGE_GGUF", gguf)  # --gguf sets it too; restored after the test
    return ["--backend", "local", "--gguf", gguf]


def accounted(claims: list[dict]) -> bool:
    """Each claim is exactly one of: a verdict with a tier, a parse failure, a call error."""
    return all((c.get("tier") in (1, 2, 3, 4, 5)) != bool(c.get("failure")) for c in claims)


@pytest.mark.parametrize("protocol", ["claim", "batch"])
def test_judge_gives_every_claim_a_verdict_or_a_recorded_failure(
    local: list[str], protocol: str
) -> None:
    args = ("judge", "--transcript", VISIT, "--note", NOTE, *local, "--protocol", protocol)
    result = run(*args, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    claims = data["claims"]
    assert len(claims) >= 9 and accounted(claims)
    parsed = [c for c in claims if c.get("tier")]
    assert len(parsed) >= len(claims) // 2, claims  # the tier measures; it must mostly parse
    provenance = data["provenance"]
    assert provenance["local_model"]["sha256"] and provenance["model"].count("@") == 1
    modes = provenance["output_modes"]  # replies received per dialect (none when all cached)
    assert "json_schema" not in modes and (not modes or modes.get("json_object", 0) > 0), modes
    assert provenance["verifier"]["protocol"] == protocol
    assert data["usage"]["errors"] == 0


def test_compare_resumes_a_finished_run_without_a_call(local: list[str], tmp_path: Path) -> None:
    dataset = tmp_path / "visits.jsonl"
    rows = [
        {"id": "pneumonia", "dialogue": VISIT.read_text(), "note": NOTE.read_text()},
        {
            "id": "knee",
            "dialogue": "[doctor] what happened to your knee ?\n[patient] i twisted my left "
            "knee playing soccer two days ago .\n[doctor] any swelling ?\n[patient] yes , "
            "it's swollen .\n[doctor] take ibuprofen four hundred milligrams as needed .",
            "note": "Left knee injury 2 days ago while playing soccer, with swelling. Right knee "
            "x-ray normal. Ibuprofen 400 mg as needed.",
        },
    ]
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    args = (
        "compare", dataset, "--judges", "lexical,inference-aware", "--out", out, *local,
        "--option", "lexical.protocol=claim", "--option", "inference-aware.protocol=claim",
    )  # fmt: skip
    first = run(*args)
    assert first.exit_code == 0, first.output
    report = json.loads((out / "report.json").read_text())
    verdicts = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    for judge in ("lexical", "inference-aware"):
        lines = [v for v in verdicts if v["judge"] == judge]
        assert len(lines) == report["judges"][judge]["n_claims"] + len(
            [v for v in lines if v.get("failure")]
        )
        assert accounted(lines)
    again = run(*args)
    assert again.exit_code == 0, again.output
    resumed = json.loads((out / "report.json").read_text())
    assert resumed["judges"] == report["judges"]  # same numbers, nothing judged twice
    assert sum(u.get("calls", 0) for u in resumed["usage"].values()) == 0


def test_cef_answers_every_question_or_records_why(local: list[str]) -> None:
    source = FIXTURES / "cef" / "dialogue.txt"
    summary = FIXTURES / "cef" / "automatic_summary.txt"
    result = run(
        "cef", "--source", source, "--summary", summary, *local,
        "--n-source", "4", "--n-summary", "4", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    statuses = {q["status"] for q in data["questions"]}
    assert statuses <= {"asked", "dropped_label", "dropped_self", "parse_failure", "error"}
    for score in ("coverage", "conformity", "consistency"):
        assert data[score] is None or 0 <= data[score] <= 100
    assert data["errors"] == 0


def test_factcheck_rates_every_relevant_claim_from_the_corpus(
    local: list[str], tmp_path: Path
) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text("Metformin is the first-line drug for type 2 diabetes.")
    corpus = FIXTURES / "factcheck" / "corpus.jsonl"
    result = run("factcheck", "--answer", answer, "--corpus", corpus, *local, "--json")
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.stdout)
    for claim in data["claims"]:
        assert claim.get("verdict") in ("supported", "not_supported", None)
        if claim["label"] == "relevant" and claim.get("verdict") is None:
            assert claim.get("failure"), claim  # unrated only with a recorded reason
    assert data["errors"] == 0


def test_omission_reads_the_visits_facts_or_records_why(local: list[str], tmp_path: Path) -> None:
    dataset = tmp_path / "one.jsonl"
    row = {"id": "pneumonia", "dialogue": VISIT.read_text(), "note": NOTE.read_text()}
    dataset.write_text(json.dumps(row) + "\n")
    out = tmp_path / "omission"
    result = run("compare", dataset, "--judges", "omission", "--out", out, *local)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    judge = report["judges"]["omission"]
    failed = report.get("failed_items", {}).get("omission", {})
    assert judge["headline"] or failed  # facts judged, or the failure recorded and counted
