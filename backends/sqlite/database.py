"""One SQLite database file in WAL mode, shared by threads and processes.

Each thread gets its own connection. Writes run in `BEGIN IMMEDIATE` transactions so that
concurrent writers (threads of the local host, the hq command line, queue workers) queue up on the
database lock instead of failing half-way; readers never block in WAL mode. Within one process, writers
queue on a lock of the process first, then processes on a flock beside the file (`writer_lock.py`): SQLite's
busy handler waits by sleeping (up to 100 ms at a time), so a writer that found the database locked slept on
past the commit it waited for, and four clients' batches waited up to a second (decisions 0128, 0129).

Checkpoints (copying the write-ahead log into the database file) run in a thread of their own after
writes (`_Checkpointer`), not inside the commit that happens to cross SQLite's threshold: for a 500-record
batch that was ~13 ms on every second request (decision 0061).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from backends.sqlite.writer_lock import writers_turn
from core.ports import BackendUnavailable

BUSY_TIMEOUT_MS = 30_000
# The page size of a new database file (SQLite's default is 4 KiB): a 500-record batch then writes a
# quarter as many pages, and its store took about a fifth less CPU, its commit half (decision 0120). A
# database made before keeps its page size: in WAL mode SQLite changes it only through a VACUUM outside WAL.
PAGE_BYTES = 16_384
# A commit still checkpoints by itself past this many pages, about 40 MB (SQLite's default is 1,000): only
# when the checkpoint thread cannot keep up, or has not run (another process, such as hq, writes alone).
AUTOCHECKPOINT_PAGES = 2_500
# Each connection's page cache, in KiB (SQLite's default is 2,000: fewer pages than one 500-record batch
# writes, ~550). Past it, a batch into a busy store-day spills and reads pages again: at a store-day's 21st
# batch with random trade_record_ids the store's CPU fell from 32 to 18 ms with 8 MiB or more
# (decision 0061). Pages are allocated as they are read, up to this.
CACHE_KIB = 16_000


class SqliteDatabase:
    def __init__(self, path: Path, schema: str) -> None:
        self.path = path
        self._writers = path.resolve()
        self._local = threading.local()
        self._checkpointer = _Checkpointer(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # executescript manages its own transaction; every statement is IF NOT EXISTS.
            self._connection().executescript(schema)
        except (OSError, sqlite3.Error) as error:
            raise BackendUnavailable(f"cannot open the database {path}: {error}") from error

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            connection.execute(f"PRAGMA page_size={PAGE_BYTES}")  # before WAL: only a new file takes it
            _into_wal(connection)
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            connection.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")
            connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            connection.row_factory = sqlite3.Row
            self._local.connection = connection
        return connection

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        try:
            yield self._connection()
        except sqlite3.OperationalError as error:
            raise BackendUnavailable(f"database error: {error}") from error

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """Several reads that see one state of the database: a read transaction (WAL keeps its snapshot
        until it ends, while writers go on)."""
        connection = self._connection()
        try:
            connection.execute("BEGIN")
            try:
                yield connection
            finally:
                connection.execute("COMMIT")
        except sqlite3.OperationalError as error:
            raise BackendUnavailable(f"database error: {error}") from error

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One atomic transaction: everything inside commits together or not at all."""
        connection = self._connection()
        with writers_turn(self._writers, BUSY_TIMEOUT_MS) as left_ms:
            try:
                _begin_immediate(connection, left_ms)
            except sqlite3.OperationalError as error:
                raise BackendUnavailable(f"database is busy or unavailable: {error}") from error
            try:
                yield connection
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            else:
                connection.execute("COMMIT")
        self._checkpointer.written()


def _begin_immediate(connection: sqlite3.Connection, left_ms: int | None) -> None:
    """BEGIN IMMEDIATE; after a wait for the writers' turn, SQLite's busy handler has only what is left of
    BUSY_TIMEOUT_MS (a writer of another program, which takes no turn, may still hold the file)."""
    if left_ms is None:
        connection.execute("BEGIN IMMEDIATE")
        return
    connection.execute(f"PRAGMA busy_timeout={left_ms}")
    try:
        connection.execute("BEGIN IMMEDIATE")
    finally:
        connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


def _into_wal(connection: sqlite3.Connection) -> None:
    """Put the connection's file in WAL mode (once a file is, a no-op). SQLite answers "database is locked" at
    once, without its busy handler, when another process switches the same new file at that moment (instances
    starting together on an empty data folder): tried again until BUSY_TIMEOUT_MS."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.001
    mode = "locked"
    while True:
        try:
            mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode == "wal":
                return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error):
                raise
        if time.monotonic() >= deadline:
            raise sqlite3.OperationalError(f"the database file could not be put in WAL mode (it stayed {mode})")
        time.sleep(pause)
        pause = min(2 * pause, 0.05)


class _Checkpointer:
    """Checkpoints the database after writes, in a thread of its own, so that no request waits for one.

    PASSIVE: it copies what no reader still needs and never blocks readers or writers; the next one copies
    the rest. Writes that come while it runs are taken by its next round. The thread starts with the first
    write of a process (a forked worker starts its own, with nothing of its parent's) and ends after
    IDLE_SECONDS without writes."""

    IDLE_SECONDS = 10.0

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pid = 0

    def written(self) -> None:
        if self._pid != os.getpid():
            self._pid = os.getpid()
            self._lock = threading.Lock()
            self._wanted = threading.Event()
            self._thread: threading.Thread | None = None
        self._wanted.set()
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        try:
            connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.Error:  # the next write starts another; meanwhile commits checkpoint past the limit
            with self._lock:
                self._thread = None
            return
        try:
            while True:
                with self._lock:  # it decides to end under the lock, so that a write never finds it ending
                    if not self._wanted.is_set():
                        self._thread = None
                        return
                    self._wanted.clear()
                try:
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    pass  # busy or gone: the next write asks again, and commits still checkpoint past the limit
                self._wanted.wait(self.IDLE_SECONDS)
        finally:
            connection.close()
