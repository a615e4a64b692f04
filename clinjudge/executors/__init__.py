"""Where a run's items are judged: in this process (``--executor local``, the asyncio runner of
:mod:`clinjudge.runner`) or on a pool of Ray workers (``--executor ray``, issue 27).

The seam is the runner's call of ``evaluate(item)``: with Ray the driver's judges are
:class:`~clinjudge.executors.remote.RemoteJudge` proxies whose ``evaluate`` sends the item to a
worker that built the same judges once from a :class:`~clinjudge.executors.spec.JudgeSpec`
(names, backend, options, prompt overrides — never the live objects). Everything above it
(run directories, resume, the reports, ``clinjudge report``, ``safety-case``) and below it (the
judges) is unchanged; the rows come back to the driver, which writes them as they arrive.

- :mod:`.spec` — the judges as plain data; :mod:`.remote` — the proxy and usage accounting;
- :mod:`.ray_cluster` — joining or starting Ray, :class:`~.ray_cluster.RayExecutor`;
- :mod:`.ray_pool` — the actor pool (back-pressure, a dead worker's items sent again);
- :mod:`.ray_workers` — the worker actor and the one limiter of model calls all workers share.

Only :mod:`.ray_cluster` and :mod:`.ray_pool` import Ray, inside functions: the package works
without the ``ray`` extra.
"""
