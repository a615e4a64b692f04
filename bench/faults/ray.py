"""``--ray-address`` pointed at a service that is not Ray (issue 35, item 6): one line within
15 s, not minutes of Ray's retries."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from faults import Attack, Outcome, clinjudge, last_line


def _not_ray(work: Path, scheme: str) -> Outcome:
    web = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=work,
    )
    try:
        port = web.stdout.readline().split("port ")[1].split(" ")[0]
        started = time.perf_counter()
        try:
            done = clinjudge(
                ["compare", "aci-demo", "--limit", "1", "--judges", "lexical", "--executor",
                 "ray", "--ray-address", f"{scheme}127.0.0.1:{port}", "--out", str(work / "r")],
                timeout=90,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return Outcome(False, "no error within 90 s (Ray retries the address)")
        seconds = time.perf_counter() - started
        said = last_line(done.stderr)
        held = done.returncode == 2 and seconds <= 15 and said.startswith("error:")
        return Outcome(held, f"exit {done.returncode} after {seconds:.1f} s: {said[:90]}")
    finally:
        web.kill()
        web.wait()


def gcs_address_at_a_web_server(work: Path) -> Outcome:
    return _not_ray(work, "")


def client_address_at_a_web_server(work: Path) -> Outcome:
    return _not_ray(work, "ray://")


ATTACKS = [
    Attack(6, "ray: --ray-address HOST:PORT of a web server", gcs_address_at_a_web_server),
    Attack(6, "ray: --ray-address ray://HOST:PORT of a web server", client_address_at_a_web_server),
]
