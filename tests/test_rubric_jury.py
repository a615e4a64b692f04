"""A jury of graders for the rubric judge (issue 39 item 3): three loopback OpenAI-compatible
servers that disagree in known ways; the verdict by majority (ties kept), Fleiss' κ against a
hand-computed value, a juror whose reply is garbage or whose server fails left out of the vote
and counted, a 429 retried, each juror's provenance and cost, reports, resume, and bad input."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable

import pytest
from cli_helpers import assert_one_line_error, run
from openai_stub import HttpError, OpenAIStub, Reply, rate_limited, sequence

from clinjudge.api import evaluate
from clinjudge.datasets.items import Item
from clinjudge.errors import ConfigError
from clinjudge.evaluators import BuildOptions, build_evaluator
from clinjudge.llm import LLMSettings
from clinjudge.llm_settings import parse_jury

VISIT = """[doctor] what brings you in today ?
[patient] i've had chest pain for two days .
[doctor] any fever ?
[patient] no .
"""
NOTE = "HPI: Chest pain for two days. No fever.\n"
RUBRIC = """---
name: jury-check
reads: [transcript, note]
criteria:
  - {id: a, text: The note states the chest pain., points: 1}
  - {id: b, text: The note states the duration., points: 1}
  - {id: c, text: The note states the denied fever., points: 1}
  - {id: d, text: The note is concise., points: 1}
