"""A judge whose items are judged elsewhere, as the run layer sees it.

:class:`RemoteJudge` stands in for one of the driver's evaluators: ``evaluate(item, given)``
sends the item (and the claims it is given) to a pool of workers and returns the row a worker
made with the same judge; everything else — ``identity``, ``summarize``, ``verdict_lines``, the
SOAP judges' ``report`` — is the driver's own judge, which reads rows and makes no call. So
``run_judges`` (resume, the rows files, the claims handed from judge to judge, meta-eval's
judging of each text once), the reports, ``clinjudge report`` and ``safety-case`` are the same
code with either executor.

What a judge counts of its model calls lives in the workers: ``usage()`` and the
``output_modes`` of ``provenance()`` are the driver's own counts plus each worker's last
counts (:func:`add_usage`; counters only grow, so the largest of a worker's reports is its
latest, whatever order they arrive in: :func:`latest_usage`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from clinjudge.datasets.items import Item
    from clinjudge.evaluators.base import Evaluator


class Judging(Protocol):
    """What judges items elsewhere (a pool of workers)."""

    async def evaluate(self, judge: str, item: Item, given: list[dict] | None) -> dict[str, Any]:
        """The row the worker's judge ``judge`` made of ``item``."""
        ...

    def usage(self, judge: str) -> dict[str, Any] | None:
        """The workers' model-call counts of ``judge``, summed (``None``: none reported)."""
        ...


class RemoteJudge:
    """The driver's judge ``name``, whose items a :class:`Judging` pool judges (module
    docstring). Attributes it does not define are the driver's judge's."""

    def __init__(self, name: str, judge: Evaluator, pool: Judging) -> None:
        self._name = name
        self._judge = judge
        self._pool = pool

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._judge, attr)

    async def evaluate(self, item: Item, given: list[dict] | None = None) -> dict[str, Any]:
        return await self._pool.evaluate(self._name, item, given)

    def usage(self) -> dict[str, Any] | None:
        own = self._judge.usage()
        if own is None:
            return None
        return add_usage([own, self._pool.usage(self._name) or {}])

    def provenance(self) -> dict[str, Any]:
        found = self._judge.provenance()
        used = self.usage()
        if "output_modes" in found and used is not None:
            found = {**found, "output_modes": dict(used.get("output_modes") or {})}
        return found


def add_usage(counts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The sum of usage dicts (:class:`clinjudge.llm.Usage`): numbers added, and each
    ``output_modes`` entry added."""
    total: dict[str, Any] = {}
    for count in counts:
        for key, value in count.items():
            if isinstance(value, dict):
                into = total.setdefault(key, {})
                for mode, n in value.items():
                    into[mode] = into.get(mode, 0) + n
            else:
                total[key] = total.get(key, 0) + value
    return total


def latest_usage(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any] | None:
    """The later of two usage reports of one worker: the largest of each counter."""
    if old is None or new is None:
        return new if old is None else old
    merged: dict[str, Any] = {}
    for key in {*old, *new}:
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) or isinstance(b, dict):
            a, b = a or {}, b or {}
            merged[key] = {m: max(a.get(m, 0), b.get(m, 0)) for m in {*a, *b}}
        else:
            merged[key] = max(a or 0, b or 0)
    return merged
