"""The writers of one SQLite file take turns: first on a lock of the process, then on a lock between processes.

SQLite's own lock is what keeps a write whole, and it stays so; these locks only decide who asks it next, so
that a writer never waits in SQLite's busy handler, which sleeps up to 100 ms at a time and wakes long after
the commit it waited for (decisions 0128, 0129).

- Threads of a process queue on a `threading.Lock` per file (decision 0128).
- Processes (the host's worker processes, the hq command line beside a running host) take an exclusive
  `flock` on a sidecar file beside the database, `<database>-writer`: the kernel lets it go when its holder
  dies, even by SIGKILL. Not on the database file itself: on BSD and macOS flock and SQLite's fcntl locks may
  meet. A blocking flock has no timeout, so it is tried without blocking, with pauses growing to 1 ms; only
  one thread of a process tries, the others wait on the process's lock.
- One open file description per file and process: a forked child closes what it inherited (its flock would be
  the parent's lock, taken at once while the parent holds it) and opens its own.
- Where there is no flock (Windows, some network file systems), writers of several processes meet in
  SQLite's busy handler as before; said once in the log.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from core.ports import BackendUnavailable

fcntl: Any
try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

log = logging.getLogger("pos.sqlite")

# The pause between two tries of the flock grows from the first to the last: a writer of another process
# learns of a commit within about a millisecond, and a long hold costs a thousand tries a second.
FIRST_PAUSE_S = 0.000_05
LAST_PAUSE_S = 0.001
# flock's answers that mean "not here" rather than "held": the file system does not lock.
_NO_FLOCK = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}


class _Locks:
    """This process's locks, per resolved database path: a thread lock and the sidecar's descriptor (None
    where processes cannot lock it and fall back on SQLite's busy handler)."""

    def __init__(self) -> None:
        self.guard = threading.Lock()
        self.threads: dict[Path, threading.Lock] = {}
        self.sidecars: dict[Path, int | None] = {}
        self.fallback_said = False

    def thread_lock(self, path: Path) -> threading.Lock:
        lock = self.threads.get(path)  # nearly always there: read without the guard
        if lock is not None:
            return lock
        with self.guard:
            return self.threads.setdefault(path, threading.Lock())

    def sidecar(self, path: Path) -> int | None:
        """The descriptor to flock, opened once per process; called under the path's thread lock."""
        if path in self.sidecars:
            return self.sidecars[path]
        descriptor = _open_sidecar(path)
        with self.guard:
            self.sidecars[path] = descriptor
        return descriptor

    def forget_unlockable(self, path: Path, error: OSError) -> None:
        with self.guard:
            descriptor = self.sidecars.get(path)
            self.sidecars[path] = None
        if descriptor is not None:
            os.close(descriptor)
        self.say_fallback(path, f"flock failed: {error.strerror}")

    def say_fallback(self, path: Path, why: str) -> None:
        """Once a process: the reason is the platform's or the file system's, the same for every file."""
        if not self.fallback_said:
            self.fallback_said = True
            log.warning("SQLite writers of several processes take turns in SQLite's busy handler: %s (%s)", why, path)

    def after_fork_in_child(self) -> None:
        """A thread of the parent could have held any of these; the child has no such thread to let them go.
        Closing the inherited descriptors leaves the parent's flock as it is (the parent still has them)."""
        for descriptor in self.sidecars.values():
            if descriptor is not None:
                try:
                    os.close(descriptor)
                except OSError:
                    pass
        self.guard = threading.Lock()
        self.threads = {}
        self.sidecars = {}


_locks = _Locks()
os.register_at_fork(after_in_child=_locks.after_fork_in_child)


def thread_lock(path: Path) -> threading.Lock:
    """The lock of this process for writers to the database at `path` (resolved)."""
    return _locks.thread_lock(path)


@contextmanager
def writers_turn(path: Path, timeout_ms: int) -> Iterator[int | None]:
    """Hold the turn to write the database at `path` (resolved) among threads and processes, or raise
    BackendUnavailable once `timeout_ms` have passed waiting at the two locks together, as SQLite's busy
    timeout would. Yields the milliseconds left of `timeout_ms` for SQLite's own busy handler, or None where the
    turn came at once: a writer waits `timeout_ms` in all, not at each lock."""
    threads = _locks.thread_lock(path)
    deadline = None  # set at the first wait: most turns come at once
    if not threads.acquire(blocking=False):
        deadline = time.monotonic() + timeout_ms / 1000
        if not threads.acquire(timeout=timeout_ms / 1000):
            raise BackendUnavailable("database is busy: another write of this process held it too long")
    try:
        descriptor, deadline = _take_flock(path, timeout_ms, deadline)
        try:
            yield None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
        finally:
            if descriptor is not None:
                fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        threads.release()


def _take_flock(path: Path, timeout_ms: int, deadline: float | None) -> tuple[int | None, float | None]:
    """The sidecar's descriptor, exclusively locked (None where processes cannot lock it), and the deadline
    of the wait: the one given, else set at the first refusal, else None (the turn came at once)."""
    descriptor = _locks.sidecar(path)
    if descriptor is None:
        return None, deadline
    pause = FIRST_PAUSE_S
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return descriptor, deadline
        except OSError as error:
            if error.errno in _NO_FLOCK:
                _locks.forget_unlockable(path, error)
                return None, deadline
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise BackendUnavailable(f"database is unavailable: its writer lock failed: {error}") from error
        if deadline is None:
            deadline = time.monotonic() + timeout_ms / 1000
        elif time.monotonic() >= deadline:
            raise BackendUnavailable("database is busy: a write of another process held it too long")
        time.sleep(pause)
        pause = min(2 * pause, LAST_PAUSE_S)


def _open_sidecar(path: Path) -> int | None:
    if fcntl is None:
        _locks.say_fallback(path, "this platform has no flock")
        return None
    sidecar = path.with_name(path.name + "-writer")
    try:
        return os.open(sidecar, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as error:  # SQLite's lock still keeps writes whole: better queue there than refuse
        _locks.say_fallback(path, f"cannot open {sidecar.name}: {error.strerror}")
        return None
