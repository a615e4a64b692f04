"""A pool of Ray actors judging a run's items (:class:`WorkerPool`), as the driver uses it.

- **Workers**: ``workers`` :class:`~clinjudge.executors.ray_workers.JudgeWorker` actors, each
  building the run's judges once; :meth:`WorkerPool.start` waits until every one has, and
  refuses workers whose judges are not the driver's (another package version or knowledge base
  on a node: their rows would mix two configurations).
- **Back-pressure**: at most ``workers × per_worker`` items in flight; an item goes to the
  worker with the fewest in flight, so none holds more than ``per_worker``. The rest wait on
  the driver, unsent.
- **Exactly once**: the driver writes a row only when a worker returns it. An item whose
  worker dies (killed, out of memory, its node gone: ``RayActorError``) is sent again to
  another worker and the dead one is replaced by a new one in its slot; after ``max_attempts``
  deaths on one item it fails like an item whose judge raised (listed, judged again by the next
  run). A judge that raises in a worker raises the same exception here.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clinjudge.errors import ConfigError
from clinjudge.executors.ray_workers import JudgeWorker
from clinjudge.executors.remote import add_usage, latest_usage

if TYPE_CHECKING:
    from clinjudge.datasets.items import Item
    from clinjudge.executors.spec import JudgeSpec


class WorkerLost(RuntimeError):
    """An item whose workers kept dying while judging it."""


@dataclass
class _Worker:
    handle: Any
    holder: str
    load: int = 0
    usage: dict[str, dict[str, Any] | None] = field(default_factory=dict)


class WorkerPool:
    """Ray actors judging items (module docstring). ``cpus``: the CPUs Ray reserves for each
    worker; ``limiter``: the run's :class:`~clinjudge.executors.ray_workers.CallLimiter`
    handle, handed to every worker (``None`` when no judge calls a model)."""

    def __init__(
        self,
        spec: JudgeSpec,
        *,
        workers: int,
        per_worker: int = 1,
        cpus: float = 1.0,
        limiter: Any | None = None,
        max_attempts: int = 3,
    ) -> None:
        import ray

        self._ray = ray
        self._spec = spec
        self._limiter = limiter
        self._actor = ray.remote(JudgeWorker).options(
            num_cpus=cpus, scheduling_strategy="SPREAD", max_concurrency=max(4, 2 * per_worker)
        )
        self.size = max(1, workers)
        self.per_worker = max(1, per_worker)
        self.max_attempts = max_attempts
        self._spawned = 0
        self.workers: list[_Worker] = []
        self.retired: list[_Worker] = []
        #: Items sent again because their worker died, and workers replaced.
        self.resent = 0
        self.replaced = 0
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._slots = weakref.WeakKeyDictionary()

    @property
    def capacity(self) -> int:
        """Items in flight at most."""
        return self.size * self.per_worker

    def _spawn(self, slot: int) -> _Worker:
        self._spawned += 1
        holder = f"worker-{slot}.{self._spawned}"
        return _Worker(self._actor.remote(self._spec, self._limiter, holder), holder)

    def start(self, expected: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """Start the workers and wait until each has built its judges; ``expected``: the
        driver's judge identities, which every worker's must equal.

        Raises:
            ConfigError: a worker could not build the judges, or built other ones.
        """
        self.workers = [self._spawn(slot) for slot in range(self.size)]
        try:
            ready = self._ray.get([w.handle.ready.remote() for w in self.workers])
        except self._ray.exceptions.RayError as exc:
            raise ConfigError(f"a Ray worker could not build the judges: {reason(exc)}") from None
        for found in ready:
            for name, identity in (expected or {}).items():
                if found["identities"].get(name) != identity:
                    raise ConfigError(
                        f"a Ray worker (pid {found['pid']}) built judge {name!r} differently "
                        "from this machine (another clinjudge version or knowledge base?)"
                    )
        return ready

    async def evaluate(self, judge: str, item: Item, given: list[dict] | None) -> dict[str, Any]:
        """The row of ``item`` by ``judge`` from the least busy worker (module docstring).

        Raises:
            WorkerLost: its workers died ``max_attempts`` times.
        """
        loop = asyncio.get_running_loop()
        slots = self._slots.setdefault(loop, asyncio.Semaphore(self.capacity))
        deaths = 0
        async with slots:
            while True:
                slot = min(range(len(self.workers)), key=lambda i: self.workers[i].load)
                worker = self.workers[slot]
                worker.load += 1
                try:
                    row, usage = await worker.handle.evaluate.remote(judge, item, given)
                except self._ray.exceptions.RayActorError as exc:
                    deaths += 1
                    self.resent += 1
                    self._replace(slot, worker)
                    if deaths >= self.max_attempts:
                        raise WorkerLost(
                            f"its Ray worker died {deaths} times while judging it: {reason(exc)}"
                        ) from None
                    continue
                except self._ray.exceptions.RayTaskError as exc:  # the judge raised
                    cause = getattr(exc, "cause", None)
                    raise (cause if isinstance(cause, Exception) else exc) from None
                finally:
                    worker.load -= 1
                worker.usage[judge] = latest_usage(worker.usage.get(judge), usage)
                return row

    def _replace(self, slot: int, dead: _Worker) -> None:
        """A new worker in ``slot`` for ``dead`` (once, however many of its items noticed),
        and the dead one's model-call leases released."""
        if self.workers[slot] is not dead:
            return
        self.retired.append(dead)
        self.workers[slot] = self._spawn(slot)
        self.replaced += 1
        if self._limiter is not None:
            self._limiter.forget.remote(dead.holder)

    def usage(self, judge: str) -> dict[str, Any] | None:
        """``judge``'s model-call counts over every worker, the dead ones' included."""
        found = [u for w in [*self.retired, *self.workers] if (u := w.usage.get(judge))]
        return add_usage(found) if found else None

    def close(self) -> None:
        """Stop every worker (and the limiter)."""
        for worker in self.workers:
            self._ray.kill(worker.handle)
        if self._limiter is not None:
            self._ray.kill(self._limiter)


def reason(exc: BaseException) -> str:
    """The last meaningful line of a Ray error (its cause, without Ray's traceback)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException) and cause is not exc:
        return f"{type(cause).__name__}: {cause}".splitlines()[0]
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__
