"""``--executor ray``: a run's items judged by a pool of Ray workers on a local Ray or a cluster.

    with RayExecutor(spec, address="auto", workers=8) as ray_run:
        judges = ray_run.judges(evaluators)       # RemoteJudge proxies of the driver's judges
        run_compare(dataset, judges, out, concurrency=ray_run.concurrency)

:func:`connect` joins the cluster at ``address`` (``auto``: the one ``ray start --head`` runs
on this machine; ``ray://HOST:10001``: a remote head) or, without one, starts a Ray of this
machine's CPUs that lives as long as the run. Ray is imported only here and in
:mod:`.ray_pool`, so clinjudge works without the ``ray`` extra.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import socket
from typing import TYPE_CHECKING, Any

from clinjudge.errors import ConfigError
from clinjudge.executors.ray_pool import WorkerPool, reason
from clinjudge.executors.ray_workers import CallLimiter
from clinjudge.executors.remote import RemoteJudge

if TYPE_CHECKING:
    from clinjudge.evaluators.base import Evaluator
    from clinjudge.executors.spec import JudgeSpec

INSTALL = "pip install -e '.[ray]'"
#: Seconds a cluster address has to answer before the run is refused.
PROBE_SECONDS = 5.0


def ray_installed() -> bool:
    return importlib.util.find_spec("ray") is not None


def require_ray() -> None:
    """Raises ConfigError (with how to install it) when Ray is not installed."""
    if not ray_installed():
        raise ConfigError(f"--executor ray needs Ray, which is not installed: {INSTALL}")


def connect(address: str | None) -> bool:
    """Join the Ray at ``address`` (or ``RAY_ADDRESS``), or start one on this machine (neither);
    True when this call started it (and so should shut it down). A Ray already initialised in
    this process is used as it is.

    Raises:
        ConfigError: Ray is not installed, or the cluster cannot be reached.
    """
    require_ray()
    address = address or os.environ.get("RAY_ADDRESS") or None  # as ray.init reads it
    if address not in (None, "auto") and (why := unreachable(address)):
        raise ConfigError(f"cannot reach the Ray cluster at {address}: {why}")
    import ray

    if ray.is_initialized():
        return False
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    try:
        if address is None:
            ray.init(include_dashboard=False, **quiet)
            return True
        ray.init(address=address, **quiet)
    except Exception as exc:  # ConnectionError, ValueError, RuntimeError, grpc errors...
        raise ConfigError(f"cannot reach the Ray cluster at {address}: {reason(exc)}") from None
    return False


#: An HTTP/2 client's first bytes: the connection preface and an empty SETTINGS frame.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_H2_SETTINGS = 4


def unreachable(address: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why ``address`` (``HOST:PORT`` of a head's GCS, or ``ray://HOST:PORT`` of its client
    server) is not a Ray endpoint, found within ``timeout`` seconds, else ``None``.

    Both are gRPC servers, which answer an HTTP/2 connection preface with a SETTINGS frame at
    once; so the probe connects, sends the preface and reads the first frame header. Nothing
    listening, no answer, a closed connection or any other first bytes (another service on
    the port: a web server's ``HTTP/1.1 400``, a database's greeting) are refused here, in
    seconds — Ray itself retries such an address for minutes. With ``RAY_USE_TLS`` set the
    servers speak TLS first, and only the connection is checked."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        return "expected auto, HOST:PORT or ray://HOST:PORT"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as conn:
            if os.environ.get("RAY_USE_TLS", "0") not in ("", "0"):
                return None
            conn.sendall(_H2_PREFACE)
            first = _read_some(conn, 9)
            if len(first) == 9 and first[3] != _H2_SETTINGS:  # to name what answered
                conn.settimeout(0.3)
                with contextlib.suppress(TimeoutError):
                    first += _read_some(conn, 64)
    except TimeoutError:
        return f"nothing answered within {timeout:g} s (is it a Ray head's port?)"
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if len(first) >= 9 and first[3] == _H2_SETTINGS:
        return None
    if not first:
        return "it closed the connection: not a Ray (gRPC) port"
    shown = first.decode("latin-1").splitlines()[0] if first[:1].isascii() else first.hex()
    return f"another service listens there, not Ray (it answered {shown[:40]!r})"


def _read_some(conn: socket.socket, size: int) -> bytes:
    """Up to ``size`` bytes, fewer when the peer closes or stops sending (socket timeout)."""
    got = b""
    while len(got) < size:
        try:
            chunk = conn.recv(size - len(got))
        except TimeoutError:
            if got:
                break
            raise
        if not chunk:
            break
        got += chunk
    return got


def cluster_cpus() -> float:
    """The CPUs of the Ray cluster this process is connected to."""
    import ray

    return float(ray.cluster_resources().get("CPU", 1.0))


class RayExecutor:
    """Judging on Ray workers (module docstring). ``workers``: default the cluster's CPUs;
    ``per_worker``: items a worker judges at once (1 for CPU-bound offline judges, the
    ``--concurrency`` of a judge calling a model); ``uses_model``: a judge calls a model, so
    the workers share one :class:`~clinjudge.executors.ray_workers.CallLimiter`
    (``per_second``: its requests a second to each endpoint URL)."""

    def __init__(
        self,
        spec: JudgeSpec,
        *,
        address: str | None = None,
        workers: int | None = None,
        per_worker: int = 1,
        uses_model: bool = False,
        per_second: float | None = None,
    ) -> None:
        self.spec = spec
        self.address = address
        self.workers = workers
        self.per_worker = per_worker
        self.uses_model = uses_model
        self.per_second = per_second
        self.pool: WorkerPool | None = None
        self._started = False

    def __enter__(self) -> RayExecutor:
        self._started = connect(self.address)
        import ray

        try:
            cpus = cluster_cpus()
            workers = self.workers or max(1, int(cpus))
            limiter = None
            if self.uses_model:
                actor = ray.remote(CallLimiter).options(num_cpus=0, max_concurrency=100_000)
                limiter = actor.remote(self.per_second)
            self.pool = WorkerPool(
                self.spec,
                workers=workers,
                per_worker=self.per_worker,
                cpus=min(1.0, cpus / workers),
                limiter=limiter,
            )
        except BaseException:
            self._shutdown()
            raise
        return self

    def judges(self, evaluators: dict[str, Evaluator]) -> dict[str, Any]:
        """Start the workers (each builds the judges; theirs must be ``evaluators``) and give
        the driver's judges as the run calls them (:class:`RemoteJudge`).

        Raises:
            ConfigError: a worker could not build the judges, or built other ones.
        """
        assert self.pool is not None, "RayExecutor used outside its with block"
        self.pool.start({name: judge.identity() for name, judge in evaluators.items()})
        return {name: RemoteJudge(name, judge, self.pool) for name, judge in evaluators.items()}

    @property
    def concurrency(self) -> int:
        """Items in flight at most (every worker's share)."""
        return self.pool.capacity if self.pool is not None else self.per_worker

    def __exit__(self, *_exc: object) -> None:
        self._shutdown()

    def _shutdown(self) -> None:
        if self.pool is not None:
            self.pool.close()
        if self._started:
            import ray

            ray.shutdown()
