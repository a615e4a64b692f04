"""Identical calls in flight at once are sent once (a "single flight"): a call whose cache key
matches one already waiting for its reply waits for that reply instead of sending its own.

The response cache (:mod:`clinjudge.llm_cache`) answers a prompt asked before, but only once
its first reply is back. A run that judges one visit's notes side by side
(:func:`clinjudge.datasets.items.visit_order`) sends their identical calls at once -- CEF's
questions about the transcript, the omission judge's list of the visit's facts -- and each
would miss the cache. Only callers with a cache share flights: the cache's key says when two
calls are the same (prompt file, model, decoding, rendered prompt, schema).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class SharedFlights(Generic[T]):
    """The calls in flight, by key and event loop."""

    def __init__(self) -> None:
        self._pending: dict[tuple[int, str], asyncio.Future[T]] = {}

    async def run(self, key: str, make: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """``(make()'s result, False)``, or ``(result, True)`` of the call with ``key`` already
        in flight. A waiter whose call is cancelled (not the waiter itself) makes its own."""
        loop = asyncio.get_running_loop()
        slot = (id(loop), key)
        pending = self._pending.get(slot)
        if pending is not None:
            try:
                return await asyncio.shield(pending), True
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
        future: asyncio.Future[T] = loop.create_future()
        self._pending[slot] = future
        try:
            result = await make()
        except BaseException:
            future.cancel()
            raise
        finally:
            if self._pending.get(slot) is future:
                del self._pending[slot]
        future.set_result(result)
        return result, False
