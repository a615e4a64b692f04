"""One run layer for ``compare`` and ``meta-eval``: a run directory and the loop that runs
several judges over one list of items into it.

A :class:`RunDir` holds ``run.json`` (the manifest: dataset digest, every judge's identity,
package version — what must match for the run to be resumed) and ``runs/<judge>.jsonl`` (one
row per item, keyed by ``id``, appended as items finish). Opening a directory that holds a run
with other settings is refused, so a resumed run never mixes two configurations.

:func:`run_judges` runs each judge in turn, resumably (:func:`clinjudge.runner.run_evaluator`):
rows already on disk are not judged again, rows marked ``retry`` are. The first judge that
cuts claims (``shares_claims``) hands its claims to the others that do, through
``evaluate(item, given=claims)``, so that they rate the very same claim ids.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinjudge import __version__
from clinjudge.datasets.items import Dataset, Item
from clinjudge.errors import ConfigError
from clinjudge.evaluators.base import Evaluator
from clinjudge.runner import run_evaluator, run_mismatch

Progress = Callable[[str, int], Callable[[], None]]


def no_progress(name: str, total: int) -> Callable[[], None]:
    return lambda: None


class RunDir:
    """``path/run.json`` and ``path/runs/<judge>.jsonl`` (module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.manifest = self.path / "run.json"

    @staticmethod
    def identity(dataset: Dataset, judges: dict[str, Evaluator]) -> dict[str, Any]:
        """What must match for a run directory to be resumed."""
        return {
            "dataset_sha256": dataset.sha256,
            "judges": {name: judge.identity() for name, judge in judges.items()},
            "version": __version__,
        }

    def open(self, identity: dict[str, Any]) -> RunDir:
        """Claim the directory for a run of ``identity``: create it and write the manifest.

        Raises:
            ConfigError: it is a file, or holds a run with other settings.
        """
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(f"--out is a file, not a directory: {self.path}")
        if run_mismatch(self.manifest, identity):
            raise ConfigError(
                f"{self.path} holds a run with other settings; use another --out or delete it"
            )
        self.path.mkdir(parents=True, exist_ok=True)
        self.manifest.write_text(json.dumps(identity, indent=2), encoding="utf-8")
        return self

    def kept(self) -> dict[str, int]:
        """Rows on disk per judge (what an interrupted run keeps for the next)."""
        folder = self.path / "runs"
        if not folder.is_dir():
            return {}
        return {
            path.stem: sum(1 for line in path.open(encoding="utf-8") if line.strip())
            for path in sorted(folder.glob("*.jsonl"))
        }

    def rows_path(self, judge: str) -> Path:
        return self.path / "runs" / f"{judge}.jsonl"


def check_sources(dataset: Dataset, judges: dict[str, Evaluator]) -> None:
    """Judges that read a source text need every item to have one, and a judge with a
    ``missing(item)`` (what the item lacks for it, or ``None``) needs it to say nothing — bad
    input is refused before anything is judged.

    Raises:
        ConfigError: naming the first item that lacks something and the judge that needs it.
    """
    needing = [name for name, judge in judges.items() if judge.needs_source]
    missing = next((item.id for item in dataset.items if not item.transcript.strip()), None)
    if needing and missing is not None:
        raise ConfigError(
            f"{dataset.path}: item {missing!r} has no source text (transcript/dialogue/source "
            f"column), which judge {needing[0]!r} needs"
        )
    for name, judge in judges.items():
        lacks = getattr(judge, "missing", None)
        for item in dataset.items if lacks else ():
            if (what := lacks(item)) is not None:
                raise ConfigError(
                    f"{dataset.path}: item {item.id!r} has no {what}, which judge {name!r} needs"
                )


@dataclass
class JudgeRun:
    """One judge's rows (in item order), the items whose call raised, how many rows were
    resumed from disk, and the seconds it took."""

    rows: list[dict[str, Any]]
    failed: dict[str, str] = field(default_factory=dict)
    resumed: int = 0
    seconds: float = 0.0

    def by_id(self) -> dict[str, dict[str, Any]]:
        return {row["id"]: row for row in self.rows}

    def to_retry(self) -> list[str]:
        """Ids of the items whose rows lost part of their judging (a failed call, an
        unreadable reply): the next run judges them again."""
        return [row["id"] for row in self.rows if row.get("retry")]


class _Given:
    """A judge seen by the runner with the claims it is given for each item."""

    def __init__(self, judge: Evaluator, claims: dict[str, list[dict]] | None) -> None:
        self.judge = judge
        self.claims = claims or {}

    async def evaluate(self, item: Item) -> dict[str, Any]:
        return await self.judge.evaluate(item, given=self.claims.get(item.id))


async def run_judges(
    items: Sequence[Item],
    judges: dict[str, Evaluator],
    run_dir: RunDir,
    *,
    concurrency: int = 4,
    progress: Progress = no_progress,
    wrap: Callable[[Any, Path], Any] | None = None,
    retry_failed: bool = True,
) -> dict[str, JudgeRun]:
    """Every judge over ``items``, resumably, into ``run_dir`` (module docstring). ``wrap``
    (the judge as the runner sees it, its rows file) → what the runner calls instead, e.g.
    meta-eval's judging of each distinct text once. ``retry_failed`` off keeps the rows of
    items whose calls failed instead of judging them again."""
    runs: dict[str, JudgeRun] = {}
    given: dict[str, list[dict]] | None = None
    for name, judge in judges.items():
        shares = getattr(judge, "shares_claims", False)
        runner_sees: Any = _Given(judge, given) if shares else judge
        path = run_dir.rows_path(name)
        if wrap is not None:
            runner_sees = wrap(runner_sees, path)
        started = time.perf_counter()
        result = await run_evaluator(
            runner_sees,
            items,
            out_path=path,
            concurrency=concurrency,
            on_done=progress(name, len(items)),
            retry_failed=retry_failed,
        )
        runs[name] = JudgeRun(
            result.rows, result.failed, result.resumed, time.perf_counter() - started
        )
        if shares and given is None:
            given = {row["id"]: row["claims"] for row in result.rows if "claims" in row}
    return runs


async def judge_dataset(
    dataset: Dataset, judges: dict[str, Evaluator], out_dir: Path, **options: Any
) -> dict[str, JudgeRun]:
    """Every judge over every item of ``dataset`` into the run directory ``out_dir``: sources
    checked, the directory claimed for this run (:meth:`RunDir.open`), then :func:`run_judges`
    with ``options`` (``concurrency``, ``progress``, ``wrap``, ``retry_failed``)."""
    check_sources(dataset, judges)
    run_dir = RunDir(out_dir).open(RunDir.identity(dataset, judges))
    return await run_judges(dataset.items, judges, run_dir, **options)


def failure_summary(judge: Evaluator, rows: list[dict]) -> dict | None:
    """How many units (claims, questions, answers) of how many items failed, grouped by kind
    and reason (most frequent first); ``None`` when none did."""
    failures_of = getattr(judge, "failures", None)
    if failures_of is None:
        return None
    groups: dict[tuple[str, str], int] = {}
    items = 0
    for row in rows:
        found = failures_of(row)
        items += bool(found)
        for f in found:
            key = (str(f.get("kind")), str(f.get("reason", "")).splitlines()[0][:160])
            groups[key] = groups.get(key, 0) + 1
    if not groups:
        return None
    ordered = sorted(groups.items(), key=lambda kv: -kv[1])
    return {
        "units": sum(groups.values()),
        "items": items,
        "by_reason": [{"kind": k, "reason": r, "count": n} for (k, r), n in ordered],
    }
