"""Where a model call goes and when it may go: the replicas of an endpoint, used round-robin,
each with a bound on the requests in flight to it, behind a gate that a distributed executor
can replace by one shared with every worker (issue 27).

``OPENAI_BASE_URL`` may list several URLs, comma-separated: replicas of one server (the same
model behind each, answering in the same JSON dialect)::

    OPENAI_BASE_URL=http://gpu1:8000/v1,http://gpu2:8000/v1

A request is held by :meth:`CallGate.lease`, which yields the replica to send it to. The gate
of a process (:class:`LocalGate`, per event loop) sends each request to the replica with the
fewest requests in flight, ties broken round-robin, and keeps at most ``max_concurrent``
(``CLINJUDGE_MAX_CONCURRENT_CALLS``) in flight to each replica over every caller of the
process; with one URL and no bound it never waits. With ``--executor ray`` every worker holds
a gate that asks one limiter for its leases (:mod:`clinjudge.executors.ray_workers`), so the
bounds and the requests-per-second budget hold over the whole cluster, not per process.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol


def split_urls(base_url: str | None) -> list[str | None]:
    """``"http://a/v1, http://b/v1"`` → ``["http://a/v1", "http://b/v1"]``; no URL → ``[None]``
    (the SDK's default endpoint)."""
    urls = [u.strip() for u in (base_url or "").split(",") if u.strip()]
    return list(urls) or [None]


class Replicas:
    """Requests in flight per replica of one endpoint, and who waits for a free one.

    :meth:`acquire` takes the replica with the fewest requests in flight among those under
    ``max_concurrent`` (and, with ``per_second``, holding a token of its bucket: at most
    ``per_second`` requests a second to each replica, bursts of ``max(1, per_second)``), ties
    broken round-robin; when none is free the request waits, first come first served.
    Bookkeeping is synchronous (one event loop): a cancelled waiter never leaks a slot."""

    def __init__(
        self, n: int, max_concurrent: int | None = None, per_second: float | None = None
    ) -> None:
        n = max(1, n)
        self.in_flight = [0] * n
        self.most = [0] * n  # the most requests ever in flight at once, per replica
        self.granted = [0] * n
        self.max_concurrent = max_concurrent
        self.per_second = per_second
        self._burst = max(1.0, per_second or 0.0)
        self._tokens = [self._burst] * n
        self._filled = [time.monotonic()] * n
        self._next = 0
        self._waiters: deque[asyncio.Future[int]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    def _room(self) -> list[int]:
        """Replicas under the in-flight bound, round-robin from the next one."""
        n = len(self.in_flight)
        order = [(self._next + k) % n for k in range(n)]
        bound = self.max_concurrent
        return [i for i in order if bound is None or self.in_flight[i] < bound]

    def _pick(self) -> int | None:
        """Take the least busy free replica (``None``: none is free now)."""
        now = time.monotonic()
        free = []
        for i in self._room():
            if self.per_second:
                gained = (now - self._filled[i]) * self.per_second
                self._tokens[i], self._filled[i] = min(self._burst, self._tokens[i] + gained), now
            if not self.per_second or self._tokens[i] >= 1.0:
                free.append(i)
        if not free:
            return None
        index = min(free, key=lambda i: self.in_flight[i])  # min is stable: round-robin ties
        self.in_flight[index] += 1
        self.most[index] = max(self.most[index], self.in_flight[index])
        self.granted[index] += 1
        if self.per_second:
            self._tokens[index] -= 1.0
        self._next = (index + 1) % len(self.in_flight)
        return index

    async def acquire(self) -> int:
        """The replica the next request goes to (waits while none is free)."""
        if not self._waiters and (index := self._pick()) is not None:
            return index
        waiter: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        self._dispatch()
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # granted as it was cancelled
                self.release(waiter.result())
            raise

    def release(self, index: int) -> None:
        self.in_flight[index] = max(0, self.in_flight[index] - 1)
        self._dispatch()

    def _dispatch(self) -> None:
        """Serve the waiters in order while a replica is free; when only a token is missing,
        come back when the first one is due."""
        while self._waiters:
            if self._waiters[0].done():  # cancelled while waiting
                self._waiters.popleft()
                continue
            index = self._pick()
            if index is None:
                room = self._room()
                if self.per_second and room and self._timer is None:
                    due = min((1.0 - self._tokens[i]) / self.per_second for i in room)
                    loop = asyncio.get_running_loop()
                    self._timer = loop.call_later(max(due, 0.001), self._on_timer)
                return
            self._waiters.popleft().set_result(index)

    def _on_timer(self) -> None:
        self._timer = None
        self._dispatch()


class CallGate(Protocol):
    def lease(
        self, endpoint: str, replicas: int, max_concurrent: int | None
    ) -> AbstractAsyncContextManager[int]:
        """Held around one request to ``endpoint`` (a name: its URL list and model); yields the
        index of the replica (URL) to send it to."""
        ...


class LocalGate:
    """This process's gate: a :class:`Replicas` per event loop and endpoint."""

    def __init__(self) -> None:
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Replicas]]
        self._loops = weakref.WeakKeyDictionary()

    def replicas(self, endpoint: str, n: int, max_concurrent: int | None) -> Replicas:
        held = self._loops.setdefault(asyncio.get_running_loop(), {})
        return held.setdefault(endpoint, Replicas(n, max_concurrent))

    @asynccontextmanager
    async def lease(
        self, endpoint: str, replicas: int, max_concurrent: int | None
    ) -> AsyncIterator[int]:
        if replicas <= 1 and max_concurrent is None:  # nothing to choose or bound
            yield 0
            return
        state = self.replicas(endpoint, replicas, max_concurrent)
        index = await state.acquire()
        try:
            yield index
        finally:
            state.release(index)


_GATE: list[CallGate] = [LocalGate()]


def call_gate() -> CallGate:
    """The gate model calls of this process go through."""
    return _GATE[0]


def install_call_gate(gate: CallGate | None) -> None:
    """Make ``gate`` the process's gate (``None``: back to a :class:`LocalGate`). A Ray worker
    installs the cluster's shared gate before it builds its judges."""
    _GATE[0] = gate if gate is not None else LocalGate()
