"""Several worker processes behind one local host, as the Functions host runs FUNCTIONS_WORKER_PROCESS_COUNT
language workers (default 1, at most 10, as in Azure): one Python process is one GIL, so a CPU-bound
request holds every other request of that process; more processes use more cores.

The host binds its socket once, then forks the workers: each accepts connections on that same socket (the
kernel hands each connection to one of them), opens its own storage connections and runs the queue
triggers; the timer triggers run in the first worker only, as the Functions host fires a timer once per
app. The parent only supervises: a worker that dies is started again (as the host restarts a language
worker), SIGTERM/SIGINT stop them all, and a worker whose parent is gone (killed with SIGKILL) stops too,
so no orphan keeps serving the port."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable

WORKER_PROCESS_COUNT = "FUNCTIONS_WORKER_PROCESS_COUNT"
DEFAULT_WORKER_PROCESSES = 1
MAX_WORKER_PROCESSES = 10  # the Functions host's own limit for FUNCTIONS_WORKER_PROCESS_COUNT
RESTART_PAUSE_SECONDS = 1.0  # a worker that dies at once is not restarted in a tight loop


class WorkerCountError(ValueError):
    """FUNCTIONS_WORKER_PROCESS_COUNT is not a whole number from 1 to 10."""


def worker_process_count(environ: dict[str, str] | os._Environ[str]) -> int:
    text = environ.get(WORKER_PROCESS_COUNT, "").strip()
    if not text:
        return DEFAULT_WORKER_PROCESSES
    if not text.isdigit() or not 1 <= int(text) <= MAX_WORKER_PROCESSES:
        raise WorkerCountError(f"{WORKER_PROCESS_COUNT} must be a whole number from 1 to {MAX_WORKER_PROCESSES}")
    return int(text)


def _exit_when_parent_goes(parent_alive: int) -> None:
    """In a worker: end the process when the supervisor's end of the pipe closes (the supervisor died,
    however it died: the kernel closes its descriptors)."""

    def watch() -> None:
        try:
            os.read(parent_alive, 1)  # blocks until EOF: nothing is ever written
        finally:
            os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def supervise(count: int, serve: Callable[[int], int]) -> int:
    """Fork `count` workers, each running serve(its index), and keep them running until SIGTERM or SIGINT."""
    alive_read, alive_write = os.pipe()
    workers: dict[int, int] = {}  # pid -> index
    stopping = threading.Event()

    def start(index: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(alive_write)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _exit_when_parent_goes(alive_read)
            code = 1
            try:
                code = serve(index)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        workers[pid] = index

    def stop(signum, frame) -> None:
        stopping.set()
        for pid in list(workers):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for index in range(count):
        start(index)
    while workers:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        index = workers.pop(pid, None)
        if index is None or stopping.is_set():
            continue
        print(
            f"Worker process {index} (pid {pid}) ended ({_how(status)}); starting it again.",
            file=sys.stderr,
            flush=True,
        )
        time.sleep(RESTART_PAUSE_SECONDS)
        if not stopping.is_set():
            start(index)
    return 0


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"
