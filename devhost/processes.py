"""Small helpers for the processes the local host, the tests, the benchmarks and the load run start."""

from __future__ import annotations

import contextlib
import http.client
import socket
import subprocess
import time
from collections.abc import Callable


def free_port() -> int:
    """A loopback port free right now (another process may still take it before it is bound)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(process: subprocess.Popen, timeout: float = 10) -> None:
    """Terminate, then kill if it does not exit in time."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)


def wait_until_serving(
    process: subprocess.Popen, port: int, path: str, name: str, log: Callable[[], str], timeout: float = 30
) -> None:
    """Wait until GET path on the loopback port answers 200; RuntimeError with the process's log if it
    exits first ("NAME exited") or does not answer in time ("NAME did not start")."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited:\n{log()}")
        with contextlib.suppress(OSError):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            try:
                connection.request("GET", path)
                if connection.getresponse().status == 200:
                    return
            finally:
                connection.close()
        time.sleep(0.1)
    raise RuntimeError(f"{name} did not start:\n{log()}")
