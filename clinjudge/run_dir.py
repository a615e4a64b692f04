"""One run layer for ``compare`` and ``meta-eval``: a run directory and the loop that runs
several judges over one list of items into it.

A :class:`RunDir` holds ``run.json`` (the manifest: a digest of every item, every judge's
identity, the package version, and the command that made it) and ``runs/<judge>.jsonl`` (one
row per item, keyed by ``id``, appended as items finish). A run grows: a later command may add
judges or items, or leave some out, and only what is new is judged; the manifest keeps the union.
What would mix two configurations is refused, naming the setting that differs: a judge of the
same name with another model, prompt or option, an item of the same id with other text, a
dataset sharing no item with the run, another package version.

:func:`run_judges` runs each judge in turn, resumably (:func:`clinjudge.runner.run_evaluator`):
rows already on disk are not judged again, rows marked ``retry`` are. The first judge that
cuts claims (``shares_claims``) hands its claims to the others that do, through
``evaluate(item, given=claims)``, so that they rate the very same claim ids.

**One writer.** A command that writes a run directory holds :func:`run_lock` while it judges
and writes its reports: a second process pointed at the same directory is refused at once,
naming the first (otherwise both would judge every item, paying twice and doubling rows); a
lock left by a process that was killed is taken over with a note on stderr, and the stray
temporaries of its unfinished rewrites are removed. The manifest is rewritten atomically.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clinjudge import __version__
from clinjudge.datasets.items import Dataset, Item
from clinjudge.errors import ConfigError
from clinjudge.evaluators.base import Evaluator
from clinjudge.files import WriterLock, atomic_write_text, remove_stray_temporaries
from clinjudge.runner import first_difference, read_completed, run_evaluator, short_value

Progress = Callable[[str, int], Callable[[], None]]


def no_progress(name: str, total: int) -> Callable[[], None]:
    return lambda: None


class RunDir:
    """``path/run.json`` and ``path/runs/<judge>.jsonl`` (module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.manifest = self.path / "run.json"
        self.claims_from: str | None = None

    @staticmethod
    def identity(dataset: Dataset, judges: dict[str, Evaluator]) -> dict[str, Any]:
        """What must match for a run directory to be resumed or grown (module docstring)."""
        return {
            "dataset_sha256": dataset.sha256,
            "items": {item.id: item_digest(item) for item in dataset.items},
            "judges": {name: judge.identity() for name, judge in judges.items()},
            "version": __version__,
        }

    def recorded(self) -> dict[str, Any]:
        """The manifest on disk (``{}`` when there is none).

        Raises:
            ConfigError: it is not a run's JSON.
        """
        if not self.manifest.exists():
            return {}
        try:
            found = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            found = None
        if not isinstance(found, dict):
            raise ConfigError(f"{self.manifest} is not a clinjudge run manifest")
        return found

    def open(
        self,
        identity: dict[str, Any],
        *,
        cutter: str | None = None,
        command: dict[str, Any] | None = None,
    ) -> RunDir:
        """Claim the directory for a run of ``identity``: create it, or grow the run it holds
        (the manifest keeps the union of judges and items). The run's first ``cutter`` (the
        first judge that cuts claims) stays the one whose claims the others are given, however
        the run grows; ``command`` (how to load the dataset and build the judges again) is what
        ``clinjudge report`` reads.

        Raises:
            ConfigError: it is a file, or holds a run that would mix (the reason named).
        """
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(f"--out is a file, not a directory: {self.path}")
        previous = self.recorded()
        if why := run_conflict(previous, identity):
            raise ConfigError(f"{self.path} holds another run: {why}; use another --out")
        self.path.mkdir(parents=True, exist_ok=True)
        grown = {
            **previous,
            **identity,
            "items": {**previous.get("items", {}), **identity["items"]},
            "judges": {**previous.get("judges", {}), **identity["judges"]},
            "claims_from": previous.get("claims_from") or cutter,
        }
        if command is not None:
            grown["command"] = command
        atomic_write_text(self.manifest, json.dumps(grown, indent=2))
        self.claims_from = grown["claims_from"]
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
        """``runs/<judge>.jsonl``; a judge named after a file (``rubric:rubrics/x.md``) has
        each character outside letters, digits and ``._:+-`` written ``_`` there."""
        return self.path / "runs" / (_UNSAFE_IN_NAME.sub("_", judge) + ".jsonl")


#: Characters a judge's name may not put in a file name.
_UNSAFE_IN_NAME = re.compile(r"[^\w.:+-]")
#: The writer lock of a run directory (:func:`run_lock`).
LOCK_FILE = ".writer.lock"
#: The run directories this process holds (resolved path → lock).
_HELD: dict[str, WriterLock] = {}


@contextmanager
def run_lock(out_dir: Path) -> Iterator[WriterLock]:
    """Hold ``out_dir``'s writer lock for the block (module docstring): refused with
    :class:`~clinjudge.files.LockHeld` (a one-line reason naming the holder) when another live
    process holds it; a dead holder's lock is taken over, saying so on stderr, and its stray
    temporaries removed. A directory this call created and the block left empty is removed.
    Re-entrant within a process: a command takes the lock before its slow start (loading the
    judges), and the run it then starts holds it on.

    Raises:
        ConfigError: ``out_dir`` is a file, or another process writes it.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"--out is a file, not a directory: {out_dir}")
    key = str(out_dir.resolve())
    if key in _HELD:
        yield _HELD[key]
        return
    created = not out_dir.exists()
    lock = WriterLock(out_dir / LOCK_FILE, f"run directory {out_dir}")
    try:
        with lock:
            _HELD[key] = lock
            if lock.took_over:
                print(f"clinjudge: {lock.took_over}", file=sys.stderr)
            remove_stray_temporaries(out_dir)
            yield lock
    finally:
        _HELD.pop(key, None)
        if created and out_dir.is_dir() and not any(out_dir.iterdir()):
            out_dir.rmdir()


def item_digest(item: Item) -> str:
    """12 hex digits of SHA-256 over everything of an item a judge may read."""
    blob = json.dumps(item.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def run_conflict(previous: dict[str, Any], identity: dict[str, Any]) -> str | None:
    """Why a run recorded as ``previous`` cannot be resumed or grown by ``identity`` (one
    phrase naming the setting), or ``None`` when it can (module docstring)."""
    if not previous:
        return None
    if previous.get("version") != identity["version"]:
        return f"it was made by clinjudge {previous.get('version')}, this is {identity['version']}"
    for name, judge in identity["judges"].items():
        before = previous.get("judges", {}).get(name)
        if before is not None and (where := first_difference(before, judge)):
            key, old, new = where
            return f"judge {name!r} ran with {key} {short_value(old)}, now {short_value(new)}"
    old_items = previous.get("items")
    if old_items is None:  # a manifest of an earlier version: the dataset file must match
        if previous.get("dataset_sha256") != identity["dataset_sha256"]:
            return "it judged another dataset file (another sha256)"
        return None
    shared = old_items.keys() & identity["items"].keys()
    if old_items and identity["items"] and not shared:
        return "it judged another dataset (no item id in common)"
    changed = next(
        (i for i in identity["items"] if i in shared and old_items[i] != identity["items"][i]), None
    )
    if changed is not None:
        return f"item {changed!r} has other text than the run judged"
    return None


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
    given = claims_on_disk(run_dir, judges)
    source = run_dir.claims_from
    order = sorted(judges, key=lambda name: name != source)  # the run's cutter first
    for name in order:
        judge = judges[name]
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
    return {name: runs[name] for name in judges}


def claims_on_disk(run_dir: RunDir, judges: dict[str, Evaluator]) -> dict[str, list[dict]] | None:
    """The claims of the run's cutter when it is not among ``judges`` (a judge added to a
    finished run rates the claims the run's judges rated), else ``None``."""
    source = run_dir.claims_from
    if source is None or source in judges or not run_dir.rows_path(source).exists():
        return None
    rows = read_completed(run_dir.rows_path(source), key="id")
    return {item_id: row["claims"] for item_id, row in rows.items() if "claims" in row}


async def judge_dataset(
    dataset: Dataset,
    judges: dict[str, Evaluator],
    out_dir: Path,
    command: dict[str, Any] | None = None,
    **options: Any,
) -> dict[str, JudgeRun]:
    """Every judge over every item of ``dataset`` into the run directory ``out_dir``: sources
    checked, the directory claimed for this run (:meth:`RunDir.open`), then :func:`run_judges`
    with ``options`` (``concurrency``, ``progress``, ``wrap``, ``retry_failed``)."""
    check_sources(dataset, judges)
    cutter = next((n for n, j in judges.items() if getattr(j, "shares_claims", False)), None)
    run_dir = RunDir(out_dir).open(RunDir.identity(dataset, judges), cutter=cutter, command=command)
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
