"""``--ray-address`` pointed at something that is not Ray (issue 35, item 6): Ray retries such an
address for minutes (5.5 minutes against a web server here), so the address is probed first —
Ray's GCS and client servers are gRPC, which answer an HTTP/2 preface with a SETTINGS frame —
and anything else is refused in one line within seconds. No Ray is needed for these tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from clinjudge.executors.ray_cluster import unreachable


@contextmanager
def listener(answer: Callable[[socket.socket], None]) -> Iterator[str]:
    """A loopback TCP server that treats each connection with ``answer``; yields HOST:PORT."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    done = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                answer(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        done.set()
        thread.join()
        server.close()


def http_server(conn: socket.socket) -> None:
    conn.recv(1024)
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def grpc_like(conn: socket.socket) -> None:
    conn.recv(1024)
    conn.sendall(bytes([0, 0, 6, 4, 0, 0, 0, 0, 0]) + bytes([0, 3, 0, 0, 0, 100]))


def silent(conn: socket.socket) -> None:
    time.sleep(1.5)


def closing(conn: socket.socket) -> None:
    conn.recv(1024)


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_a_grpc_server_passes(scheme):
    with listener(grpc_like) as address:
        assert unreachable(scheme + address) is None


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (http_server, "another service listens there, not Ray (it answered 'HTTP/1.1 400 Bad"),
        (closing, "it closed the connection: not a Ray (gRPC) port"),
        (silent, "nothing answered within 0.5 s"),
    ],
)
def test_anything_else_is_refused_at_once(answer, reason):
    with listener(answer) as address:
        started = time.perf_counter()
        why = unreachable(address, timeout=0.5)
        assert why is not None and why.startswith(reason), why
        assert time.perf_counter() - started < 5


def test_nothing_listening_and_bad_addresses():
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    assert "ConnectionRefusedError" in unreachable(f"127.0.0.1:{port}")
    assert unreachable("no-port") == "expected auto, HOST:PORT or ray://HOST:PORT"


def test_with_tls_only_the_connection_is_checked(monkeypatch):
    monkeypatch.setenv("RAY_USE_TLS", "1")
    with listener(http_server) as address:
        assert unreachable(address) is None