---
"""
SECRET = "sk-jury-secret-0451"


def grader(verdicts: dict[str, bool], turns: list[int] | None = None) -> Callable:
    """Replies giving ``verdicts`` for the criteria the request lists (others left out)."""

    def reply(request: dict) -> Reply:
        text = request["messages"][-1]["content"]
        listed = re.findall(r"^- ([\w-]+):", text.split("Criteria:")[-1], re.M)
        grades = [
            {"id": c, "met": verdicts[c], "reason": f"says {c}", "turns": turns or [2]}
            for c in listed
            if c in verdicts
        ]
        return Reply(json.dumps({"grades": grades}), prompt_tokens=100, completion_tokens=20)

    return reply


#: Three jurors that disagree in known ways; m3 never grades d (a parse failure of m3 alone).
KNOWN = {
    "m1": {"a": True, "b": True, "c": True, "d": True},
    "m2": {"a": True, "b": False, "c": False, "d": False},
    "m3": {"a": True, "b": False, "c": True},
}


@pytest.fixture
def jurors():
    stubs = {name: OpenAIStub().start() for name in ("m1", "m2", "m3")}
    try:
        yield stubs
    finally:
        for stub in stubs.values():
            stub.stop()


@pytest.fixture
def rubric_file(tmp_path):
    path = tmp_path / "jury.rubric.md"
    path.write_text(RUBRIC, encoding="utf-8")
    return path


def jury_of(stubs: dict[str, OpenAIStub]) -> list[str]:
    return [f"{name}@{stub.base_url}" for name, stub in stubs.items()]


def jury_judge(path, stubs, retries: int = 0):
    settings = LLMSettings(max_retries=retries, api_key=SECRET)
    return build_evaluator(
        f"rubric:{path}", BuildOptions(settings=settings, jury=tuple(jury_of(stubs)))
    )


def test_the_verdict_is_the_majority_and_a_tie_is_kept(jurors, rubric_file):
    for name, stub in jurors.items():
        stub.script(grader(KNOWN[name], turns=[int(name[1])]))
    judge = jury_judge(rubric_file, jurors)
    row = asyncio.run(judge.evaluate(Item(id="x", transcript=VISIT, note=NOTE)))
    got = {c["id"]: c for c in row["criteria"]}
    assert got["a"]["met"] is True and got["a"]["votes"] == {
        "voted": 3,
        "of": 3,
        "met": 3,
        "not_met": 0,
    }
    assert got["b"]["met"] is False and got["b"]["turns"] == [2, 3]  # the turns of m2 and m3
    assert got["c"]["met"] is True and got["c"]["graded_by"] == "jury"
    assert got["d"]["status"] == "tie" and "met" not in got["d"]  # m1 met, m2 not, m3 silent
    assert got["d"]["votes"] == {"voted": 2, "of": 3, "met": 1, "not_met": 1}
    assert got["d"]["jurors"]["m3"]["status"] == "parse_failure"
    assert got["b"]["jurors"]["m1"] == {
        "status": "graded",
        "met": True,
        "reason": "says b",
        "turns": [1],
    }
    assert row["n_ties"] == 1 and row["n_graded"] == 3 and row["score"] == pytest.approx(2 / 3)
    assert [f["id"] for f in row["failures"]] == ["x:d@m3"] and row["retry"]
    summary = judge.summarize([row])
    jury = summary["jury"]
    # subjects a {T:3}, b {T:1,F:2}, c {T:2,F:1}, d {T:1,F:1}: P̄ = 5/12, P̄_e = 65/121
    assert jury["kappa"]["kappa"] == pytest.approx(-175 / 672)
    assert jury["kappa"]["observed"] == pytest.approx(5 / 12) and jury["kappa"]["n"] == 4
    assert (jury["ties"], jury["no_votes"], summary["criteria"]["ties"]) == (1, 0, 1)
    assert jury["by_criterion"]["b"]["split"] == 1 and jury["by_criterion"]["a"]["kappa"] is None
    by = jury["by_juror"]
    assert (by["m1"]["agreement"], by["m2"]["agreement"], by["m3"]["agreement"]) == (
        pytest.approx(2 / 3),
        pytest.approx(2 / 3),
        1.0,
    )
    assert by["m3"]["failed"] == 1 and by["m3"]["voted"] == 3
    assert all(len(s.requests) == 1 or name == "m3" for name, s in jurors.items())
    assert len(jurors["m3"].requests) == 2  # d asked again once, then a parse failure


def test_garbage_and_a_failing_server_are_left_out_and_a_429_is_retried(jurors, rubric_file):
    jurors["m1"].script(grader(KNOWN["m1"]))
    jurors["m2"].script(lambda _r: Reply("I think the note is fine overall."))
    jurors["m3"].script(lambda _r: HttpError(500, "juror down"))
    judge = jury_judge(rubric_file, jurors)
    row = asyncio.run(judge.evaluate(Item(id="x", transcript=VISIT, note=NOTE)))
    assert all(c["votes"]["voted"] == 1 and c["met"] is True for c in row["criteria"])
    kinds = {f["id"]: f["kind"] for f in row["failures"]}
    assert kinds["x:a@m2"] == "parse_failure" and kinds["x:a@m3"] == "error" and len(kinds) == 8
    usage = judge.usage()
    assert usage["jurors"]["m2"]["parse_failures"] == 1 and usage["jurors"]["m3"]["errors"] == 1
    assert usage["calls"] == sum(u["calls"] for u in usage["jurors"].values())
    limited = sequence(rate_limited(), Reply("unused"))  # a 429 first, then the grader
    answers = grader(KNOWN["m2"])
    jurors["m3"].script(lambda r: a if isinstance(a := limited(r), HttpError) else answers(r))
    jurors["m2"].script(grader(KNOWN["m2"]))
    judge = jury_judge(rubric_file, jurors, retries=1)
    row = asyncio.run(judge.evaluate(Item(id="y", transcript=VISIT, note=NOTE)))
    assert all(c["votes"]["voted"] == 3 for c in row["criteria"]) and row["failures"] == []
    assert {c["id"]: c["met"] for c in row["criteria"]} == {
        "a": True,
        "b": False,
        "c": False,
        "d": False,
    }


def test_every_juror_is_in_the_provenance_without_its_key(jurors, rubric_file):
    for name, stub in jurors.items():
        stub.script(grader(KNOWN[name]))
    judge = jury_judge(rubric_file, jurors)
    asyncio.run(judge.evaluate(Item(id="x", transcript=VISIT, note=NOTE)))
    seats = judge.provenance()["jury"]
    assert [s["juror"] for s in seats] == ["m1", "m2", "m3"]
    host = jurors["m2"].base_url.split("//")[1].split("/")[0]
    assert seats[1]["host"] == host and seats[1]["model"] == "m2"
    assert seats[1]["decoding"]["temperature"] == 0.0 and seats[1]["prompts"][0]["sha256"]
    assert seats[0]["usage"]["input_tokens"] == 100 and seats[2]["usage"]["calls"] == 2
    assert SECRET not in json.dumps(judge.provenance()) + json.dumps(judge.identity())
    assert [j["model"] for j in judge.identity()["jury"]] == ["m1", "m2", "m3"]
    assert all(h["authorization"] == f"Bearer {SECRET}" for h in jurors["m1"].headers)


def test_a_compare_run_reports_the_jury_and_resumes(jurors, rubric_file, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for name, stub in jurors.items():
        stub.script(grader(KNOWN[name]))
    jurors["m2"].script(lambda _r: HttpError(500, "juror down"))
    data = tmp_path / "d.jsonl"
    rows = [{"id": f"v{i}", "transcript": VISIT, "note": NOTE} for i in range(2)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "run"
    jury = ",".join(jury_of(jurors))
    command = ("compare", data, "--judges", f"rubric:{rubric_file}", "--jury", jury, "--out", out)
    first = run(*command)
    assert first.exit_code == 0, first.output
    assert "jury of 3 (m1, m2, m3): Fleiss κ" in first.output
    report = json.loads((out / "report.json").read_text())
    summary = report["judges"][f"rubric:{rubric_file}"]
    assert summary["jury"]["by_juror"]["m2"]["failed"] == 8  # 4 criteria x 2 items, excluded
    assert report["failures"][f"rubric:{rubric_file}"]["units"] == 8 + 2  # and m3 on d
    # the two items are one text: the second shares the first's call (llm_flights), one error
    assert report["usage"][f"rubric:{rubric_file}"]["jurors"]["m2"]["errors"] == 1
    # m1 and m3 split on b (tie, 1-1) and d (m3 silent: m1 alone): the verdicts
    assert summary["criteria"]["ties"] == 2 and report["items_to_retry"]
    jurors["m2"].script(grader(KNOWN["m2"]))
    before = {n: len(s.requests) for n, s in jurors.items()}
    again = run(*command)
    assert again.exit_code == 0, again.output
    sent = {n: len(s.requests) - before[n] for n, s in jurors.items()}
    assert sent["m2"] == 1 and sent["m1"] == 0  # the cache serves m1; m3 asked again for d only
    report = json.loads((out / "report.json").read_text())
    summary = report["judges"][f"rubric:{rubric_file}"]
    assert summary["criteria"]["ties"] == 2 and summary["jury"]["by_juror"]["m2"]["failed"] == 0
    assert summary["jury"]["kappa"]["kappa"] == pytest.approx(-175 / 672)  # twice the item above
    markdown = (out / "report.md").read_text()
    assert "**Jury.**" in markdown and "| m2 | 8 | 0 |" in markdown
    page = (out / "report.html").read_text()
    assert '"jurors": {"m1": "met", "m2": "not met", "m3": "not met"}' in page
    assert page.count('"split": true') == 6 and page.count('"split": false') == 2  # b, c, d
    every = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file()).decode("latin-1")
    assert SECRET not in every and SECRET not in again.output
    assert report["provenance"]["judges"][f"rubric:{rubric_file}"]["jury"][2]["model"] == "m3"


def test_python_evaluate_takes_a_jury(jurors, rubric_file, monkeypatch):
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    for name, stub in jurors.items():
        stub.script(grader(KNOWN[name]))
    row = evaluate(f"rubric:{rubric_file}", NOTE, source=VISIT, jury=jury_of(jurors))
    assert row["n_ties"] == 1 and row["score"] == pytest.approx(2 / 3)
    with pytest.raises(ConfigError, match="takes no jury"):
        evaluate("cef", NOTE, source=VISIT, jury=jury_of(jurors))


def test_a_malformed_jury_is_one_line(rubric_file, tmp_path):
    with pytest.raises(ConfigError, match="at least two jurors"):
        parse_jury(["m1@http://a/v1"])
    with pytest.raises(ConfigError, match="names model 'm1' twice"):
        parse_jury(["m1@http://a/v1,m1@http://b/v1"])
    [one, two] = parse_jury(["m1@https://u:p@gw:8443/v1", "m2@http://b/v1"])
    assert (one.model, one.host(), two.host()) == ("m1", "gw:8443", "b")
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "a", "transcript": VISIT, "note": NOTE}) + "\n")
    out = tmp_path / "o"
    bad = run("compare", data, "--judges", f"rubric:{rubric_file}", "--jury", "m1", "--out", out)
    assert_one_line_error(bad, "--jury 'm1': name a juror MODEL@URL")
    jury = "m1@http://127.0.0.1:9/v1,m2@http://127.0.0.1:9/v1"
    cef = run("compare", data, "--judges", "cef", "--jury", jury, "--out", out)
    assert_one_line_error(cef, "--jury grades rubric and SOAP judges")
    offline = ("--backend", "offline", "--out", out)
    refused = run("compare", data, "--judges", f"rubric:{rubric_file}", "--jury", jury, *offline)
    assert_one_line_error(refused, "does not run on --backend offline")


def test_levels_are_averaged_and_a_juror_is_read_against_the_mean(jurors, tmp_path):
    path = tmp_path / "scale.yaml"
    path.write_text(
        "name: q\nmode: scale\nreads: [note]\n"
        "scale: {1: bad, 2: poor, 3: fair, 4: good, 5: exact}\n"
        "criteria: [{id: clarity, text: The note is clear, critical: true}]\n",
        encoding="utf-8",
    )
    for name, level in (("m1", 4), ("m2", 5), ("m3", 3)):
        reply = {"grades": [{"id": "clarity", "level": level, "reason": "r"}]}
        jurors[name].script(lambda _r, reply=reply: Reply(json.dumps(reply)))
    judge = jury_judge(path, jurors)
    row = asyncio.run(judge.evaluate(Item(id="n", transcript="", note=NOTE)))
    [clarity] = row["criteria"]
    assert clarity["level"] == 4.0 and clarity["votes"]["levels"] == [4, 5, 3]
    assert row["mean_level"] == 4.0 and row["score"] == 0.75 and row["gate_failed"] == []
    jury = judge.summarize([row])["jury"]
    assert jury["by_juror"]["m2"]["mean_abs_difference"] == 1.0 and jury["kappa"]["observed"] == 0


def tiers(tier: int) -> Callable:
    """A SOAP judge's replies: every claim the request lists at ``tier``."""

    def reply(request: dict) -> Reply:
        text = "\n".join(str(m.get("content", "")) for m in request["messages"])
        ids = dict.fromkeys(re.findall(r'"id":\s*"(c\d+)"', text))
        verdicts = [
            {"claim_id": i, "tier": tier, "subtype": "restatement", "rationale": f"tier {tier}"}
            for i in ids
        ]
        return Reply(json.dumps({"verdicts": verdicts}))

    return reply


