"""The run layer shared by compare and meta-eval: a run directory refuses a run with other
settings, and the first claim-cutting judge's claims reach the other claim-cutting judges (and
only them) through ``evaluate(item, given=...)``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from clinjudge.datasets.items import Dataset, Item
from clinjudge.errors import ConfigError
from clinjudge.run_dir import RunDir, run_judges


class Cutter:
    """Cuts one claim per word, or rates the claims it is given."""

    needs_source = False
    shares_claims = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.given: list[list[dict] | None] = []

    def identity(self) -> dict[str, Any]:
        return {"judge": self.name}

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        self.given.append(given)
        claims = given or [{"id": f"c{i}", "text": w} for i, w in enumerate(item.note.split())]
        return {"id": item.id, "claims": claims, "judge": self.name}


class Scorer:
    """Takes no claims (its evaluate has no ``given`` parameter)."""

    needs_source = False
    name = "scorer"

    def identity(self) -> dict[str, Any]:
        return {"judge": self.name}

    async def evaluate(self, item: Item) -> dict[str, Any]:
        return {"id": item.id, "length": len(item.note)}


ITEMS = [Item(id="a", transcript="", note="knee pain"), Item(id="b", transcript="", note="cough")]


def run(judges: dict, path: Path) -> dict:
    dataset = Dataset(name="t", path=path / "d.jsonl", items=ITEMS, sha256="0")
    run_dir = RunDir(path / "out").open(RunDir.identity(dataset, judges))
    return asyncio.run(run_judges(ITEMS, judges, run_dir, concurrency=1))


def test_the_first_cutters_claims_reach_the_other_cutters_only(tmp_path):
    first, second, scorer = Cutter("first"), Cutter("second"), Scorer()
    runs = run({"first": first, "scorer": scorer, "second": second}, tmp_path)
    assert first.given == [None, None]
    assert second.given == [
        runs["first"].by_id()["a"]["claims"],
        runs["first"].by_id()["b"]["claims"],
    ]
    assert runs["scorer"].by_id()["a"] == {"id": "a", "length": 9}
    assert (tmp_path / "out" / "runs" / "second.jsonl").exists()


def test_a_directory_holding_another_run_is_refused_and_the_same_run_resumes(tmp_path):
    run({"first": Cutter("first")}, tmp_path)
    again = run({"first": Cutter("first")}, tmp_path)
    assert again["first"].resumed == 2
    with pytest.raises(ConfigError, match="holds a run with other settings"):
        run({"other": Cutter("other")}, tmp_path)


def test_an_out_path_that_is_a_file_is_refused_in_one_line(tmp_path):
    (tmp_path / "out").write_text("not a run")
    with pytest.raises(ConfigError, match="--out is a file, not a directory"):
        run({"first": Cutter("first")}, tmp_path)
