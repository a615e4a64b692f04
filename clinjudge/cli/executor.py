"""``--executor local|ray``, ``--ray-address`` and ``--workers`` of ``compare`` and
``meta-eval``: where the items are judged (:mod:`clinjudge.executors`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from clinjudge.cli.common import UsageError, check_choice, run_concurrency

ExecutorOpt = Annotated[
    str,
    typer.Option(
        "--executor",
        help="local: judge in this process. ray: on a pool of Ray workers, each loading the "
        "judges once (pip install -e '.[ray]'); rows, resume and reports are the same.",
    ),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="--executor ray: the cluster to join — auto (the one `ray start --head` runs on "
        "this machine) or ray://HOST:10001; default: start a Ray of this machine's CPUs.",
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option(
        "--workers",
        min=1,
        help="--executor ray: worker processes (default: the cluster's CPUs). Each judges one "
        "item at a time offline, --concurrency items at a time with a model.",
    ),
]


def check_executor(executor: str, address: str | None, workers: int | None, backend: str) -> None:
    """Bad executor options, before any judge is loaded.

    Raises:
        UsageError: an unknown executor, Ray options without ``--executor ray``, or Ray with
            ``--backend local`` (one model server per machine, which the workers cannot share).
        ConfigError: ``--executor ray`` without Ray installed.
    """
    check_choice(executor, ("local", "ray"), "--executor")
    if executor == "local" and (address is not None or workers is not None):
        raise UsageError("--ray-address and --workers need --executor ray")
    if executor == "ray":
        if backend == "local":
            raise UsageError(
                "--executor ray cannot share --backend local's model server: serve the model "
                "with `clinjudge serve` and use --backend llm"
            )
        from clinjudge.executors.ray_cluster import require_ray

        require_ray()


@contextmanager
def judging(
    executor: str,
    *,
    spec: Any,
    evaluators: dict,
    concurrency: int,
    address: str | None = None,
    workers: int | None = None,
) -> Iterator[tuple[dict, int]]:
    """The judges as the run calls them and the items in flight at most: ``evaluators`` and
    :func:`~clinjudge.cli.common.run_concurrency` locally; with Ray, proxies of them judged by
    the workers, ``workers × per-worker`` items in flight (the workers stop on the way out).

    Raises:
        ConfigError: the cluster cannot be reached, or a worker cannot build the judges.
    """
    per_worker = run_concurrency(evaluators, concurrency)
    if executor == "local":
        yield evaluators, per_worker
        return
    from clinjudge.executors.ray_cluster import RayExecutor
    from clinjudge.llm import LLMSettings

    uses_model = any(e.usage() is not None for e in evaluators.values())
    with RayExecutor(
        spec,
        address=address,
        workers=workers,
        per_worker=per_worker,
        uses_model=uses_model,
        per_second=LLMSettings().requests_per_second if uses_model else None,
    ) as ray_run:
        yield ray_run.judges(evaluators), ray_run.concurrency