def soap_jury(stubs, monkeypatch):
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    options = BuildOptions(jury=tuple(jury_of(stubs)), options={"claims": "split"})
    return build_evaluator("inference-aware", options)


SOAP_NOTE = "Chest pain for two days. Denies fever. Takes aspirin daily.\n"


def test_the_soap_judge_by_a_jury_takes_the_majority_and_the_median_tier(jurors, monkeypatch):
    for name, tier in (("m1", 1), ("m2", 4), ("m3", 5)):
        jurors[name].script(tiers(tier))
    judge = soap_jury(jurors, monkeypatch)
    row = asyncio.run(judge.evaluate(Item(id="s", transcript=VISIT, note=SOAP_NOTE)))
    n = len(row["claims"])
    assert n >= 2 and len(row["verdicts"]) == n and row["ties"] == 0
    assert all(v["tier"] == 4 and v["rationale"] == "jury 2 of 3: tier 4" for v in row["verdicts"])
    vote = row["jury"][row["claims"][0]["id"]]
    assert vote["jurors"]["m1"] == {"tier": 1, "supported": True} and vote["supported"] is False
    assert judge.item_scores(row)["hallucination_rate"] == 1.0
    summary = judge.summarize([row])
    # every claim {supported: 1, not: 2}: P_i = 1/3, P̄_e = 1/9 + 4/9 -> κ = -1/2
    assert summary["jury"]["kappa"]["kappa"] == pytest.approx(-0.5)
    assert summary["jury"]["by_juror"]["m1"]["agreement"] == 0.0
    assert summary["hallucination_rate"] == 1.0 and not row["retry"]
    prompts = [r["messages"][-1]["content"] for s in jurors.values() for r in s.requests]
    assert len(set(prompts)) == len(prompts) // 3  # the same claims, the same prompts
    assert [j["juror"] for j in judge.provenance()["jury"]] == ["m1", "m2", "m3"]


