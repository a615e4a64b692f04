"""What runs inside Ray: a worker holding a run's judges, and the one limiter every worker's
model calls go through. Plain classes, made Ray actors by :mod:`.ray_pool`
(``ray.remote(JudgeWorker)``), so this module imports no Ray.

A :class:`JudgeWorker` builds the judges once from the run's
:class:`~clinjudge.executors.spec.JudgeSpec` (the knowledge base, the embedding and pair models
loaded once per worker, not per item), then judges the items sent to it and returns each row
with its judge's model-call counts so far.

A :class:`CallLimiter` is one asyncio actor per run: for each endpoint, a
:class:`~clinjudge.llm_endpoints.Replicas` (requests in flight per replica URL under
``CLINJUDGE_MAX_CONCURRENT_CALLS``, at most ``CLINJUDGE_REQUESTS_PER_SECOND`` a second to each,
the least busy replica first, round-robin). Each worker installs a :class:`SharedGate` that
takes a lease from it around every request, so those bounds hold over all workers together.
A lease names its holder: when a worker dies, the pool has the limiter :meth:`forget
<CallLimiter.forget>` the leases it held, so its slots are not lost.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from clinjudge.llm_endpoints import Replicas, install_call_gate

if TYPE_CHECKING:
    from clinjudge.datasets.items import Item
    from clinjudge.executors.spec import JudgeSpec


class JudgeWorker:
    """A run's judges in one worker process (module docstring)."""

    def __init__(self, spec: JudgeSpec, limiter: Any | None = None, holder: str = "") -> None:
        """``limiter``: the run's :class:`CallLimiter` actor (``None`` offline); ``holder``:
        this worker's name on its leases."""
        spec.apply_env()
        from clinjudge.embeddings import cap_torch_threads

        # Ray gives each worker OMP_NUM_THREADS = the CPUs it holds: torch gets them (1–4),
        # or CLINJUDGE_TORCH_THREADS, the driver's, carried by the spec
        omp = os.environ.get("OMP_NUM_THREADS", "")
        cap_torch_threads(int(omp) if omp.isdigit() else 1)
        if limiter is not None:
            install_call_gate(SharedGate(limiter, holder))
        self.judges = spec.build()

    async def ready(self) -> dict[str, Any]:
        """The process id and each judge's identity (the driver checks they are its own)."""
        return {"pid": os.getpid(), "identities": {n: j.identity() for n, j in self.judges.items()}}

    async def evaluate(
        self, judge: str, item: Item, given: list[dict] | None
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The row of ``item`` by the judge ``judge`` (rating ``given`` claims when there are
        some), with its cost measured here, and that judge's model-call counts in this worker so
        far."""
        from clinjudge.llm_usage import with_cost

        found = self.judges[judge]
        row = await with_cost(
            lambda: found.evaluate(item) if given is None else found.evaluate(item, given=given)
        )
        return row, found.usage()


class SharedGate:
    """A worker's :class:`~clinjudge.llm_endpoints.CallGate`: a lease of the run's
    :class:`CallLimiter` around each request."""

    def __init__(self, limiter: Any, holder: str) -> None:
        self._limiter = limiter
        self._holder = holder

    @asynccontextmanager
    async def lease(
        self, endpoint: str, replicas: int, max_concurrent: int | None
    ) -> AsyncIterator[int]:
        lease, index = await self._limiter.acquire.remote(
            self._holder, endpoint, replicas, max_concurrent
        )
        try:
            yield index
        finally:
            self._limiter.release.remote(lease)  # nothing to wait for


class CallLimiter:
    """The run's one limiter of model calls (module docstring); an asyncio actor."""

    def __init__(self, per_second: float | None = None) -> None:
        self.per_second = per_second
        self._endpoints: dict[str, Replicas] = {}
        self._leases: dict[int, tuple[str, str, int]] = {}  # lease → holder, endpoint, replica
        self._ids = itertools.count(1)

    async def acquire(
        self, holder: str, endpoint: str, replicas: int, max_concurrent: int | None
    ) -> tuple[int, int]:
        """A lease on a replica of ``endpoint`` (waits while none is free): (lease, replica)."""
        state = self._endpoints.get(endpoint)
        if state is None:
            state = self._endpoints[endpoint] = Replicas(replicas, max_concurrent, self.per_second)
        index = await state.acquire()
        lease = next(self._ids)
        self._leases[lease] = (holder, endpoint, index)
        return lease, index

    async def release(self, lease: int) -> None:
        held = self._leases.pop(lease, None)
        if held is not None:
            self._endpoints[held[1]].release(held[2])

    async def forget(self, holder: str) -> int:
        """Release every lease ``holder`` (a dead worker) still held; how many there were."""
        leases = [lease for lease, held in self._leases.items() if held[0] == holder]
        for lease in leases:
            await self.release(lease)
        return len(leases)

    async def stats(self) -> dict[str, dict[str, list[int]]]:
        """Per endpoint and replica: requests granted, in flight now, most ever in flight."""
        return {
            name: {"granted": s.granted, "in_flight": s.in_flight, "most": s.most}
            for name, s in self._endpoints.items()
        }
