"""The run layer shared by compare and meta-eval: a run directory grows by judges and items and
refuses, naming the setting, a run that would mix configurations; the run's first claim-cutting
judge's claims reach the other claim-cutting judges (and only them) through
``evaluate(item, given=...)``, also when they join a finished run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from clinjudge.datasets.items import Dataset, Item
from clinjudge.errors import ConfigError
from clinjudge.run_dir import judge_dataset


class Cutter:
    """Cuts one claim per word, or rates the claims it is given."""

    needs_source = False
    shares_claims = True

    def __init__(self, name: str, model: str = "m1") -> None:
        self.name = name
        self.model = model
        self.given: list[list[dict] | None] = []

    def identity(self) -> dict[str, Any]:
        return {"judge": self.name, "decoding": {"temperature": 0, "model": self.model}}

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


def run(judges: dict, path: Path, items: list[Item] = ITEMS) -> dict:
    dataset = Dataset(name="t", path=path / "d.jsonl", items=items, sha256=str(len(items)))
    return asyncio.run(judge_dataset(dataset, judges, path / "out", concurrency=1))


def test_the_first_cutters_claims_reach_the_other_cutters_only(tmp_path):
    first, second, scorer = Cutter("first"), Cutter("second"), Scorer()
    runs = run({"first": first, "scorer": scorer, "second": second}, tmp_path)
    assert first.given == [None, None]
    assert second.given == [
        runs["first"].by_id()["a"]["claims"],
        runs["first"].by_id()["b"]["claims"],
    ]
    scored = runs["scorer"].by_id()["a"]
    assert {k: v for k, v in scored.items() if k != "cost"} == {"id": "a", "length": 9}
    assert scored["cost"]["calls"] == 0  # every row carries its cost, offline too
    assert (tmp_path / "out" / "runs" / "second.jsonl").exists()


def test_a_run_resumes_and_grows_by_judges_and_items_judging_only_what_is_new(tmp_path):
    run({"first": Cutter("first")}, tmp_path)
    again = run({"first": Cutter("first")}, tmp_path)
    assert again["first"].resumed == 2
    more = [*ITEMS, Item(id="c", transcript="", note="left knee")]
    added, first = Cutter("added"), Cutter("first")
    grown = run({"added": added, "first": first}, tmp_path, more)
    assert first.given == [None]  # only item c is new to the run's cutter
    # the judge that joins is given the run's claims, those on disk included
    assert added.given == [grown["first"].by_id()[i]["claims"] for i in ("a", "b", "c")]
    assert list(grown) == ["added", "first"]  # reported in the order asked
    # a later run of the added judge alone judges only the new item, which the run's cutter
    # never cut: it cuts its own claims
    fresh = Cutter("added")
    run({"added": fresh}, tmp_path, [*more, Item(id="d", transcript="", note="fever")])
    assert fresh.given == [None]
    manifest = (tmp_path / "out" / "run.json").read_text()
    assert '"claims_from": "first"' in manifest and '"d"' in manifest


@pytest.mark.parametrize(
    ("judges", "items", "reason"),
    [
        (
            {"first": Cutter("first", model="m2")},
            ITEMS,
            'judge \'first\' ran with decoding.model "m1", now "m2"',
        ),
        (
            {"first": Cutter("first")},
            [Item(id="a", transcript="", note="knee pain, left")],
            "item 'a' has other text than the run judged",
        ),
        (
            {"first": Cutter("first")},
            [Item(id="z", transcript="", note="knee pain")],
            "another dataset (no item id in common)",
        ),
    ],
)
def test_a_run_that_would_mix_configurations_is_refused_naming_the_setting(
    tmp_path, judges, items, reason
):
    run({"first": Cutter("first")}, tmp_path)
    with pytest.raises(ConfigError, match="holds another run: ") as raised:
        run(judges, tmp_path, items)
    assert reason in str(raised.value)


def test_a_run_of_another_package_version_is_refused_naming_both(tmp_path, monkeypatch):
    run({"first": Cutter("first")}, tmp_path)
    monkeypatch.setattr("clinjudge.run_dir.__version__", "9.9.9")
    with pytest.raises(ConfigError, match=r"made by clinjudge \S+, this is 9\.9\.9"):
        run({"first": Cutter("first")}, tmp_path)


def test_an_out_path_that_is_a_file_is_refused_in_one_line(tmp_path):
    (tmp_path / "out").write_text("not a run")
    with pytest.raises(ConfigError, match="--out is a file, not a directory"):
        run({"first": Cutter("first")}, tmp_path)