def test_a_soap_jury_split_evenly_leaves_the_claim_unrated(jurors, monkeypatch):
    jurors["m1"].script(tiers(2))
    jurors["m2"].script(tiers(5))
    jurors["m3"].script(lambda _r: Reply("no idea"))
    judge = soap_jury(jurors, monkeypatch)
    row = asyncio.run(judge.evaluate(Item(id="s", transcript=VISIT, note=SOAP_NOTE)))
    n = len(row["claims"])
    assert row["verdicts"] == [] and row["failures"] == [] and row["ties"] == n
    assert judge.item_scores(row)["hallucination_rate"] is None  # nothing guessed
    assert len(judge.failures(row)) == n and row["retry"]
    assert all(f["claim_id"].endswith("@m3") for f in judge.failures(row))
    jury = judge.summarize([row])["jury"]
    assert jury["ties"] == n and jury["by_juror"]["m3"]["failed"] == n


def test_a_compare_run_of_a_soap_jury_reports_it(jurors, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    for name, tier in (("m1", 1), ("m2", 1), ("m3", 5)):
        jurors[name].script(tiers(tier))
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "s", "transcript": VISIT, "note": SOAP_NOTE}) + "\n")
    out = tmp_path / "run"
    jury = ",".join(jury_of(jurors))
    result = run("compare", data, "--judges", "inference-aware", "--jury", jury, "--out", out)
    assert result.exit_code == 0, result.output
    assert "inference-aware: jury of 3 (m1, m2, m3)" in result.output
    report = json.loads((out / "report.json").read_text())
    summary = report["judges"]["inference-aware"]
    assert (
        summary["hallucination_rate"] == 0.0 and summary["jury"]["by_juror"]["m3"]["agreement"] == 0
    )
    assert "**Jury.**" in (out / "report.md").read_text()
    assert '"jurors": "m1 tier 1; m2 tier 1; m3 tier 5"' in (out / "report.html").read_text()


