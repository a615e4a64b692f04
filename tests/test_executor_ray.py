"""``--executor ray`` (issue 27) on a Ray started inside the tests (2 CPUs): the same rows and
report as the local executor, a worker killed mid-run (its item judged elsewhere, nothing lost
or written twice), resume after an interrupted run, one limiter of model calls shared by every
worker, round-robin over two loopback endpoints, and one-line errors.

Skipped without the ``ray`` extra, unless ``CLINJUDGE_REQUIRE_RAY=1`` (``.ci/run``), which
makes a missing Ray fail instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from pathlib import Path

import pytest
from cli_helpers import assert_one_line_error, run
from openai_stub import OpenAIStub, Reply

if os.environ.get("CLINJUDGE_REQUIRE_RAY") != "1":
    pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")
import ray  # noqa: E402

from clinjudge.compare import run_compare  # noqa: E402
from clinjudge.datasets import load_items  # noqa: E402
from clinjudge.executors.ray_cluster import RayExecutor  # noqa: E402
from clinjudge.executors.spec import JudgeSpec  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    """A Ray of 2 CPUs for this module; shut down after it."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def without_timing(value):
    """A report or row without what measures time (seconds, the creation date)."""
    if isinstance(value, dict):
        return {
            k: without_timing(v) for k, v in value.items() if "seconds" not in k and k != "created"
        }
    if isinstance(value, list):
        return [without_timing(v) for v in value]
    return value


