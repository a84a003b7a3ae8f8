"""Small helpers for the processes the local host, the tests, the benchmarks and the load run start."""

from __future__ import annotations

import socket
import subprocess


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