def test_a_worker_builds_the_same_jury_from_the_spec(jurors, rubric_file):
    from clinjudge.executors.spec import JudgeSpec

    spec = JudgeSpec.of([f"rubric:{rubric_file}"], jury=tuple(jury_of(jurors)))
    built = spec.build()
    assert [j.name for j, _ in built[f"rubric:{rubric_file}"].jury] == ["m1", "m2", "m3"]


def test_a_jury_honours_the_batch_size_and_refuses_offline_facts(
    jurors, rubric_file, tmp_path, monkeypatch
):
    monkeypatch.setenv("CLINJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CLINJUDGE_MAX_RETRIES", "0")
    for name, stub in jurors.items():
        stub.script(grader(KNOWN[name]))
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "v", "transcript": VISIT, "note": NOTE}) + "\n")
    out, jury = tmp_path / "run", ",".join(jury_of(jurors))
    judges = ("--judges", f"rubric:{rubric_file}", "--jury", jury, "--out", out)
    done = run("compare", data, *judges, "--option", "rubric.batch_size=1")
    assert done.exit_code == 0, done.output
    for stub in jurors.values():  # 4 criteria, one a call (m3's ask again for d is the same ask)
        asked = [r["messages"][-1]["content"].split("Criteria:")[-1] for r in stub.requests]
        assert len(asked) == 4
        assert all(len(re.findall(r"^- ([\w-]+):", a, re.M)) == 1 for a in asked)
    report = json.loads((out / "report.json").read_text())
    assert report["judges"][f"rubric:{rubric_file}"]["criteria"]["ties"] == 1
    judge = build_evaluator(
        f"rubric:{rubric_file}",
        BuildOptions(jury=tuple(jury_of(jurors)), options={"batch_size": 1}),
    )
    planned, note = judge.planned_prompts(Item(id="v", transcript=VISIT, note=NOTE))
    assert len(planned) == 3 * 4 and "each juror's" in note  # what --dry-run counts
    assert judge.identity()["options"] == {"batch_size": 1}
    facts = run("compare", data, *judges, "--option", "rubric.offline_facts=on")
    assert_one_line_error(facts, "rubric.offline_facts=on does not apply to a jury")