def rows_by_id(path: Path) -> dict[str, dict]:
    """Rows of a runs file by id; fails when an id is written twice."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids)), f"an item written twice: {ids}"
    return {row["id"]: without_timing(row) for row in rows}


def test_compare_on_ray_writes_what_the_local_executor_writes(local_ray, tmp_path):
    base = ("compare", "aci-demo", "--limit", "3", "--backend", "offline", "--format", "json")
    local = run(*base, "--out", tmp_path / "local")
    assert local.exit_code == 0, local.output
    on_ray = run(*base, "--out", tmp_path / "ray", "--executor", "ray", "--workers", "2")
    assert on_ray.exit_code == 0, on_ray.output
    a, b = tmp_path / "local", tmp_path / "ray"
    assert (a / "verdicts.jsonl").read_bytes() == (b / "verdicts.jsonl").read_bytes()
    for judge in ("lexical", "inference-aware"):
        assert rows_by_id(a / "runs" / f"{judge}.jsonl") == rows_by_id(
            b / "runs" / f"{judge}.jsonl"
        )
    report_a, report_b = (json.loads((d / "report.json").read_text()) for d in (a, b))
    assert report_a["judges"]["lexical"]["n_claims"] > 0
    assert without_timing(report_a) == without_timing(report_b)
    assert json.loads((a / "run.json").read_text()) == json.loads((b / "run.json").read_text())
    # the run directory is an ordinary one: rendered again without judging
    again = run("report", b, "--format", "json")
    assert again.exit_code == 0, again.output


def offline_spec() -> JudgeSpec:
    return JudgeSpec.of(["lexical"], backend="offline")


def test_a_worker_killed_mid_run_loses_no_item_and_doubles_none(local_ray, tmp_path):
    data = load_items("aci-demo", limit=4)
    spec = offline_spec()
    judges = spec.build()
    with RayExecutor(spec, workers=2) as ray_run:
        remote = ray_run.judges(judges)
        pool = ray_run.pool
        kills = []

        def kill_a_busy_worker() -> None:
            busy = [w for w in pool.workers if w.load > 0]
            if pool.resent == 0 and busy and len(kills) < 3:  # until an item was lost
                kills.append(busy[0].holder)
                ray.kill(busy[0].handle)

        result = asyncio.run(
            run_compare(
                data,
                remote,
                tmp_path / "run",
                concurrency=ray_run.concurrency,
                progress=lambda name, total: kill_a_busy_worker,
            )
        )
    assert kills and pool.resent >= 1 and pool.replaced >= 1
    rows = rows_by_id(tmp_path / "run" / "runs" / "lexical.jsonl")
    assert sorted(rows) == sorted(item.id for item in data.items)
    assert not result.report["failed_items"]
    assert result.report["judges"]["lexical"]["n_notes"] == 4


class Interrupted(Exception):
    """What the test raises from the progress bar, as Ctrl-C would end a run."""


def test_an_interrupted_ray_run_resumes_judging_only_what_is_missing(local_ray, tmp_path):
    data = load_items("aci-demo", limit=5)
    spec = offline_spec()
    out = tmp_path / "run"
    done = [0]

    def interrupt_after_two() -> None:
        done[0] += 1
        if done[0] == 2:
            raise Interrupted

    with RayExecutor(spec, workers=2) as ray_run:
        remote = ray_run.judges(spec.build())
        with pytest.raises(Interrupted):
            asyncio.run(
                run_compare(
                    data,
                    remote,
                    out,
                    concurrency=ray_run.concurrency,
                    progress=lambda name, total: interrupt_after_two,
                )
            )
    kept = rows_by_id(out / "runs" / "lexical.jsonl")
    assert 2 <= len(kept) < 5
    sent: list[str] = []
    with RayExecutor(spec, workers=2) as ray_run:
        remote = ray_run.judges(spec.build())
        pool_evaluate = ray_run.pool.evaluate

        async def counted(judge, item, given):
            sent.append(item.id)
            return await pool_evaluate(judge, item, given)

        ray_run.pool.evaluate = counted
        result = asyncio.run(run_compare(data, remote, out, concurrency=ray_run.concurrency))
    assert sorted(sent) == sorted(i.id for i in data.items if i.id not in kept)
    rows = rows_by_id(out / "runs" / "lexical.jsonl")
    assert sorted(rows) == sorted(item.id for item in data.items)
    assert {k: rows[k] for k in kept} == kept  # the rows of the first run kept as they were
    assert result.report["judges"]["lexical"]["n_notes"] == 5


def reply_for(body: dict) -> str:
    """A valid reply of the SOAP judge's LLM path: the note's sentences as claims for an
    extraction prompt, tier 1 for every claim of a verdict batch."""
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    if "<claims>" in text:
        ids = dict.fromkeys(re.findall(r'"id":\s*"(c\d+)"', text.split("<claims>", 1)[1]))
        verdicts = [
            {"claim_id": i, "tier": 1, "subtype": "restatement", "rationale": "", "evidence": []}
            for i in ids
        ]
        return json.dumps({"verdicts": verdicts})
    note = text.split("<note>", 1)[-1].split("</note>", 1)[0]
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", note) if len(s.strip()) > 20]
    claims = [{"text": s, "section": "subjective", "quote": s} for s in sentences[:6]]
    return json.dumps({"claims": claims})


def counting_server(counts: list[int], lock: threading.Lock, delay: float):
    """A script answering validly after ``delay`` s; ``counts``: in flight now, most, total."""

    def reply(body: dict) -> Reply:
        with lock:
            counts[0] += 1
            counts[1] = max(counts[0], counts[1])
            counts[2] += 1
        time.sleep(delay)
        with lock:
            counts[0] -= 1
        return Reply(reply_for(body))

    return reply


def test_workers_share_one_limiter_and_use_every_endpoint_round_robin(
    local_ray, tmp_path, monkeypatch
):
    from clinjudge.knowledge.cache import cache_root

    lock = threading.Lock()
    a_counts, b_counts = [0, 0, 0], [0, 0, 0]
    cache = tmp_path / "cache"  # replies: none cached; knowledge: the one built (no rebuild)
    cache.mkdir()
    (cache / "knowledge").symlink_to(cache_root(), target_is_directory=True)
    with (
        OpenAIStub(counting_server(a_counts, lock, 0.15)) as a,
        OpenAIStub(counting_server(b_counts, lock, 0.15)) as b,
    ):
        for key, value in {
            "CLINJUDGE_MODEL": "stub-judge",
            "OPENAI_BASE_URL": f"{a.base_url},{b.base_url}",
            "CLINJUDGE_CACHE_DIR": str(cache),
            "CLINJUDGE_MAX_RETRIES": "0",
            "CLINJUDGE_MAX_CONCURRENT_CALLS": "1",  # per URL, over every worker
        }.items():
            monkeypatch.setenv(key, value)
        out = tmp_path / "run"
        result = run(
            "compare", "aci-demo", "--limit", "4", "--judges", "inference-aware",
            "--backend", "llm", "--claims", "llm", "--out", out, "--format", "json",
            "--executor", "ray", "--workers", "2", "--concurrency", "4",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    # each worker alone would send up to 4 at once: one limiter holds them to 1 per URL
    assert a_counts[1] == 1 and b_counts[1] == 1
    assert a_counts[2] > 0 and b_counts[2] > 0 and abs(a_counts[2] - b_counts[2]) <= 2
    report = json.loads((out / "report.json").read_text())
    assert report["judges"]["inference-aware"]["n_notes"] == 4
    # the workers' calls are counted in the driver's report
    assert report["usage"]["inference-aware"]["calls"] == a_counts[2] + b_counts[2]
    modes = report["provenance"]["judges"]["inference-aware"]["output_modes"]
    assert sum(modes.values()) == a_counts[2] + b_counts[2]


def test_bad_executor_options_are_one_line_errors(tmp_path, monkeypatch):
    out = tmp_path / "o"
    assert_one_line_error(
        run("compare", "aci-demo", "--out", out, "--workers", "2"), "need --executor ray"
    )
    assert_one_line_error(
        run("compare", "aci-demo", "--out", out, "--executor", "dask"), "--executor must be"
    )
    assert_one_line_error(
        run(
            "compare", "aci-demo", "--out", out, "--executor", "ray",
            "--ray-address", "ray://127.0.0.1:1",
        ),
        "cannot reach the Ray cluster at ray://127.0.0.1:1",
    )  # fmt: skip
    assert_one_line_error(
        run("meta-eval", Path(__file__).parent / "fixtures" / "meta_eval" / "pairs.jsonl",
            "--out", out, "--executor", "ray", "--backend", "local"),
        "cannot share --backend local",
    )  # fmt: skip
    from clinjudge.executors import ray_cluster

    monkeypatch.setattr(ray_cluster, "ray_installed", lambda: False)
    assert_one_line_error(
        run("compare", "aci-demo", "--out", out, "--executor", "ray"), "pip install -e '.[ray]'"
    )


def test_workers_that_cannot_build_the_judges_or_build_others_are_refused(local_ray):
    from clinjudge.errors import ConfigError

    broken = JudgeSpec(judges=("lexical",), backend="offline", options={"lexical": {"bogus": 1}})
    with RayExecutor(broken, workers=1) as ray_run, pytest.raises(ConfigError) as refused:
        ray_run.judges({})
    assert "a Ray worker could not build the judges" in str(refused.value)
    assert "bogus" in str(refused.value) and "Traceback" not in str(refused.value)
    spec = offline_spec()
    judges = spec.build()
    with RayExecutor(spec, workers=1) as ray_run:
        driver = judges["lexical"]
        skewed = type("Skewed", (), {"identity": lambda self: {**driver.identity(), "x": 1}})
        with pytest.raises(ConfigError, match="built judge 'lexical' differently"):
            ray_run.judges({"lexical": skewed()})


def test_meta_eval_on_ray_scores_the_pairs_as_the_local_executor_does(local_ray, tmp_path):
    pairs = Path(__file__).parent / "fixtures" / "meta_eval" / "pairs.jsonl"
    base = ("meta-eval", pairs, "--judge", "lexical", "--backend", "offline")
    local = run(*base, "--out", tmp_path / "local")
    on_ray = run(*base, "--out", tmp_path / "ray", "--executor", "ray", "--workers", "2")
    assert local.exit_code == 0 and on_ray.exit_code == 0, on_ray.output
    a, b = tmp_path / "local", tmp_path / "ray"
    assert (a / "pairs_scored.jsonl").read_bytes() == (b / "pairs_scored.jsonl").read_bytes()
    report_a, report_b = (json.loads((d / "report.json").read_text()) for d in (a, b))
    assert without_timing(report_a) == without_timing(report_b)
    rows = rows_by_id(b / "runs" / "lexical.jsonl")  # each text judged once, shared originals
    assert sum("same_as" in row for row in rows.values()) == 4
